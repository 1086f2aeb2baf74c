"""The one parameter checker of the worker's operations: every bad ``params`` is an ``invalid_arguments``."""

from __future__ import annotations

from typing import Any

from .errors import OpError


def require_dict(params: Any, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
    if type(params) is not dict:
        raise OpError("invalid_arguments", "params must be an object")
    unknown = sorted(repr(key) for key in params if key not in allowed)
    if unknown:
        raise OpError("invalid_arguments", f"unknown parameter(s): {', '.join(unknown)}")
    missing = [key for key in required if key not in params]
    if missing:
        raise OpError("invalid_arguments", f"missing parameter(s): {', '.join(missing)}")
    return params


def require_str_list(params: dict, key: str) -> list[str]:
    value = params[key]
    if type(value) not in (list, tuple) or any(type(item) is not str for item in value):
        raise OpError("invalid_arguments", f"{key} must be a list of strings")
    return list(dict.fromkeys(value))  # unique, first occurrence wins


def require_name(params: dict) -> str:
    name = params["name"]
    if type(name) is not str or not all(part.isidentifier() for part in name.split(".")):
        raise OpError("invalid_arguments", "name must be a Python identifier or a dotted path of identifiers")
    return name
