"""The worker's one handler table: every operation, built once per worker, and the catalog revision rule.

``Operations`` builds the namespace, the registry and Code Mode's tool bridge from the configure message and
maps each operation name to its handler (``execute`` and ``health`` included). The table is read-only after
construction; worker.py only looks operations up in it. What an operation does besides answering (whether
the worker reconciles after it, what it does to the catalog, whether it spills) is its entry in the generated
``OPERATION_FACTS`` (fixtures/protocol/operation-facts.json), which the parent reads too; nothing here or in
worker.py decides it by an operation's name.

Catalog revision (docs/protocol.md, "catalog_revision"): after an operation, ``catalog_revision`` says the
registry's revision the response should carry, or None. Operations may redefine or delete the callables
behind dynamic tools, so while the registry holds a registration, every operation whose facts say
``worker_reconciles`` is followed by a reconciliation (what ``discover`` does first), and the parent only needs
to ask for the catalog when the revision it sees differs from its snapshot. A ``discover`` right after such an
operation finds the registry already reconciled and does not reconcile it again, so a parent that still asks
after every operation pays for one reconciliation. With an empty registry nothing is reconciled and nothing is
added, except after the operations whose ``catalog_effect`` is ``changes`` (they edit the registry themselves).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .code_mode.bridge import ToolBridge
from .namespace.operations import NamespaceOperations
from .protocol.constants import OPERATION_FACTS
from .protocol.context import Handler, WorkerContext
from .protocol.errors import OpError
from .registry.dynamic_tools import Registry
from .shell.execute import execute as execute_cell
from .values.failure import trust_library_paths


class Operations:
    """Everything the worker serves, built once per worker."""

    def __init__(self, context: WorkerContext, configure: dict[str, Any]) -> None:
        self._context = context
        library_paths = _string_list(configure.get("library_paths"), "library_paths")
        for path in reversed(library_paths):
            if path not in sys.path:
                sys.path.insert(0, path)
        trust_library_paths(library_paths)  # their traceback frames stay whole (failure.py)
        self.namespace = NamespaceOperations(
            context.shell,
            context.limits,
            _string_list(configure.get("preload_modules"), "preload_modules"),
            _string_map(configure.get("module_aliases"), "module_aliases"),
        )
        self.namespace.bind_configured_modules()
        namespace = self.namespace
        self.registry = Registry(
            context.shell.user_ns,
            context.limits,
            namespace.is_protected,
            frozenset(_string_list(configure.get("reserved_tool_names"), "reserved_tool_names")),
        )
        registry = self.registry
        # Removing a backing symbol invalidates its registration; reset drops the whole catalog.
        namespace.on_names_removed = registry.invalidate_names
        # Code Mode: define_tools and run_code.
        self.bridge = ToolBridge(context)
        # --state FILE: snapshots of the namespace (state/snapshot.py); None without it.
        self.state = _state_store(configure.get("state"), context, namespace, registry)
        handlers: dict[str, Handler] = {
            "execute": self.execute,
            "health": self.health,
            "list": namespace.list,
            "search": namespace.search,
            "inspect": namespace.inspect,
            "call_function": namespace.call_function,
            "reload": namespace.reload,
            "remove": namespace.remove,
            "reset": self.reset,
            "register_tool": registry.register,
            "unregister_tool": registry.unregister,
            "discover": registry.discover,
            "call_tool": registry.call,
            "define_tools": self.bridge.define_tools,
            "run_code": self.bridge.run_code,
        }
        if handlers.keys() != OPERATION_FACTS.keys():
            raise RuntimeError("the handler table and OPERATION_FACTS name different operations")
        self.handlers: Mapping[str, Handler] = MappingProxyType(handlers)

    def handler(self, op: str) -> Handler | None:
        """The handler of ``op``, or None for an unknown operation. Every operation the worker reconciles after
        may run user code, so it makes the registry's last reconciliation out of date before it starts."""
        facts = OPERATION_FACTS.get(op)
        if facts is None:
            return None
        if facts.worker_reconciles:
            self.registry.unsettle()
        return self.handlers[op]

    def execute(self, params: dict[str, Any]) -> dict[str, Any]:
        return execute_cell(self._context.owner, params)

    def health(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"pid": os.getpid(), "execution_count": self._context.shell.execution_count - 1}

    def reset(self, params: dict[str, Any]) -> dict[str, Any]:
        result = self.namespace.reset(params)
        self.registry.clear()
        return result

    def catalog_revision(self, op: str) -> int | None:
        """The ``catalog_revision`` for the response to ``op`` (run just now), reconciling first; or None."""
        facts = OPERATION_FACTS.get(op)
        if facts is None or not facts.worker_reconciles:
            return None
        registry = self.registry
        if len(registry) == 0:
            # The no-tools hot path: no reconciliation, no field (unless op edited, or emptied, the registry itself).
            return registry.revision if facts.catalog_effect == "changes" else None
        return registry.reconcile_all()

    def protected_names(self) -> frozenset[str]:
        return self.namespace.protected_names()


def _state_store(wire: Any, context: WorkerContext, namespace: NamespaceOperations, registry: Registry) -> Any:
    if wire is None:
        return None
    if not isinstance(wire, dict) or not isinstance(wire.get("path"), str):
        raise OpError("startup_failed", "configure.state must be an object with a string path")
    from .state.snapshot import DILL_HINT, StateConfig, StateStore

    try:
        import dill  # type: ignore[import-untyped,unused-ignore]  # noqa: F401 - present, or a clear start-up failure
    except ImportError:
        raise OpError("startup_failed", f"--state needs the dill package in {sys.executable}: {DILL_HINT}") from None
    return StateStore(StateConfig(wire), context.shell, namespace.user_names, namespace.is_protected, registry)


def _string_list(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise OpError("startup_failed", f"configure.{field} must be a list of strings")
    return list(value)


def _string_map(value: Any, field: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise OpError("startup_failed", f"configure.{field} must map strings to strings")
    return dict(value)
