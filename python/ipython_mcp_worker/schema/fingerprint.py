"""Canonical JSON (RFC 8785 / JCS) and the SHA-256 schema fingerprint.

The TypeScript twin is ``packages/schema-fingerprint``; ``fixtures/schema-fingerprint/vectors.json`` pins
both implementations to the same bytes.

Rules, identical on both sides:

* objects: keys sorted by their UTF-16 code units, no whitespace anywhere;
* strings: only ``"``, ``\\`` and control characters below U+0020 are escaped (``\\b \\f \\n \\r \\t``,
  otherwise ``\\u00xx`` in lowercase hex); everything else, non-ASCII included, is emitted raw as UTF-8.
  A lone surrogate has no UTF-8 form and is refused;
* numbers: the ECMAScript ``Number.prototype.toString`` form (``1.0`` -> ``1``, ``-0.0`` -> ``0``,
  ``1e21`` -> ``1e+21``, ``1e-7`` -> ``1e-7``). NaN and the infinities are refused. An integer outside
  ``±(2**53 - 1)`` is refused, and so is any float whose canonical form would be a plain integer literal
  outside that range (every float in ``[2**53, 1e21)``): such a literal does not mean the same value in
  both languages. Floats from ``1e21`` upwards print in exponent form and are accepted;
* only ``None``, ``bool``, ``int``, ``float``, ``str``, ``list``, ``tuple`` and ``dict`` with ``str`` keys
  (exact types, ``bool`` is never an integer) are accepted; a container that contains itself is refused.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from ..protocol.constants import CANONICAL_JSON_ERROR_CODE_LIST

__all__ = [
    "CANONICAL_JSON_ERROR_CODES",
    "MAX_SAFE_INTEGER",
    "CanonicalJsonError",
    "canonical_json",
    "es_number",
    "schema_fingerprint",
]

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer that both a Python ``int`` and an IEEE-754 double hold exactly, with its neighbours."""

_EXPONENT_FORM_FROM = 1e21
"""ECMAScript switches integral numbers to exponent form from here on."""

CANONICAL_JSON_ERROR_CODES = CANONICAL_JSON_ERROR_CODE_LIST
"""Every ``CanonicalJsonError.code``, generated from fixtures/schema-fingerprint/error-codes.json as the TypeScript
side's list is."""


class CanonicalJsonError(ValueError):
    """The value has no canonical JSON form. ``code`` is one of ``CANONICAL_JSON_ERROR_CODES``;
    ``path`` locates the offending part (``$``, ``$.key``, ``$[0]``)."""

    def __init__(self, code: str, path: str, message: str) -> None:
        if code not in CANONICAL_JSON_ERROR_CODES:
            raise ValueError(f"unknown canonical JSON error code {code!r}")
        super().__init__(f"{message} at {path}")
        self.code = code
        self.path = path


_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _escape_char(char: str) -> str:
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    if char < " ":
        return f"\\u{ord(char):04x}"
    return char


def _has_surrogate(text: str) -> bool:
    # A Python str holds code points; a surrogate code point in it is always unpaired as far as UTF-8 goes.
    return any("\ud800" <= char <= "\udfff" for char in text)


def _string(text: str, path: str) -> str:
    if _has_surrogate(text):
        raise CanonicalJsonError("lone_surrogate", path, "string contains a lone surrogate")
    if all(char >= " " and char != '"' and char != "\\" for char in text):
        return f'"{text}"'
    return '"' + "".join(_escape_char(char) for char in text) + '"'


def _utf16_sort_key(key: str) -> bytes:
    # Big-endian UTF-16 bytes compare exactly like sequences of UTF-16 code units.
    return key.encode("utf-16-be")


def es_number(value: float) -> str:
    """Format a finite float exactly like ECMAScript ``Number.prototype.toString`` (radix 10).

    ``repr`` already yields the shortest round-trip digits (correctly rounded); only the placement of the
    decimal point and the exponent differ between the two languages.
    """
    if not math.isfinite(value):
        raise ValueError("es_number needs a finite float")
    if value == 0:
        return "0"  # covers -0.0 as well
    if value < 0:
        return "-" + es_number(-value)
    text = repr(value)
    mantissa, _, exponent_text = text.partition("e")
    exponent = int(exponent_text) if exponent_text else 0
    integer_part, _, fraction_part = mantissa.partition(".")
    digits = (integer_part + fraction_part).lstrip("0")
    # value == int(digits) * 10 ** scale
    scale = exponent - len(fraction_part)
    stripped = digits.rstrip("0")
    scale += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = scale + k  # value == 0.<digits> * 10 ** n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    if k == 1:
        return f"{digits}e{sign}{abs(e)}"
    return f"{digits[0]}.{digits[1:]}e{sign}{abs(e)}"


def _number(value: int | float, path: str) -> str:
    if type(value) is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return str(value)
        raise CanonicalJsonError("unsafe_integer", path, "integer outside ±(2**53 - 1)")
    if not math.isfinite(value):
        raise CanonicalJsonError("non_finite_number", path, "NaN and infinities have no JSON form")
    if MAX_SAFE_INTEGER < abs(value) < _EXPONENT_FORM_FROM:
        raise CanonicalJsonError("unsafe_integer", path, "integral number outside ±(2**53 - 1)")
    return es_number(value)


class _Serializer:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.active: set[int] = set()

    def write(self, value: Any, path: str) -> None:
        kind = type(value)
        if value is None:
            self.parts.append("null")
        elif value is True:
            self.parts.append("true")
        elif value is False:
            self.parts.append("false")
        elif kind is int or kind is float:
            self.parts.append(_number(value, path))
        elif kind is str:
            self.parts.append(_string(value, path))
        elif kind is list or kind is tuple or kind is dict:
            marker = id(value)
            if marker in self.active:
                raise CanonicalJsonError("circular_reference", path, "container contains itself")
            self.active.add(marker)
            try:
                if kind is dict:
                    self._object(value, path)
                else:
                    self._array(value, path)
            finally:
                self.active.discard(marker)
        else:
            raise CanonicalJsonError("unsupported_type", path, f"type {kind.__qualname__} has no JSON form")

    def _array(self, items: list[Any] | tuple[Any, ...], path: str) -> None:
        self.parts.append("[")
        for index, item in enumerate(items):
            if index:
                self.parts.append(",")
            self.write(item, f"{path}[{index}]")
        self.parts.append("]")

    def _object(self, mapping: dict[Any, Any], path: str) -> None:
        for key in mapping:
            if type(key) is not str:
                raise CanonicalJsonError(
                    "non_string_key", path, f"object key of type {type(key).__qualname__}"
                )
            if _has_surrogate(key):
                raise CanonicalJsonError("lone_surrogate", path, "object key contains a lone surrogate")
        self.parts.append("{")
        for index, key in enumerate(sorted(mapping, key=_utf16_sort_key)):
            if index:
                self.parts.append(",")
            self.parts.append(_string(key, path))
            self.parts.append(":")
            self.write(mapping[key], f"{path}.{key}")
        self.parts.append("}")


def canonical_json(value: Any) -> str:
    """Serialise ``value`` as RFC 8785 canonical JSON or raise ``CanonicalJsonError``."""
    serializer = _Serializer()
    serializer.write(value, "$")
    return "".join(serializer.parts)


def schema_fingerprint(schema: Any) -> str:
    """Lowercase hex SHA-256 of the UTF-8 bytes of ``canonical_json(schema)``."""
    return hashlib.sha256(canonical_json(schema).encode("utf-8")).hexdigest()
