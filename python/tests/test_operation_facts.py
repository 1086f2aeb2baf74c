"""Each operation's facts come from one generated table (constants.OPERATION_FACTS, from
fixtures/protocol/operation-facts.json): the worker keeps no set, list or comparison of operation names of its own,
and its handler table serves exactly the operations the table describes."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from ipython_mcp_worker.protocol.constants import OPERATION_FACTS, OperationFacts

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "python" / "ipython_mcp_worker"
FIXTURE = json.loads((ROOT / "fixtures" / "protocol" / "operation-facts.json").read_text("utf-8"))
OPERATIONS = frozenset(FIXTURE["operations"])


def _handler_table_keys() -> list[str]:
    """The operation names of ops.py's handler table (the dict bound to ``handlers``)."""
    tree = ast.parse((WORKER / "ops.py").read_text("utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "handlers"
                and isinstance(node.value, ast.Dict)):
            return [key.value for key in node.value.keys if isinstance(key, ast.Constant)]
    raise AssertionError("ops.py has no `handlers: dict[...] = {...}` table")


def _is_handler_table(node: ast.AST, path: Path) -> bool:
    return path.name == "ops.py" and isinstance(node, ast.Dict) and sorted(
        key.value for key in node.keys if isinstance(key, ast.Constant)) == sorted(OPERATIONS)


def _named_operations(node: ast.AST) -> list[str]:
    """The operation names a literal collection (set, list, tuple, dict keys) holds."""
    items: list[ast.expr | None] = []
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        items = list(node.elts)
    elif isinstance(node, ast.Dict):
        items = list(node.keys)
    return [item.value for item in items
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in OPERATIONS]


def name_keyed_operation_code(source: str, path: Path) -> list[str]:
    """Where ``source`` decides something by an operation's name: a comparison with an operation name (``op ==
    "execute"``, ``op in {...}``), or a collection literal naming two or more operations; the handler table aside."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                if isinstance(operand, ast.Constant) and operand.value in OPERATIONS:
                    found.append(f"{path.name}:{node.lineno}: compares with {operand.value!r}")
                elif _named_operations(operand):
                    found.append(f"{path.name}:{node.lineno}: tests membership in a literal of operation names")
        elif not _is_handler_table(node, path) and len(_named_operations(node)) >= 2:
            found.append(f"{path.name}:{getattr(node, 'lineno', 0)}: a literal naming operations {_named_operations(node)}")
    return found


def test_the_fixture_and_the_generated_table_agree() -> None:
    names = list(FIXTURE["facts"])
    assert list(OPERATION_FACTS) == list(FIXTURE["operations"])
    for op, facts in OPERATION_FACTS.items():
        assert isinstance(facts, OperationFacts)
        assert {name: getattr(facts, name) for name in names} == FIXTURE["operations"][op], op


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_every_operation_states_every_fact(op: str) -> None:
    for name, fact in FIXTURE["facts"].items():
        assert FIXTURE["operations"][op].get(name, object()) in fact["values"], (op, name)


def test_the_handler_table_serves_exactly_the_described_operations() -> None:
    keys = _handler_table_keys()
    assert len(keys) == len(set(keys))
    assert sorted(keys) == sorted(OPERATION_FACTS)


def test_no_name_keyed_operation_set_is_left_in_the_worker() -> None:
    found = [hit for path in sorted(WORKER.rglob("*.py")) if path.name != "constants.py"
             for hit in name_keyed_operation_code(path.read_text("utf-8"), path)]
    assert found == []


@pytest.mark.parametrize("source", [
    'spill = op == "execute"',
    'if op not in {"health", "discover"}: pass',
    '_NO_RECONCILE = frozenset({"health", "discover"})',
    'CHANGES = ("register_tool", "unregister_tool", "reset")',
])
def test_the_check_finds_name_keyed_code(source: str) -> None:
    assert name_keyed_operation_code(source, Path("worker.py")) != []


def test_the_facts_the_worker_acts_on() -> None:
    # health touches nothing and discover is the reconciliation: the worker reconciles after every other one.
    assert sorted(op for op, facts in OPERATION_FACTS.items() if not facts.worker_reconciles) == ["discover", "health"]
    # Only the registry operations carry the revision on an empty registry; remove only makes registrations stale.
    assert sorted(op for op, facts in OPERATION_FACTS.items() if facts.catalog_effect == "changes") == [
        "register_tool", "reset", "unregister_tool"]
    assert OPERATION_FACTS["remove"].catalog_effect == "may-change"
    assert [op for op, facts in OPERATION_FACTS.items() if facts.spills_streams] == ["execute"]
