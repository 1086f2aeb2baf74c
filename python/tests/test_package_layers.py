"""The worker's subpackages import only downward, and no module imports itself back through others.

Read from source (the AST), so nothing is imported. Imports under ``if TYPE_CHECKING:`` are for the checker only and
do not count, as ``import type`` does not in the TypeScript lint. Imports inside functions do count: they are the
same dependency, only later.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ipython_mcp_worker"

# Bottom first: a subpackage may import itself and the ones before it. The top-level modules (worker.py, ops.py,
# __main__.py) compose them all, and no subpackage imports a top-level module.
LAYERS = ("protocol", "inspection", "schema", "values", "capture", "ipc", "namespace", "registry", "state", "shell",
          "code_mode")
# Hosts sit above the top-level modules: they serve the worker somewhere other than its own process (``kernel``:
# inside a Jupyter kernel) and may import anything, but nothing in the package imports them.
HOSTS = ("kernel",)


def _module_name(path: Path) -> str:
    parts = ["ipython_mcp_worker", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The worker modules ``path`` imports at run time (absolute names)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:
                    candidate = f"{target}.{alias.name}"
                    found.add(candidate if candidate in modules else target)
            elif isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return {target for target in found if target in modules and target != name}


def _graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(path) for path in paths}
    return {_module_name(path): _imports(path, modules) for path in paths}


def _layer(module: str) -> int | None:
    """The index of the module's subpackage in LAYERS; None for a top-level module."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_subpackage_has_a_layer() -> None:
    subpackages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert subpackages == set(LAYERS) | set(HOSTS)


def test_nothing_imports_a_host() -> None:
    def host_of(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[1] in HOSTS else None

    inward = [f"{module} -> {target}" for module, targets in _graph().items() for target in targets
              if host_of(target) is not None and host_of(target) != host_of(module)]
    assert inward == []


def test_subpackages_import_only_downward() -> None:
    upward = []
    for module, targets in _graph().items():
        layer = _layer(module)
        if layer is None:
            continue  # a top-level module or a host: they compose the layers
        for target in targets:
            target_layer = _layer(target)
            if target_layer is None or target_layer > layer:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == "done":
            return
        if state.get(node) == "active":
            cycles.append([*trail[trail.index(node):], node])
            return
        state[node] = "active"
        for target in sorted(graph[node]):
            visit(target, [*trail, node])
        state[node] = "done"

    for node in sorted(graph):
        visit(node, [])
    assert cycles == []
