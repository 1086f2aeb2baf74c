"""What the registry keeps per dynamic tool, and the small text helpers its messages use (beside
dynamic_tools.py, whose docstring states the reconciliation rules)."""

from __future__ import annotations

import copy
import functools
import inspect
import re
from dataclasses import dataclass
from typing import Any

from ..schema.tool_schema import CallableSchema

TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
SHOWN_CHARS = 80
_MAX_UNWRAP = 100


def show(text: str) -> str:
    if len(text) > SHOWN_CHARS:
        return repr(text[:SHOWN_CHARS]) + "…"
    return repr(text)


def clip(text: str) -> str:
    return text[:SHOWN_CHARS]


def description_of(obj: Any) -> str:
    """The cleaned docstring, looking through ``functools.partial`` (whose own doc describes partial)."""
    target = obj
    for _ in range(_MAX_UNWRAP):
        if not isinstance(target, functools.partial) or "__doc__" in getattr(target, "__dict__", {}):
            break
        target = target.func
    try:
        doc = inspect.getdoc(target)
    except Exception:  # noqa: BLE001 - user __doc__ property
        return ""
    return doc if isinstance(doc, str) else ""


@dataclass
class Registration:
    tool_name: str
    name: str
    description: str
    description_truncated: bool
    revision: int
    obj: Any
    token: tuple[Any, ...]
    analysis: CallableSchema
    stale: bool = False

    def to_wire(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "name": self.name,
            "description": self.description,
            "description_truncated": self.description_truncated,
            "input_schema": copy.deepcopy(self.analysis.schema),
            "fingerprint": self.analysis.fingerprint,
            "revision": self.revision,
        }


@dataclass
class Adoption:
    obj: Any
    token: tuple[Any, ...]
    analysis: CallableSchema


FRESH = "fresh"
STALE = "stale"
