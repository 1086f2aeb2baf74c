"""Bounded translation of live Python values into JSON values (docs/protocol.md, "Value contract").

``to_json`` answers two questions at once: does the value have a JSON form at all, and what is that form
within the configured depth, item and character limits. A value without a JSON form raises ``NotJson``;
a value with one that exceeds a limit comes back cut, with ``truncated`` set.

Every JSON form it returns survives the whole way to an MCP client unchanged: through either codec, into
JavaScript and through ``JSON.stringify``. Where JavaScript cannot hold a Python value exactly (an int beyond
±(2**53 - 1), NaN, ±Infinity, -0.0) or a string cannot be encoded as UTF-8 (lone surrogates, as ``os.listdir``
makes of undecodable file names), the value is written as a string that loses nothing and its place is
listed in ``encoded``: ``{path: "int" | "float" | "text" | "key"}``.
"""

from __future__ import annotations

import itertools
import math
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any

from .limits import Limits

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


class _Walker:
    def __init__(self, limits: Limits, form: JsonForm) -> None:
        self.limits = limits
        self.form = form

    def mark(self, path: str, kind: str) -> None:
        encoded = self.form.encoded
        if len(encoded) < self.limits.max_results:
            encoded[path] = kind
        else:
            self.form.encoded_omitted += 1

    def walk(self, value: Any, depth: int, path: str) -> Any:
        # Exact types only: a subclass of str or dict may override behaviour we would run here.
        kind = type(value)
        if value is None or kind is bool:
            return value
        if kind is int:
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return value
            text, kind_name = _int_text(value, self.limits.max_text_chars)
            if len(text) > self.limits.max_text_chars:
                self.form.truncated = True
                text = text[: self.limits.max_text_chars]
            self.mark(path, kind_name)
            return text
        if kind is float:
            text = encode_float(value)
            if text is None:
                return value
            self.mark(path, "float")
            return text
        if kind is str:
            if len(value) > self.limits.max_text_chars:
                self.form.truncated = True
                value = value[: self.limits.max_text_chars]
            escaped = encode_text(value)
            if escaped is None:
                return value
            self.mark(path, "text")
            return escaped
        if kind in (list, tuple):
            if depth >= self.limits.max_json_depth:
                self._check_all(value, path)
                self.form.truncated = True
                return _DEPTH_MARKER
            items = []
            for index, item in enumerate(value):
                if index >= self.limits.max_results:
                    self._check_all(value[index:], path)
                    self.form.truncated = True
                    break
                items.append(self.walk(item, depth + 1, f"{path}[{index}]"))
            return items
        if kind is dict:
            if depth >= self.limits.max_json_depth:
                self._check_all(value, path)
                self.form.truncated = True
                return _DEPTH_MARKER
            out: dict[str, Any] = {}
            for index, (key, item) in enumerate(value.items()):
                if type(key) is not str:
                    raise NotJson(f"{path} key", type(key).__name__)
                if index >= self.limits.max_results:
                    self.form.truncated = True
                    self._check_all(list(value.values())[index:], path)
                    break
                escaped = encode_text(key)
                if escaped is not None:
                    self.mark(child_path(path, escaped), "key")
                    key = escaped
                out[key] = self.walk(item, depth + 1, child_path(path, key))
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
            if item is None or kind in (bool, int, float, str):
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


def _int_text(value: int, limit: int) -> tuple[str, str]:
    """Decimal digits (``int``), or for an int too long for Python's str() limit, hex digits (``int_hex``)."""
    if value.bit_length() < 14_000:  # under 4,300 decimal digits: str() is allowed and fast
        return str(value), "int"
    text = hex(value)
    return text, "int_hex"


def json_form(value: Any, limits: Limits, path: str = "$") -> JsonForm:
    """The JSON form of ``value`` or ``NotJson``. Recursion is bounded by the depth limit."""
    form = JsonForm(None)
    form.value = _Walker(limits, form).walk(value, 0, path)
    return form


def to_json(value: Any, limits: Limits) -> tuple[Any, bool]:
    """``(json_value, truncated)`` of :func:`json_form`, for callers that only need those two."""
    form = json_form(value, limits)
    return form.value, form.truncated


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
