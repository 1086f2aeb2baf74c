"""Argument shapes of dynamic tools: one node per supported annotation, producing both the JSON Schema and the
JSON -> Python conversion (beside tool_schema.py; the helpers at the top are shared by the schema modules)."""

from __future__ import annotations

import inspect
import math
import types
import typing
from typing import Any, Literal, Union

from ..protocol.errors import OpError
from .fingerprint import CanonicalJsonError, canonical_json

_MAX_ANNOTATION_DEPTH = 32
_MAX_UNWRAP = 100
_MAX_TOKEN_DEPTH = 32
_MAX_TOKEN_VALUES = 10_000
_SHOWN_CHARS = 80

# Callables implemented in C; inspect does not treat them as user-defined constructors.
_NON_USER_DEFINED = (
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
    types.BuiltinFunctionType,
)
_BUILTIN_CALLABLES = (
    types.BuiltinFunctionType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)


def _show(text: str) -> str:
    """A bounded, quoted rendering of a name or path for messages."""
    if len(text) > _SHOWN_CHARS:
        return repr(text[:_SHOWN_CHARS]) + "…"
    return repr(text)


def _unsupported(reason: str, message: str, parameter: str | None = None) -> OpError:
    return OpError("unsupported_signature", message, {"parameter": parameter, "reason": reason})


def _annotation_text(annotation: Any) -> str:
    try:
        text = inspect.formatannotation(annotation)
    except Exception:  # noqa: BLE001 - a user __repr__ may raise
        text = type(annotation).__qualname__
    if len(text) > _SHOWN_CHARS:
        return text[:_SHOWN_CHARS] + "…"
    return text




class ArgumentError(Exception):
    """A call argument does not match the advertised schema.

    ``parameter`` is the top-level parameter concerned (None when the arguments are not an object),
    ``path`` the location inside it, ``reason`` one of ``type``, ``missing``, ``unexpected``, ``enum``,
    ``length``, ``duplicate``.
    """

    def __init__(self, parameter: str | None, path: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.path = path
        self.reason = reason
        self.message = message


class _Mismatch(Exception):
    def __init__(self, path: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
        self.message = message


def _json_kind(value: Any) -> str:
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return "boolean"
    if kind is int:
        return "integer"
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    if kind is list or kind is tuple:
        return "array"
    if kind is dict:
        return "object"
    return kind.__qualname__


def _type_mismatch(path: str, expected: str, value: Any) -> _Mismatch:
    return _Mismatch(path, "type", f"{_show(path)}: expected {expected}, got {_json_kind(value)}")


class _Shape:
    hashable = True

    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def convert(self, value: Any, path: str) -> Any:
        raise NotImplementedError


class _Scalar(_Shape):
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def schema(self) -> dict[str, Any]:
        return {"type": self.kind}

    def describe(self) -> str:
        return self.kind

    def convert(self, value: Any, path: str) -> Any:
        kind = type(value)
        expected = self.kind
        if expected == "string" and kind is str:
            return value
        if expected == "boolean" and kind is bool:
            return value
        if expected == "null" and value is None:
            return None
        if expected == "integer":
            if kind is int:
                return value
            if kind is float and value.is_integer():
                return int(value)  # JSON Schema: 2.0 is an integer
        if expected == "number":
            if kind is int or (kind is float and math.isfinite(value)):
                return value
        raise _type_mismatch(path, expected, value)


class _Array(_Shape):
    """list[T], tuple[T, ...], set[T], frozenset[T]."""

    def __init__(self, item: _Shape, container: type) -> None:
        self.item = item
        self.container = container
        self.unique = container is set or container is frozenset
        self.hashable = (container is tuple or container is frozenset) and item.hashable

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "array", "items": self.item.schema()}
        if self.unique:
            schema["uniqueItems"] = True
        return schema

    def describe(self) -> str:
        return f"array of {self.item.describe()}"

    def convert(self, value: Any, path: str) -> Any:
        if type(value) is not list and type(value) is not tuple:
            raise _type_mismatch(path, "array", value)
        items = [self.item.convert(item, f"{path}[{index}]") for index, item in enumerate(value)]
        if self.container is list:
            return items
        converted = self.container(items)
        if self.unique and len(converted) != len(items):
            raise _Mismatch(path, "duplicate", f"{_show(path)}: array items must be unique")
        return converted


class _Tuple(_Shape):
    """tuple[A, B, ...] with a fixed length."""

    def __init__(self, items: list[_Shape]) -> None:
        self.items = items
        self.hashable = all(item.hashable for item in items)

    def schema(self) -> dict[str, Any]:
        count = len(self.items)
        return {
            "type": "array",
            "prefixItems": [item.schema() for item in self.items],
            "minItems": count,
            "maxItems": count,
            "items": False,
        }

    def describe(self) -> str:
        return f"array of exactly {len(self.items)} items"

    def convert(self, value: Any, path: str) -> Any:
        if type(value) is not list and type(value) is not tuple:
            raise _type_mismatch(path, "array", value)
        if len(value) != len(self.items):
            raise _Mismatch(
                path, "length", f"{_show(path)}: expected exactly {len(self.items)} items, got {len(value)}"
            )
        return tuple(
            shape.convert(item, f"{path}[{index}]")
            for index, (shape, item) in enumerate(zip(self.items, value, strict=True))
        )


class _Mapping(_Shape):
    """dict[str, T]."""

    hashable = False

    def __init__(self, value: _Shape) -> None:
        self.value = value

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.schema()}

    def describe(self) -> str:
        return f"object of {self.value.describe()}"

    def convert(self, value: Any, path: str) -> Any:
        if type(value) is not dict:
            raise _type_mismatch(path, "object", value)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _Mismatch(path, "type", f"{_show(path)}: object keys must be strings")
            out[key] = self.value.convert(item, f"{path}.{key}")
        return out


class _AnyOf(_Shape):
    def __init__(self, options: list[_Shape]) -> None:
        self.options = options
        self.hashable = all(option.hashable for option in options)

    def schema(self) -> dict[str, Any]:
        return {"anyOf": [option.schema() for option in self.options]}

    def describe(self) -> str:
        return " or ".join(option.describe() for option in self.options)

    def convert(self, value: Any, path: str) -> Any:
        # The first alternative (declaration order) that accepts the value decides the conversion.
        for option in self.options:
            try:
                return option.convert(value, path)
            except _Mismatch:
                continue
        raise _type_mismatch(path, _bounded_description(self.describe()), value)


def _bounded_description(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + "…"


def _same_literal(value: Any, literal: Any) -> bool:
    value_kind, literal_kind = type(value), type(literal)
    if literal is None or value is None:
        return value is literal
    if literal_kind is bool or value_kind is bool:
        return value is literal
    if literal_kind in (int, float):
        return value_kind in (int, float) and value == literal
    return value_kind is literal_kind and value == literal


class _Enum(_Shape):
    def __init__(self, values: list[Any]) -> None:
        self.values = values

    def schema(self) -> dict[str, Any]:
        return {"enum": list(self.values)}

    def describe(self) -> str:
        return "one of " + ", ".join(canonical_json(value) for value in self.values)

    def convert(self, value: Any, path: str) -> Any:
        for literal in self.values:
            if _same_literal(value, literal):
                return literal  # the declared value, with its declared type
        raise _Mismatch(path, "enum", f"{_show(path)}: expected {_bounded_description(self.describe())}")


_SCALARS: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def _literal_key(value: Any) -> tuple[str, Any]:
    if type(value) is bool or value is None:
        return ("exact", value)
    return ("value", value)


def _shape_for(annotation: Any, parameter: str, depth: int) -> _Shape:
    def reject(why: str = "") -> OpError:
        suffix = f" ({why})" if why else ""
        return _unsupported(
            "unsupported_annotation",
            f"parameter {_show(parameter)}: unsupported annotation {_annotation_text(annotation)}{suffix}",
            parameter,
        )

    if depth > _MAX_ANNOTATION_DEPTH:
        raise reject("nested too deeply")
    if annotation is None:
        return _Scalar("null")
    try:
        scalar = _SCALARS.get(annotation)
    except TypeError:  # unhashable annotation object
        scalar = None
    if scalar is not None:
        return _Scalar(scalar)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        values: list[Any] = []
        seen: set[tuple[str, Any]] = set()
        for value in args:
            if value is not None and type(value) not in (str, int, float, bool):
                raise reject("Literal values must be str, int, float, bool or None")
            try:
                canonical_json(value)
            except CanonicalJsonError as error:
                raise reject(f"Literal value without a JSON form: {error.code}") from None
            key = _literal_key(value)
            if key not in seen:
                seen.add(key)
                values.append(value)
        return _Enum(values)
    if origin is Union or origin is types.UnionType:
        options: list[_Shape] = []
        seen_schemas: set[str] = set()
        for member in args:
            option = _shape_for(member, parameter, depth + 1)
            text = canonical_json(option.schema())
            if text not in seen_schemas:
                seen_schemas.add(text)
                options.append(option)
        if len(options) == 1:
            return options[0]
        return _AnyOf(options)
    if origin is list:
        if len(args) != 1:
            raise reject()
        return _Array(_shape_for(args[0], parameter, depth + 1), list)
    if origin is set or origin is frozenset:
        if len(args) != 1:
            raise reject()
        item = _shape_for(args[0], parameter, depth + 1)
        if not item.hashable:
            raise reject("set items must be hashable after conversion")
        return _Array(item, origin)
    if origin is tuple:
        if args == ((),):  # typing.Tuple[()] on older Pythons
            args = ()
        if len(args) == 2 and args[1] is Ellipsis:
            return _Array(_shape_for(args[0], parameter, depth + 1), tuple)
        if Ellipsis in args:
            raise reject()
        return _Tuple([_shape_for(member, parameter, depth + 1) for member in args])
    if origin is dict:
        if len(args) != 2 or args[0] is not str:
            raise reject("only dict[str, T] is supported")
        return _Mapping(_shape_for(args[1], parameter, depth + 1))
    raise reject()
