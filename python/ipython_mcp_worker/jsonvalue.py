"""Bounded translation of live Python values into JSON values.

``to_json`` answers two questions at once: does the value have a JSON form at all, and what is that form
within the configured depth, item and character limits. A value without a JSON form raises ``NotJson``;
a value with one that exceeds a limit comes back cut, with ``truncated`` set.
"""

from __future__ import annotations

import itertools
import math
import reprlib
from typing import Any

from .limits import Limits


class NotJson(Exception):
    """The value (or something inside it) has no JSON form."""

    def __init__(self, path: str, type_name: str) -> None:
        super().__init__(f"value at {path} of type {type_name} has no JSON form")
        self.path = path
        self.type_name = type_name


_DEPTH_MARKER = "…"


class _Walker:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.truncated = False

    def walk(self, value: Any, depth: int, path: str) -> Any:
        # Exact types only: a subclass of str or dict may override behaviour we would run here.
        kind = type(value)
        if value is None or kind is bool:
            return value
        if kind is int:
            return value
        if kind is float:
            if math.isfinite(value):
                return value
            raise NotJson(path, "float")
        if kind is str:
            if len(value) > self.limits.max_text_chars:
                self.truncated = True
                return value[: self.limits.max_text_chars]
            return value
        if kind in (list, tuple):
            if depth >= self.limits.max_json_depth:
                self._check_all(value, path)
                self.truncated = True
                return _DEPTH_MARKER
            items = []
            for index, item in enumerate(value):
                if index >= self.limits.max_results:
                    self._check_all(value[index:], path)
                    self.truncated = True
                    break
                items.append(self.walk(item, depth + 1, f"{path}[{index}]"))
            return items
        if kind is dict:
            if depth >= self.limits.max_json_depth:
                self._check_all(value, path)
                self.truncated = True
                return _DEPTH_MARKER
            out: dict[str, Any] = {}
            for index, (key, item) in enumerate(value.items()):
                if type(key) is not str:
                    raise NotJson(f"{path} key", type(key).__name__)
                if index >= self.limits.max_results:
                    self.truncated = True
                    self._check_all(list(value.values())[index:], path)
                    break
                out[key] = self.walk(item, depth + 1, f"{path}.{key}")
            return out
        raise NotJson(path, kind.__qualname__)

    def _check_all(self, value: Any, path: str, budget: int = 10_000) -> None:
        """Confirm that a part we cut away still has a JSON form, within a visit budget."""
        stack = [value]
        seen = 0
        while stack and seen < budget:
            item = stack.pop()
            seen += 1
            kind = type(item)
            if item is None or kind in (bool, int, str):
                continue
            if kind is float:
                if not math.isfinite(item):
                    raise NotJson(path, "float")
                continue
            if kind in (list, tuple):
                stack.extend(item)
                continue
            if kind is dict:
                for key, sub in item.items():
                    if type(key) is not str:
                        raise NotJson(f"{path} key", type(key).__name__)
                    stack.append(sub)
                continue
            raise NotJson(path, kind.__qualname__)


def to_json(value: Any, limits: Limits) -> tuple[Any, bool]:
    """Return ``(json_value, truncated)`` or raise ``NotJson``. Recursion is bounded by the depth limit."""
    walker = _Walker(limits)
    result = walker.walk(value, 0, "$")
    return result, walker.truncated


def _quote_choice(text: str | bytes) -> bool:
    """Whether CPython's repr of this str/bytes uses double quotes (it has ' and no ")."""
    if type(text) is str:
        return "'" in text and '"' not in text
    return b"'" in text and b'"' not in text


def bounded_repr(value: Any, limit: int) -> tuple[str, bool]:
    """``repr(value)`` cut to ``limit`` characters; (text, truncated). Exceptions of ``__repr__`` propagate.

    For large built-in sequences, mappings and strings (exact types only) the repr of a prefix is taken: it has
    the same first ``limit`` characters as the full repr, without building a repr of millions of items.
    """
    kind = type(value)
    try:
        size = len(value) if kind in (str, bytes, list, tuple, dict) else -1
    except Exception:  # noqa: BLE001 - exact built-in types only; cannot happen
        size = -1
    if size > limit:
        if kind is dict:
            text = repr(dict(itertools.islice(value.items(), limit)))
        elif kind in (list, tuple):
            text = repr(value[:limit])
        else:
            prefix = value[:limit]
            text = repr(prefix) if _quote_choice(prefix) == _quote_choice(value) else repr(value)
        return text[:limit], True
    text = repr(value)
    if not isinstance(text, str):
        text = reprlib.repr(text)
    if len(text) > limit:
        return text[:limit], True
    return text, False


def safe_repr(value: Any, limit: int) -> tuple[str, bool]:
    """A bounded repr that survives a raising ``__repr__``; (text, truncated)."""
    try:
        return bounded_repr(value, limit)
    except BaseException as error:  # noqa: BLE001 - a user __repr__ may raise anything
        if isinstance(error, KeyboardInterrupt):
            raise
        try:
            type_name = type(value).__qualname__
        except Exception:  # noqa: BLE001
            type_name = "object"
        text = f"<{type_name} object; repr raised {type(error).__name__}>"
    if len(text) > limit:
        return text[:limit], True
    return text, False
