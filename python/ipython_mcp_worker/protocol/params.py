"""The one parameter checker of the worker's operations: every bad ``params`` is an ``invalid_arguments``.

Handlers first call ``require_dict`` with the keys they accept (an unknown or missing key is refused before any
work), then read each value through one of the typed getters below. The parent validates arguments against the
tools' input schemas before they get here, so these messages mostly reach a parent with a bug.
"""

from __future__ import annotations

from typing import Any

from .errors import OpError

Params = dict[str, Any]


def require_dict(params: Any, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> Params:
    """``params`` as a dict holding only ``allowed`` keys and every ``required`` one."""
    if type(params) is not dict:
        raise OpError("invalid_arguments", "params must be an object")
    unknown = sorted(repr(key) for key in params if key not in allowed)
    if unknown:
        raise OpError("invalid_arguments", f"unknown parameter(s): {', '.join(unknown)}")
    missing = [key for key in required if key not in params]
    if missing:
        raise OpError("invalid_arguments", f"missing parameter(s): {', '.join(missing)}")
    return params


def require_str(params: Params, key: str) -> str:
    value = params.get(key)
    if type(value) is not str:
        raise OpError("invalid_arguments", f"{key} must be a string")
    return value


def optional_str(params: Params, key: str) -> str | None:
    value = params.get(key)
    if value is not None and type(value) is not str:
        raise OpError("invalid_arguments", f"{key} must be a string or null")
    return value


def optional_int(params: Params, key: str) -> int | None:
    value = params.get(key)
    if value is not None and type(value) is not int:
        raise OpError("invalid_arguments", f"{key} must be an integer or null")
    return value


def require_str_list(params: Params, key: str) -> list[str]:
    """The unique strings of a list, first occurrence first."""
    value: Any = params.get(key)
    if type(value) not in (list, tuple) or any(type(item) is not str for item in value):
        raise OpError("invalid_arguments", f"{key} must be a list of strings")
    return list(dict.fromkeys(value))


def require_name(params: Params) -> str:
    name = params.get("name")
    if type(name) is not str or not all(part.isidentifier() for part in name.split(".")):
        raise OpError("invalid_arguments", "name must be a Python identifier or a dotted path of identifiers")
    return name
