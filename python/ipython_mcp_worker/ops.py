"""Wires the namespace, registry and tool-bridge operations into the worker's handler table."""

from __future__ import annotations

import sys
from typing import Any

from .bridge import install as install_bridge
from .errors import OpError
from .namespace import Namespace
from .registry import Registry


class Extensions:
    """Everything the worker serves beyond execute and health, built once per worker."""

    def __init__(self, worker: Any, configure: dict[str, Any]) -> None:
        self.worker = worker
        library_paths = _string_list(configure.get("library_paths"), "library_paths")
        for path in reversed(library_paths):
            if path not in sys.path:
                sys.path.insert(0, path)
        self.namespace = Namespace(
            worker.shell,
            worker.limits,
            _string_list(configure.get("preload_modules"), "preload_modules"),
            _string_map(configure.get("module_aliases"), "module_aliases"),
        )
        self.namespace.bind_configured_modules()
        namespace = self.namespace
        self.registry = Registry(
            worker.shell.user_ns,
            worker.limits,
            namespace.is_protected,
            frozenset(_string_list(configure.get("reserved_tool_names"), "reserved_tool_names")),
        )
        registry = self.registry
        # Removing a backing symbol invalidates its registration; reset drops the whole catalog.
        namespace.on_names_removed = registry.invalidate_names
        worker.handlers.update({
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
        })
        # Code Mode: define_tools and run_code (bridge.py).
        self.bridge = install_bridge(worker)

    def reset(self, params: dict[str, Any]) -> dict[str, Any]:
        result = self.namespace.reset(params)
        self.registry.clear()
        return result

    def protected_names(self) -> frozenset[str]:
        return self.namespace.protected_names()


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


def install(worker: Any, configure: dict[str, Any]) -> Extensions:
    return Extensions(worker, configure)
