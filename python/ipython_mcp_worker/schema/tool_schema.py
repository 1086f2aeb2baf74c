"""From a live Python callable to the JSON Schema of a dynamic tool, and back from JSON arguments to Python.

``input_schema`` advertises a callable's parameters; ``analyze_callable`` additionally returns the canonical
text, the fingerprint and the converters that turn validated JSON arguments into the Python values the
annotations ask for (sets, frozensets, tuples). ``signature_token`` is the registry's fast path: while the
token of a binding stays equal, its schema cannot have changed.

Everything here runs trusted user code (``inspect.signature``, annotation evaluation, attribute access on
user objects); it is bounded, not sandboxed.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from .annotation_shapes import ArgumentError, _json_kind, _Mismatch, _Shape, _shape_for, _show, _unsupported
from .fingerprint import canonical_json, schema_fingerprint
from .resolution import (
    _annotation_globals,
    _copy_json,
    _json_default,
    _reject_async_or_generator,
    _resolve_annotation,
    _signature,
)
from .tokens import signature_token

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
    schema: dict[str, Any] = _copy_json(analyze_callable(callable_obj).schema)
    return schema
