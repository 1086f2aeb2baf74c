"""Bounded translation of live Python values into JSON values (docs/protocol.md, "Value contract").

``to_json`` answers two questions at once: does the value have a JSON form at all, and what is that form
within the configured depth, item and character limits. A value without a JSON form raises ``NotJson``;
a value with one that exceeds a limit comes back cut, with ``truncated`` set.

Every JSON form it returns survives the whole way to an MCP client unchanged: through either codec, into
JavaScript and through ``JSON.stringify``. Where JavaScript cannot hold a Python value exactly (an int beyond
±(2**53 - 1), NaN, ±Infinity, -0.0) or a string cannot be encoded as UTF-8 (lone surrogates, as ``os.listdir``
makes of undecodable file names), the value is written as a string that loses nothing and its place is
listed in ``encoded``: ``{path: "int" | "float" | "text" | "key"}``.

Over the ~400-line guide on purpose: the encoder is one class whose methods share one budget (items, characters,
bytes, depth) and one ``encoded``/``cut`` record; split across modules they would pass that state around for no
gain in clarity.
"""

from __future__ import annotations

import itertools
import math
import re
import reprlib
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from ..inspection.static import type_qualname
from ..protocol.limits import Limits

#: The largest integer magnitude a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER = 2**53 - 1


class NotJson(Exception):
    """The value (or something inside it) has no JSON form."""

    def __init__(self, path: str, type_name: str) -> None:
        super().__init__(f"value at {path} of type {type_name} has no JSON form")
        self.path = path
        self.type_name = type_name


@dataclass
class JsonForm:
    """A value's JSON form: ``value`` as sent, ``truncated`` when a limit cut it, and the encoded places."""

    value: Any
    truncated: bool = False
    encoded: dict[str, str] = field(default_factory=dict)
    encoded_omitted: int = 0
    cut: JsonCut | None = None

    def annotate(self, target: dict[str, Any]) -> dict[str, Any]:
        """Add ``encoded`` (and ``encoded_omitted``) to ``target`` when anything was encoded; returns it."""
        if self.encoded:
            target["encoded"] = self.encoded
        if self.encoded_omitted:
            target["encoded_omitted"] = self.encoded_omitted
        return target


_DEPTH_MARKER = "…"


def encode_text(text: str) -> str | None:
    """``text`` as valid UTF-8, or None when it is valid already.

    Text holding lone surrogates is written with every backslash doubled and every surrogate as a ``\\udcXX``
    escape, so that :func:`decode_text` gives back exactly the original (a literal ``\\udcXX`` in the text stays
    distinguishable from an escaped surrogate).
    """
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.replace("\\", "\\\\").encode("utf-8", "backslashreplace").decode("utf-8")
    return None


_ESCAPE = re.compile(r"\\(\\|u[0-9a-f]{4})")


def decode_text(text: str) -> str:
    """The inverse of :func:`encode_text` for a string it encoded."""
    return _ESCAPE.sub(lambda match: "\\" if match.group(1) == "\\" else chr(int(match.group(1)[1:], 16)), text)


def encode_float(number: float) -> str | None:
    """The text of a float JavaScript's JSON cannot carry (NaN, ±Infinity, -0.0), or None for any other."""
    if number != number:
        return "NaN"
    if number in (math.inf, -math.inf):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0.0 and math.copysign(1.0, number) < 0:
        return "-0.0"
    return None


def child_path(path: str, key: str) -> str:
    """``$.name`` for identifier keys, ``$["any key"]`` (JSON-quoted) for others."""
    if key.isidentifier() and key.isascii():
        return f"{path}.{key}"
    import json

    return f"{path}[{json.dumps(key, ensure_ascii=True)}]"


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
        self.encoded: dict[str, str] = {}
        self.encoded_omitted = 0
        self.cut = JsonCut()
        # UTF-8 bytes of compact JSON (ensure_ascii off) still free; None: no size budget.
        self.room = max_bytes

    def mark(self, path: str, kind: str) -> None:
        encoded = self.encoded
        if path in encoded:  # an escaped key whose value is encoded too
            encoded[path] = f"{encoded[path]}+{kind}"
        elif len(encoded) < self.limits.max_results:
            encoded[path] = kind
        else:
            self.encoded_omitted += 1

    def walk(self, value: Any, depth: int, path: str) -> Any:
        # Exact types only: a subclass of str or dict may override behaviour we would run here.
        kind = type(value)
        if value is None or kind is bool:
            return self._scalar(value, 5 if value is False else 4)
        if kind is int:
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return self._scalar(value, _int_bytes(value))
            text, kind_name = _int_text(value)
            if len(text) > self.limits.max_text_chars:
                self.truncated = True
                self.cut.chars += len(text) - self.limits.max_text_chars
                text = text[: self.limits.max_text_chars]
            self.mark(path, kind_name)
            return self._text(text)
        if kind is float:
            encoded = encode_float(value)
            if encoded is None:
                return self._scalar(value, len(repr(value)))
            self.mark(path, "float")
            return self._text(encoded)
        if kind is str:
            if len(value) > self.limits.max_text_chars:
                self.truncated = True
                self.cut.chars += len(value) - self.limits.max_text_chars
                value = value[: self.limits.max_text_chars]
            escaped = encode_text(value)
            if escaped is None:
                return self._text(value)
            self.mark(path, "text")
            return self._text(escaped)
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
                escaped = encode_text(key)
                name = key if escaped is None else escaped
                entry = 0 if self.room is None else _text_bytes(name) + 1 + (1 if index > 0 else 0)
                if index >= self.limits.max_results or not self._spend(entry):
                    self._drop_rest(itertools.islice(value.items(), index, None), len(value) - index, path, True)
                    break
                item_path = child_path(path, name)
                if escaped is not None:
                    self.mark(item_path, "key")
                walked = self.walk(item, depth + 1, item_path)
                if walked is _DROPPED:
                    self._refund(entry)
                    if escaped is not None:
                        self.encoded.pop(item_path, None)
                    self._drop_rest(itertools.islice(value.items(), index, None), len(value) - index, path, True)
                    break
                out[name] = walked
            return out
        raise NotJson(path, type_qualname(kind) or "object")

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

    def _check_all(self, value: Any, path: str, budget: int = _CHECK_BUDGET) -> None:
        """Confirm that a part we cut away still has a JSON form, within a visit budget."""
        stack = [value]
        seen = 0
        while stack and seen < budget:
            item = stack.pop()
            seen += 1
            kind = type(item)
            if item is None or kind in (bool, int, float, str):
                continue
            if kind in (list, tuple):
                # islice: a cut-away list of millions of items is not copied to check its first few.
                stack.extend(itertools.islice(item, budget - seen))
                continue
            if kind is dict:
                for key, sub in itertools.islice(item.items(), budget - seen):
                    if type(key) is not str:
                        raise NotJson(f"{path} key", type(key).__name__)
                    stack.append(sub)
                continue
            raise NotJson(path, type_qualname(kind) or "object")


def _int_text(value: int) -> tuple[str, str]:
    """Decimal digits (``int``), or for an int too long for Python's str() limit, hex digits (``int_hex``)."""
    if value.bit_length() < 14_000:  # under 4,300 decimal digits: str() is allowed and fast
        return str(value), "int"
    return hex(value), "int_hex"


def _text_bytes(text: str) -> int:
    """Bytes of ``text`` as a compact JSON string with ``ensure_ascii`` off: quotes and escapes included."""
    escaped = encode_basestring(text)
    return len(escaped) if escaped.isascii() else len(escaped.encode("utf-8", "surrogatepass"))


def _int_bytes(value: int) -> int:
    """Digits (and sign) of an int; estimated from its bit length for huge ints, whose str() may refuse."""
    if -(10**15) < value < 10**15:
        return len(str(value))
    return int(value.bit_length() * 0.30103) + 2


def json_form(value: Any, limits: Limits, path: str = "$", max_bytes: int | None = None) -> JsonForm:
    """The JSON form of ``value`` or ``NotJson``. Recursion is bounded by the depth limit; with ``max_bytes``,
    the compact JSON (UTF-8) also stays within that many bytes and the walk stops where they run out, so its cost
    is bounded by the budget, not by the value (``JsonForm.cut`` says what was cut, with exact counts)."""
    walker = _Walker(limits, max_bytes)
    result = walker.walk(value, 0, path)
    if result is _DROPPED:  # not even the outermost value fits (a budget of a few bytes)
        walker.cut.items += 1
        result = None
    return JsonForm(result, walker.truncated, walker.encoded, walker.encoded_omitted, walker.cut)


def is_plain_scalar(value: Any, limits: Limits) -> bool:
    """Whether ``value`` is a scalar that :func:`json_form` (without a size budget) returns unchanged, with nothing
    encoded or cut: None, a bool, an int within ±(2**53 - 1), a float other than NaN/±Infinity/-0.0, or a str of at
    most ``max_text_chars`` characters that is valid UTF-8. Exact types only, as in the walk: subclasses are not
    plain. The cheap answer for the most common results (``1+1``); everything else takes the walk.
    """
    kind = type(value)
    if kind is int:
        return bool(-MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
    if kind is str:
        return len(value) <= limits.max_text_chars and encode_text(value) is None
    if kind is float:
        return encode_float(value) is None
    return value is None or kind is bool


def to_json(value: Any, limits: Limits) -> tuple[Any, bool]:
    """``(json_value, truncated)`` of :func:`json_form`, for callers that only need those two."""
    form = json_form(value, limits)
    return form.value, form.truncated


def to_json_bounded(value: Any, limits: Limits, max_bytes: int | None) -> tuple[Any, JsonCut | None]:
    """``(json_value, cut)`` of :func:`json_form` within ``max_bytes``."""
    form = json_form(value, limits, max_bytes=max_bytes)
    return form.value, form.cut


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
            type_name = type_qualname(type(value)) or "object"
        except Exception:  # noqa: BLE001
            type_name = "object"
        text = f"<{type_name} object; repr raised {type(error).__name__}>"
    if len(text) > limit:
        return text[:limit], True
    return text, False


def from_javascript(value: Any) -> Any:
    """A JSON value that came from JavaScript, with its numbers as Python would write them.

    JavaScript has one number type, so msgpackr sends an integral number beyond 32 bits as a float64 and JSON as
    digits. Either way a safe integer (|n| <= 2**53 - 1, ``Number.isSafeInteger``) becomes an ``int`` here and every
    other number a ``float``, so both codecs give the same Python value. -0 is integral and so becomes 0.
    """
    kind = type(value)
    if kind is float:
        if value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return int(value)
        return value
    if kind is int:
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else float(value)
    if kind is dict:
        return {key: from_javascript(item) for key, item in value.items()}
    if kind is list:
        return [from_javascript(item) for item in value]
    return value
