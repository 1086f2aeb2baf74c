"""From a live Python callable to the JSON Schema of a dynamic tool, and back from JSON arguments to Python.

``input_schema`` advertises a callable's parameters; ``analyze_callable`` additionally returns the canonical
text, the fingerprint and the converters that turn validated JSON arguments into the Python values the
annotations ask for (sets, frozensets, tuples). ``signature_token`` is the registry's fast path: while the
token of a binding stays equal, its schema cannot have changed.

Everything here runs trusted user code (``inspect.signature``, annotation evaluation, attribute access on
user objects); it is bounded, not sandboxed.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
import sys
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

from .errors import OpError
from .fingerprint import CanonicalJsonError, canonical_json, schema_fingerprint

__all__ = [
    "UNSUPPORTED_SIGNATURE_REASONS",
    "ArgumentError",
    "CallableSchema",
    "analyze_callable",
    "input_schema",
    "signature_token",
]

UNSUPPORTED_SIGNATURE_REASONS = (
    "unannotated",
    "unresolved_annotation",
    "unsupported_annotation",
    "non_json_default",
    "positional_only",
    "var_positional",
    "var_keyword",
    "coroutine_function",
    "generator_function",
    "async_generator_function",
    "async_callable_object",
    "generator_callable_object",
    "no_signature",
)
"""Every ``details["reason"]`` of an ``unsupported_signature`` error."""

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


# ---------------------------------------------------------------------------------------------------------
# Argument shapes: one node per supported annotation, producing both the schema and the JSON -> Python
# conversion.


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


# ---------------------------------------------------------------------------------------------------------
# Resolution helpers shared by the schema and the token.


def _user_defined(owner: Any, name: str) -> Any:
    """``getattr(owner, name)`` unless absent or implemented in C (inspect's notion of user-defined)."""
    try:
        method = getattr(owner, name)
    except AttributeError:
        return None
    if isinstance(method, _NON_USER_DEFINED):
        return None
    return method


def _effective_constructor(cls: type) -> Any:
    """The callable whose parameters ``inspect.signature(cls)`` advertises on Python 3.11+ (``_signature``
    gives 3.10 the same): a metaclass ``__call__``, else the ``__new__`` or ``__init__`` defined closest in
    the MRO (``__new__`` first within one class)."""
    call = _user_defined(type(cls), "__call__")
    if call is not None:
        return call
    new = _user_defined(cls, "__new__")
    init = _user_defined(cls, "__init__")
    for base in cls.__mro__:
        if new is not None and "__new__" in base.__dict__:
            return new
        if init is not None and "__init__" in base.__dict__:
            return init
    return None


def _annotation_globals(obj: Any) -> dict[str, Any]:
    """The globals string annotations of ``obj``'s advertised parameters are evaluated in."""
    target = obj
    for _ in range(_MAX_UNWRAP):
        if isinstance(target, functools.partial):
            target = target.func
        elif inspect.ismethod(target):
            target = target.__func__
        elif inspect.isclass(target):
            constructor = _effective_constructor(target)
            if constructor is None:
                break
            target = constructor
        elif inspect.isfunction(target) or isinstance(target, _BUILTIN_CALLABLES):
            if "__signature__" in getattr(target, "__dict__", {}):
                break
            wrapped = getattr(target, "__wrapped__", None)
            if wrapped is None:
                break
            target = wrapped
        else:
            call = _user_defined(type(target), "__call__")
            if call is None:
                break
            target = call
    namespace = getattr(target, "__globals__", None)
    if isinstance(namespace, dict):
        return namespace
    module = inspect.getmodule(target)
    return vars(module) if module is not None else {}


def _without_bound_parameter(signature: inspect.Signature) -> inspect.Signature:
    """``signature`` minus its ``self``/``cls`` parameter, as ``inspect`` does for constructors."""
    parameters = tuple(signature.parameters.values())
    if not parameters or parameters[0].kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD):
        raise ValueError("invalid method signature")
    if parameters[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return signature
    return signature.replace(parameters=parameters[1:])


def _signature(obj: Any) -> inspect.Signature:
    """``inspect.signature(obj)``, with Python 3.11's choice of a class's constructor on Python 3.10 too.

    3.10's ``inspect`` takes an inherited ``__new__`` over an ``__init__`` defined closer in the MRO (a class
    ``C(B)`` with ``B.__init__`` and ``A.__new__``, ``B(A)``, gets ``A.__new__``'s parameters); 3.11 takes the
    closest one, which ``_effective_constructor`` names. Only that choice is overridden: a class reached
    directly, through ``functools.wraps`` or as the target of a ``functools.partial``.
    """
    if sys.version_info >= (3, 11) or isinstance(obj, types.MethodType):
        return inspect.signature(obj)
    target = inspect.unwrap(obj, stop=lambda f: hasattr(f, "__signature__"))
    if (
        isinstance(target, types.MethodType)
        or getattr(target, "__signature__", None) is not None
        or hasattr(target, "_partialmethod")
    ):
        return inspect.signature(obj)
    if isinstance(target, functools.partial):
        inner = _signature(target.func)

        def shim(*args: Any, **kwargs: Any) -> None: ...

        shim.__signature__ = inner  # type: ignore[attr-defined]
        return inspect.signature(functools.partial(shim, *target.args, **target.keywords))
    if inspect.isclass(target) and _user_defined(type(target), "__call__") is None:
        constructor = _effective_constructor(target)
        new = _user_defined(target, "__new__")
        init = _user_defined(target, "__init__")
        if "__new__" in target.__dict__:
            chosen_by_310 = new
        elif "__init__" in target.__dict__:
            chosen_by_310 = init
        else:
            chosen_by_310 = new if new is not None else init
        if constructor is not None and constructor is not chosen_by_310:
            return _without_bound_parameter(inspect.signature(constructor))
    return inspect.signature(obj)


def _evaluate_annotation(annotation: Any, parameter: str, namespace: dict[str, Any], depth: int) -> Any:
    holder = types.SimpleNamespace(__annotations__={parameter: annotation})
    resolved = typing.get_type_hints(holder, globalns=namespace, localns=None, include_extras=True)[parameter]
    if sys.version_info < (3, 11):
        resolved = _evaluate_nested_strings(resolved, parameter, namespace, depth)
    return resolved


_BUILTIN_GENERICS = (list, set, frozenset, tuple, dict)


def _evaluate_nested_strings(annotation: Any, parameter: str, namespace: dict[str, Any], depth: int) -> Any:
    """Python 3.10's ``get_type_hints`` leaves strings inside builtin generics unevaluated (``list['int']``
    keeps ``'int'``); 3.11+ evaluates them like any forward reference. This does the same on 3.10: a string
    argument of a builtin generic is evaluated in ``namespace``, and unions and typing generics holding such a
    generic are rebuilt. Past the depth bound the annotation is left as it is (and rejected later)."""
    if depth > _MAX_ANNOTATION_DEPTH:
        return annotation
    origin = typing.get_origin(annotation)
    if origin is None or origin is Literal or origin is typing.Annotated:
        return annotation  # Literal values and Annotated metadata are data, not annotations
    args = typing.get_args(annotation)
    builtin_generic = isinstance(annotation, types.GenericAlias)
    evaluated = []
    for arg in args:
        if builtin_generic and isinstance(arg, str):
            arg = _evaluate_annotation(arg, parameter, namespace, depth + 1)
        evaluated.append(_evaluate_nested_strings(arg, parameter, namespace, depth + 1))
    new_args = tuple(evaluated)
    if all(new is old for new, old in zip(new_args, args, strict=True)):
        return annotation
    if origin is Union:
        return Union[new_args]  # noqa: UP007 - rebuilding a typing.Union
    if origin is types.UnionType:
        return functools.reduce(operator.or_, new_args)
    if builtin_generic or origin in _BUILTIN_GENERICS:
        return types.GenericAlias(origin, new_args)
    return annotation  # another generic: not a supported annotation either way


def _resolve_annotation(annotation: Any, parameter: str, namespace: dict[str, Any]) -> Any:
    try:
        return _evaluate_annotation(annotation, parameter, namespace, 0)
    except Exception as error:  # noqa: BLE001 - evaluation of a string annotation can raise anything
        text = annotation if isinstance(annotation, str) else _annotation_text(annotation)
        raise _unsupported(
            "unresolved_annotation",
            f"parameter {_show(parameter)}: annotation {_show(str(text))} does not resolve ({type(error).__name__})",
            parameter,
        ) from None


def _check_function_kind(fn: Any) -> None:
    if inspect.isasyncgenfunction(fn):
        raise _unsupported("async_generator_function", "async generator functions are not supported")
    if inspect.iscoroutinefunction(fn):
        raise _unsupported("coroutine_function", "coroutine functions are not supported")
    if inspect.isgeneratorfunction(fn):
        raise _unsupported("generator_function", "generator functions are not supported")


def _reject_async_or_generator(obj: Any) -> None:
    target = obj
    for _ in range(_MAX_UNWRAP):
        if not isinstance(target, functools.partial):
            break
        target = target.func
    if inspect.isclass(target):
        constructor = _effective_constructor(target)
        if constructor is not None:
            _check_function_kind(constructor)
        return
    if inspect.isfunction(target) or inspect.ismethod(target):
        _check_function_kind(target)
        return
    if isinstance(target, _BUILTIN_CALLABLES):
        return
    call = _user_defined(type(target), "__call__")
    if call is None:
        return
    if inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call):
        raise _unsupported(
            "async_callable_object", "callable objects with an async __call__ are not supported"
        )
    if inspect.isgeneratorfunction(call):
        raise _unsupported(
            "generator_callable_object", "callable objects with a generator __call__ are not supported"
        )


def _json_default(value: Any, parameter: str) -> Any:
    try:
        canonical_json(value)  # exact JSON types, finite/safe numbers, no cycles
    except CanonicalJsonError as error:
        raise _unsupported(
            "non_json_default",
            f"parameter {_show(parameter)}: default has no JSON form ({error.code})",
            parameter,
        ) from None
    return _copy_json(value)


def _copy_json(value: Any) -> Any:
    kind = type(value)
    if kind is list or kind is tuple:
        return [_copy_json(item) for item in value]
    if kind is dict:
        return {key: _copy_json(item) for key, item in value.items()}
    return value


# ---------------------------------------------------------------------------------------------------------
# Public entry points.


@dataclass(frozen=True)
class _Parameter:
    name: str
    shape: _Shape
    required: bool


@dataclass(frozen=True)
class CallableSchema:
    """The analysed signature of one callable.

    ``schema`` is the advertised JSON Schema (treat as read-only), ``canonical`` its canonical JSON,
    ``fingerprint`` the SHA-256 of that text.
    """

    schema: dict[str, Any]
    canonical: str
    fingerprint: str
    parameters: tuple[_Parameter, ...]

    def convert_arguments(self, arguments: Any) -> dict[str, Any]:
        """Validate JSON call arguments against the schema and convert them into keyword arguments
        (JSON arrays become sets, frozensets or tuples where the annotation asks). Raises ``ArgumentError``."""
        if type(arguments) is not dict:
            raise ArgumentError(
                None, "$", "type", f"arguments must be an object, got {_json_kind(arguments)}"
            )
        known = {parameter.name for parameter in self.parameters}
        unexpected = sorted(str(key) for key in arguments if key not in known)
        if unexpected:
            name = unexpected[0]
            raise ArgumentError(name, name, "unexpected", f"unexpected argument {_show(name)}")
        converted: dict[str, Any] = {}
        for parameter in self.parameters:
            if parameter.name not in arguments:
                if parameter.required:
                    raise ArgumentError(
                        parameter.name,
                        parameter.name,
                        "missing",
                        f"missing required argument {_show(parameter.name)}",
                    )
                continue
            try:
                converted[parameter.name] = parameter.shape.convert(arguments[parameter.name], parameter.name)
            except _Mismatch as mismatch:
                raise ArgumentError(
                    parameter.name,
                    mismatch.path,
                    mismatch.reason,
                    f"argument {_show(parameter.name)}: {mismatch.message}",
                ) from None
        return converted


def analyze_callable(callable_obj: Any) -> CallableSchema:
    """Analyse ``callable_obj``'s advertised parameters or raise ``OpError("unsupported_signature")``."""
    if not callable(callable_obj):
        raise _unsupported("no_signature", "the object is not callable")
    _reject_async_or_generator(callable_obj)
    try:
        signature = _signature(callable_obj)
    except Exception as error:  # noqa: BLE001 - ValueError/TypeError, or anything a user __signature__ raises
        raise _unsupported("no_signature", f"no signature available ({type(error).__name__})") from None
    namespace = _annotation_globals(callable_obj)
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters: list[_Parameter] = []
    for parameter in signature.parameters.values():
        name = parameter.name
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise _unsupported("positional_only", f"parameter {_show(name)} is positional-only", name)
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            raise _unsupported("var_positional", f"*{name} is not supported", name)
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            raise _unsupported("var_keyword", f"**{name} is not supported", name)
        if parameter.annotation is inspect.Parameter.empty:
            raise _unsupported("unannotated", f"parameter {_show(name)} has no annotation", name)
        annotation = _resolve_annotation(parameter.annotation, name, namespace)
        shape = _shape_for(annotation, name, 0)
        prop = shape.schema()
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        else:
            prop["default"] = _json_default(parameter.default, name)
        properties[name] = prop
        parameters.append(_Parameter(name, shape, parameter.default is inspect.Parameter.empty))
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    canonical = canonical_json(schema)
    return CallableSchema(schema, canonical, schema_fingerprint(schema), tuple(parameters))


def input_schema(callable_obj: Any) -> dict[str, Any]:
    """The JSON Schema advertised for ``callable_obj`` (a fresh dict), or ``OpError("unsupported_signature",
    ..., {"parameter", "reason"})`` with a reason from ``UNSUPPORTED_SIGNATURE_REASONS``."""
    return _copy_json(analyze_callable(callable_obj).schema)


# ---------------------------------------------------------------------------------------------------------
# Signature tokens.


class _Ident:
    """Compares by identity and keeps its object alive, so an id can never be reused behind our back."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ident) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __repr__(self) -> str:
        return f"<ident {type(self.obj).__qualname__} {id(self.obj):#x}>"


class _Volatile:
    """Equal to nothing: a part whose effect on the schema cannot be tracked forces recomputation."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return "<volatile>"


_MISSING = object()


def _safe_getattr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, _MISSING)
    except Exception:  # noqa: BLE001 - user __getattr__
        return _Volatile()


def _annotation_is_volatile(annotation: Any, depth: int = 0) -> bool:
    """String or forward-reference annotations resolve against mutable globals: not trackable by identity."""
    if depth > _MAX_ANNOTATION_DEPTH or isinstance(annotation, (str, typing.ForwardRef)):
        return True
    try:
        if typing.get_origin(annotation) is Literal:
            return False
        return any(_annotation_is_volatile(arg, depth + 1) for arg in typing.get_args(annotation))
    except Exception:  # noqa: BLE001
        return True


class _Budget:
    def __init__(self) -> None:
        self.left = _MAX_TOKEN_VALUES


def _value_token(value: Any, budget: _Budget, depth: int = 0) -> Any:
    budget.left -= 1
    if budget.left < 0 or depth > _MAX_TOKEN_DEPTH:
        return _Volatile()
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return (kind.__name__, value)
    if kind is list or kind is tuple:
        return (kind.__name__, tuple(_value_token(item, budget, depth + 1) for item in value))
    if kind is dict:
        return (
            "dict",
            tuple(
                (_value_token(key, budget, depth + 1), _value_token(item, budget, depth + 1))
                for key, item in value.items()
            ),
        )
    return _Ident(value)


def _annotations_token(annotations: Any) -> Any:
    if type(annotations) is not dict:
        return _Ident(annotations)
    return tuple(
        (key, _Volatile() if _annotation_is_volatile(value) else _Ident(value))
        for key, value in annotations.items()
    )


def _token(obj: Any, depth: int, budget: _Budget) -> tuple[Any, ...]:
    if depth > _MAX_TOKEN_DEPTH:
        return (_Volatile(),)
    parts: list[Any] = [_Ident(obj), _Ident(type(obj)), _Ident(_safe_getattr(obj, "__signature__"))]
    if isinstance(obj, functools.partial):
        parts += [
            "partial",
            _token(obj.func, depth + 1, budget),
            _value_token(obj.args, budget),
            _value_token(obj.keywords, budget),
        ]
    elif inspect.ismethod(obj):
        parts += ["method", _Ident(obj.__self__), _token(obj.__func__, depth + 1, budget)]
    elif inspect.isfunction(obj):
        parts += [
            "function",
            _Ident(obj.__code__),
            _value_token(obj.__defaults__, budget),
            _value_token(obj.__kwdefaults__, budget),
            _annotations_token(obj.__annotations__),
        ]
    elif inspect.isclass(obj):
        metaclass = type(obj)
        parts += [
            "class",
            tuple(_Ident(base) for base in obj.__mro__),
            tuple(_Ident(base.__dict__.get("__call__")) for base in metaclass.__mro__),
            tuple(
                (
                    _Ident(base.__dict__.get("__new__")),
                    _Ident(base.__dict__.get("__init__")),
                    _Ident(base.__dict__.get("__signature__")),
                )
                for base in obj.__mro__
            ),
        ]
        for owner, name in ((metaclass, "__call__"), (obj, "__new__"), (obj, "__init__")):
            constructor = _user_defined(owner, name)
            parts.append(None if constructor is None else _token(constructor, depth + 1, budget))
    elif isinstance(obj, _BUILTIN_CALLABLES):
        parts += ["builtin", _safe_getattr(obj, "__text_signature__")]
    else:
        call = _user_defined(type(obj), "__call__")
        if call is None or isinstance(call, _BUILTIN_CALLABLES):
            parts += ["instance", _Ident(call)]
        else:
            parts += ["instance", _token(call, depth + 1, budget)]
    wrapped = _safe_getattr(obj, "__wrapped__")
    if wrapped is not _MISSING:
        parts.append(("wrapped", _token(wrapped, depth + 1, budget)))
    return tuple(parts)


def signature_token(callable_obj: Any) -> tuple[Any, ...]:
    """A token that compares equal (``==``) only while nothing that affects ``input_schema(callable_obj)``
    has changed: the object's identity, ``__signature__``, the ``__wrapped__`` chain, ``functools.partial``
    function/arguments/keywords, code, defaults, keyword defaults and annotations, and for classes the MRO
    and every constructor callable consulted (metaclass ``__call__``, ``__new__``, ``__init__``). Parts that
    cannot be tracked (string annotations, oversized or exotic state) make it unequal to everything, which
    only costs a recomputation. Never raises."""
    try:
        return _token(callable_obj, 0, _Budget())
    except Exception:  # noqa: BLE001 - user attribute access; fall back to "always recompute"
        return (_Volatile(),)
