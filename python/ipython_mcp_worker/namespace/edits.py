"""Namespace operations ``reload``, ``remove`` and ``reset`` (beside operations.py, whose docstring states
the rules)."""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any

from ..protocol.params import require_dict, require_str_list
from ..values.failure import describe_exception
from .names import Names


def _discard_stale_bytecode(module: types.ModuleType) -> None:
    """Delete the module's ``.pyc`` when its source was written after it.

    A ``.pyc`` is validated by the source mtime in whole seconds and the size only, so an edit made within
    the same second that keeps the size would otherwise reload the stale bytecode.
    """
    spec = getattr(module, "__spec__", None)
    origin, cached = getattr(spec, "origin", None), getattr(spec, "cached", None)
    if type(origin) is not str or type(cached) is not str:
        return
    try:
        if os.stat(origin).st_mtime_ns >= os.stat(cached).st_mtime_ns:
            os.remove(cached)
    except OSError:
        pass


def _within_chars(names: list[str], budget: int) -> list[str]:
    """The longest prefix of ``names`` whose encoded form surely stays within ``budget`` bytes."""
    used = 0
    for index, name in enumerate(names):
        used += (len(name) if name.isascii() else 6 * len(name)) + 4  # quotes, comma; worst-case escapes
        if used > budget:
            return names[:index]
    return names


def reload_modules(names: Names, params: dict[str, Any]) -> dict[str, Any]:
    """Reload exactly the named, already imported modules and rebind user_ns names bound to them."""
    require_dict(params, ("modules",), ("modules",))
    modules = require_str_list(params, "modules")
    importlib.invalidate_caches()
    return {"results": [_reload_one(names, module) for module in modules]}

def _reload_one(names: Names, module_name: str) -> dict[str, Any]:
    old = sys.modules.get(module_name)
    if old is None or not issubclass(type(old), types.ModuleType):
        return {"module": module_name, "status": "not_imported", "bindings": []}
    namespace = names.shell.user_ns
    bindings = sorted(name for name, value in namespace.items() if value is old and type(name) is str)
    try:
        _discard_stale_bytecode(old)
        new = importlib.reload(old)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - module code may raise anything, SystemExit included
        type_name, message, _ = describe_exception(exc, names.limits.max_text_chars)
        error = {"type": type_name, "message": message}
        return {"module": module_name, "status": "failed", "bindings": [], "error": error}
    for name in bindings:
        namespace[name] = new
    return {"module": module_name, "status": "reloaded", "bindings": bindings}

def remove_names(names: Names, params: dict[str, Any]) -> dict[str, Any]:
    """Partition the unique requested names into removed / refused / unknown (each sorted)."""
    require_dict(params, ("names",), ("names",))
    requested = require_str_list(params, "names")
    removable = set(names.user_names())
    namespace = names.shell.user_ns
    removed, refused, unknown = [], [], []
    for name in requested:
        if name in removable:
            del namespace[name]
            removed.append(name)
        elif names.is_protected(name) or name in namespace:  # present but IPython's own binding
            refused.append(name)
        else:
            unknown.append(name)
    removed.sort()
    if removed:
        names.on_names_removed(list(removed))
    return {"removed": removed, "refused": sorted(refused), "unknown": sorted(unknown)}

def reset_names(names: Names, params: dict[str, Any]) -> dict[str, Any]:
    """Delete every unprotected user name, restore IPython's own bindings (``In``, ``get_ipython``...) and the
    configured module bindings. No shell.reset().

    ``removed`` lists the names sorted; a list too long for one IPC message (half the bound) is cut,
    with ``removed_truncated`` set; ``removed_count`` always counts every removed name.
    """
    require_dict(params, ())
    removed = names.user_names()
    namespace = names.shell.user_ns
    for name in removed:
        del namespace[name]
    try:
        if removed:
            names.on_names_removed(list(removed))
    finally:
        names.restore_runtime_bindings()
        names.bind_configured_modules()
    shown = _within_chars(removed, names.limits.max_ipc_message_bytes // 2)
    return {
        "removed": shown,
        "removed_count": len(removed),
        "removed_truncated": len(shown) < len(removed),
        "execution_count": names.shell.execution_count - 1,
    }
