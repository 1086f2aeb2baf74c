"""Resolution helpers shared by the schema and the signature token: constructors, signatures, annotation
evaluation (beside tool_schema.py). Everything here may run trusted user code; it is bounded, not sandboxed."""

from __future__ import annotations

import functools
import inspect
import operator
import sys
import types
import typing
from typing import Any, Literal, Union

from .annotation_shapes import (
    _BUILTIN_CALLABLES,
    _MAX_ANNOTATION_DEPTH,
    _MAX_UNWRAP,
    _NON_USER_DEFINED,
    _annotation_text,
    _show,
    _unsupported,
)
from .fingerprint import CanonicalJsonError, canonical_json


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
