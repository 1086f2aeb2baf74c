"""Bounded translation of live Python values into JSON values.

``to_json`` answers two questions at once: does the value have a JSON form at all, and what is that form
within the configured depth, item and character limits. A value without a JSON form raises ``NotJson``;
a value with one that exceeds a limit comes back cut, with ``truncated`` set.
"""

from __future__ import annotations

import itertools
import math
import reprlib
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from .limits import Limits


class NotJson(Exception):
    """The value (or something inside it) has no JSON form."""

    def __init__(self, path: str, type_name: str) -> None:
        super().__init__(f"value at {path} of type {type_name} has no JSON form")
        self.path = path
        self.type_name = type_name


_DEPTH_MARKER = "…"
# What the depth marker costs in compact JSON: its quotes and the three UTF-8 bytes of "…".
_DEPTH_MARKER_BYTES = 5
# Items of a cut-away part checked for a JSON form.
_CHECK_BUDGET = 10_000


@dataclass
class JsonCut:
    """What a bounded translation dropped, counted exactly where each cut was made.

    ``items``: list items and dict entries left out of containers that were cut (by ``max_results`` or the size
    budget), not counting what those items contained. ``chars``: characters cut from the ends of strings (by
    ``max_text_chars`` or the size budget). ``deep``: containers nested past ``max_json_depth`` that were
    replaced by the string "…". ``size``: whether the size budget ran out.
    """

    items: int = 0
    chars: int = 0
    deep: int = 0
    size: bool = False

    @property
    def any(self) -> bool:
        return bool(self.items or self.chars or self.deep or self.size)


class _Dropped:
    """Returned by a walk when not even a cut-down form of the value fits the size budget."""


_DROPPED = _Dropped()


class _Walker:
    def __init__(self, limits: Limits, max_bytes: int | None = None) -> None:
        self.limits = limits
        self.truncated = False
        self.cut = JsonCut()
        # UTF-8 bytes of compact JSON (ensure_ascii off) still free; None: no size budget.
        self.room = max_bytes

    def walk(self, value: Any, depth: int, path: str) -> Any:
        # Exact types only: a subclass of str or dict may override behaviour we would run here.
        kind = type(value)
        if value is None or kind is bool:
            return self._scalar(value, 5 if value is False else 4)
        if kind is int:
            return self._scalar(value, _int_bytes(value))
        if kind is float:
            if math.isfinite(value):
                return self._scalar(value, len(repr(value)))
            raise NotJson(path, "float")
        if kind is str:
            if len(value) > self.limits.max_text_chars:
                self.truncated = True
                self.cut.chars += len(value) - self.limits.max_text_chars
                value = value[: self.limits.max_text_chars]
            return self._text(value)
        if kind in (list, tuple):
            if depth >= self.limits.max_json_depth:
                self._check_all(value, path)
                return self._too_deep()
            if not self._spend(2):
                return _DROPPED
            items = []
            for index, item in enumerate(value):
                if index >= self.limits.max_results or (index > 0 and not self._spend(1)):
                    self._drop_rest(itertools.islice(value, index, None), len(value) - index, path)
                    break
                walked = self.walk(item, depth + 1, f"{path}[{index}]")
                if walked is _DROPPED:
                    self._refund(1 if index > 0 else 0)
                    self._drop_rest(itertools.islice(value, index, None), len(value) - index, path)
                    break
                items.append(walked)
            return items
        if kind is dict:
            if depth >= self.limits.max_json_depth:
                self._check_all(value, path)
                return self._too_deep()
            if not self._spend(2):
                return _DROPPED
            out: dict[str, Any] = {}
            for index, (key, item) in enumerate(value.items()):
                if type(key) is not str:
                    raise NotJson(f"{path} key", type(key).__name__)
                entry = 0 if self.room is None else _text_bytes(key) + 1 + (1 if index > 0 else 0)
                if index >= self.limits.max_results or not self._spend(entry):
                    self._drop_rest(itertools.islice(value.items(), index, None), len(value) - index, path, True)
                    break
                walked = self.walk(item, depth + 1, f"{path}.{key}")
                if walked is _DROPPED:
                    self._refund(entry)
                    self._drop_rest(itertools.islice(value.items(), index, None), len(value) - index, path, True)
                    break
                out[key] = walked
            return out
        raise NotJson(path, kind.__qualname__)

    # ---- the size budget --------------------------------------------------------------------------------

    def _spend(self, size: int) -> bool:
        """Take ``size`` bytes of the budget; False (and the budget marked spent) when they are not there."""
        if self.room is None:
            return True
        if size > self.room:
            self.room = 0
            self.cut.size = True
            self.truncated = True
            return False
        self.room -= size
        return True

    def _refund(self, size: int) -> None:
        if self.room is not None:
            self.room += size

    def _scalar(self, value: Any, size: int) -> Any:
        return value if self._spend(size) else _DROPPED

    def _text(self, text: str) -> Any:
        """The string, or the longest prefix of it that fits the budget (at least one character)."""
        room = self.room
        if room is None:
            return text
        # Every character takes at least one byte, so a string longer than the room is cut before measuring it.
        if len(text) + 2 <= room:
            size = _text_bytes(text)
            if size <= room:
                self.room = room - size
                return text
        keep = min(len(text), room - 2)
        while keep > 0:
            size = _text_bytes(text[:keep])
            if size <= room:
                break
            keep = min(keep - 1, keep * room // size)
        self.room = 0
        self.cut.size = True
        self.truncated = True
        if keep <= 0:
            return _DROPPED
        self.cut.chars += len(text) - keep
        return text[:keep]

    def _too_deep(self) -> Any:
        if not self._spend(_DEPTH_MARKER_BYTES):
            return _DROPPED
        self.truncated = True
        self.cut.deep += 1
        return _DEPTH_MARKER

    def _drop_rest(self, rest: Any, count: int, path: str, entries: bool = False) -> None:
        """Leave out the remaining ``count`` items (``entries``: ``(key, item)`` pairs of a dict) of a container,
        after confirming, within the visit budget, that they have a JSON form."""
        self.truncated = True
        self.cut.items += count
        items = list(itertools.islice(rest, _CHECK_BUDGET))
        if entries:
            for key, _ in items:
                if type(key) is not str:
                    raise NotJson(f"{path} key", type(key).__name__)
            items = [item for _, item in items]
        self._check_all(items, path)

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
                # islice: a cut-away list of millions of items is not copied to check its first few.
                stack.extend(itertools.islice(item, budget - seen))
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


def to_json_bounded(value: Any, limits: Limits, max_bytes: int | None) -> tuple[Any, JsonCut]:
    """Like ``to_json``, and the result's compact JSON (UTF-8, ``ensure_ascii`` off) also stays within
    ``max_bytes``: the walk stops where the budget runs out, so its cost is bounded by the budget, not by the
    value. Returns what was cut, with exact counts (``JsonCut``)."""
    walker = _Walker(limits, max_bytes)
    result = walker.walk(value, 0, "$")
    if result is _DROPPED:  # not even the outermost value fits (a budget of a few bytes)
        walker.cut.items += 1
        result = None
    return result, walker.cut


def _text_bytes(text: str) -> int:
    """Bytes of ``text`` as a compact JSON string with ``ensure_ascii`` off: quotes and escapes included."""
    escaped = encode_basestring(text)
    return len(escaped) if escaped.isascii() else len(escaped.encode("utf-8", "surrogatepass"))


def _int_bytes(value: int) -> int:
    """Digits (and sign) of an int; estimated from its bit length for huge ints, whose str() may refuse."""
    if -(10**15) < value < 10**15:
        return len(str(value))
    return int(value.bit_length() * 0.30103) + 2


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
