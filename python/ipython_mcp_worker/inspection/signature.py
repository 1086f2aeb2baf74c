"""Signatures for discovery, computed without running user code (signature_text.py turns them into text).

``inspect.signature`` probes ``__wrapped__``, ``__signature__`` and ``_partialmethod`` with ``hasattr``/``getattr``
(so a ``__getattr__``, a metaclass ``__getattribute__`` or a property runs), and its error messages and ``str()``
call ``repr`` on the object, on default values and on annotations. ``signature_of`` follows the same rules
(Python 3.11's) over static lookups (``static.get``) and hands to ``inspect`` only objects for which it runs
nothing of the user's: plain functions and builtins. ``render`` formats a Signature as ``str()`` would, but shows
default values and annotations only through reprs that are C code or built from static reads.

When Python itself has no signature, ``NoSignature.reported`` is False (discovery shows none); when
only user code could tell (a property ``__signature__``, a class whose metaclass hooks attribute access on a text
signature path, ...), it is True and the message says why.
"""

from __future__ import annotations

import enum
import functools
import inspect
import sys
import types
from typing import Any

from . import static
from .signature_text import BUILTIN_CALLABLES, render
from .static import MISSING, Dynamic, NoSignature, refuse

_MAX_DEPTH = 64
_NON_USER_DEFINED = (
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
    types.BuiltinFunctionType,
)
_BOUND_BUILTINS = (types.BuiltinFunctionType, types.MethodWrapperType)
_ATTRIBUTE_HOOKS = ("__getattribute__", "__class__")
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD


def _static(obj: Any, name: str) -> Any:
    try:
        return static.get(obj, name)
    except Dynamic as error:
        raise refuse(str(error)) from None


def _bound(signature: inspect.Signature) -> inspect.Signature:
    """``signature`` without its first (self/cls) parameter, as inspect shows bound methods and constructors."""
    parameters = tuple(signature.parameters.values())
    if not parameters or parameters[0].kind in (_KEYWORD_ONLY, _VAR_KEYWORD):
        raise NoSignature("invalid method signature")
    if parameters[0].kind is _VAR_POSITIONAL:
        return signature
    return signature.replace(parameters=parameters[1:])


def _partial(wrapped: inspect.Signature, args: tuple[Any, ...], keywords: dict[str, Any]) -> inspect.Signature:
    """``wrapped`` after a functools.partial binds ``args``/``keywords`` (inspect's rules, on a stand-in)."""
    try:
        wrapped.bind_partial(*args, **keywords)  # inspect's own failure message would repr the partial
    except TypeError:
        raise NoSignature("the partial's arguments do not bind") from None

    def stand_in(*_args: Any, **_kwargs: Any) -> None: ...

    stand_in.__signature__ = wrapped  # type: ignore[attr-defined]
    return inspect.signature(functools.partial(stand_in, *args, **keywords))


def _unwrap(obj: Any) -> Any:
    """``inspect.unwrap`` with inspect.signature's stop rule, through static ``__wrapped__`` reads."""
    seen = {id(obj)}
    while type(obj) is not types.MethodType and _static(obj, "__signature__") is MISSING:
        wrapped = _static(obj, "__wrapped__")
        if wrapped is MISSING:
            break
        obj = wrapped
        if id(obj) in seen or len(seen) >= sys.getrecursionlimit():
            raise NoSignature("wrapper loop")
        seen.add(id(obj))
    return obj


def _hooks_attributes(obj: Any) -> bool:
    """True when reading ``obj.__class__`` (as isinstance does) could run a Python-level hook."""
    return not issubclass(type(obj), types.ModuleType) and static.defines_in_python(type(obj), _ATTRIBUTE_HOOKS)


def _builtin(obj: Any) -> inspect.Signature:
    """inspect's text-signature path for builtins; it reads ``__self__``'s class and the defining module."""
    if issubclass(type(obj), _BOUND_BUILTINS) and _hooks_attributes(static.get_quietly(obj, "__self__")):
        raise refuse("the builtin is bound to an object whose class hooks attribute access")
    module_name = static.get_quietly(obj, "__module__")
    module = sys.modules.get(module_name) if type(module_name) is str else None
    if module is not None and static.lookup(type(module), "__dict__") is not vars(types.ModuleType)["__dict__"]:
        raise refuse(f"sys.modules[{module_name!r}] is not a plain module")
    try:
        return inspect.signature(obj, follow_wrapped=False)
    except (ValueError, TypeError) as error:
        raise NoSignature(type(error).__name__) from None


def _user_defined(value: Any) -> Any:
    return None if value is MISSING or issubclass(type(value), _NON_USER_DEFINED) else value


def _class_level(cls: type, name: str) -> Any:
    try:
        return static.class_get(cls, name)
    except Dynamic as error:
        raise refuse(str(error)) from None


def _class(cls: type, depth: int) -> inspect.Signature:
    """A class's signature: a metaclass ``__call__``, else the closest ``__new__``/``__init__``, else builtins'."""
    call = _user_defined(_class_level(type(cls), "__call__"))
    if call is not None:
        return _bound(signature_of(call, depth + 1))
    new = _user_defined(_class_level(cls, "__new__"))
    init = _user_defined(_class_level(cls, "__init__"))
    for base in static.mro(cls):
        namespace = static.class_dict(base)
        if new is not None and "__new__" in namespace:
            return _bound(signature_of(new, depth + 1))
        if init is not None and "__init__" in namespace:
            return _bound(signature_of(init, depth + 1))
    classes = static.mro(cls)
    for base in classes[:-1]:
        if type.__dict__["__text_signature__"].__get__(base):
            if type(base) is not type:
                raise refuse("the text signature belongs to a class with a custom metaclass")
            try:
                return inspect.signature(base)  # a builtin (or plain C) type: inspect reads only C attributes
            except (ValueError, TypeError) as error:
                raise NoSignature(type(error).__name__) from None
    if not any(klass is type for klass in classes):
        if _class_level(cls, "__init__") is object.__init__ and _class_level(cls, "__new__") is object.__new__:
            return inspect.signature(object)
        raise NoSignature("no signature found for builtin type")
    raise NoSignature("callable is not supported by signature")


_ENUM_SIGNATURE = enum.Enum.__dict__.get("__signature__")
_ENUM_TYPE = getattr(enum, "EnumType", enum.EnumMeta)


def _is_enum_signature(obj: Any, explicit: Any) -> bool:
    """Python 3.12+ enums answer ``__signature__`` with a classmethod of ``enum.Enum`` that inspect calls: that
    stdlib code reads only the class's members, so it is trusted for classes whose metaclass is EnumType itself."""
    return (
        type(_ENUM_SIGNATURE) is classmethod
        and type(obj) is _ENUM_TYPE
        and type(explicit) is types.MethodType
        and static.method_parts(explicit)[0] is _ENUM_SIGNATURE.__func__
    )


def _partialmethod(method: functools.partialmethod[Any], depth: int) -> inspect.Signature:
    func, args, keywords = (static.get_quietly(method, name) for name in ("func", "args", "keywords"))
    if type(args) is not tuple or type(keywords) is not dict:
        raise NoSignature("unexpected partialmethod state")
    wrapped = signature_of(func, depth + 1)
    partial = _partial(wrapped, (None, *args), keywords)
    first = next(iter(wrapped.parameters.values()), None)
    if first is None:
        raise NoSignature("invalid partialmethod")
    if first.kind is _VAR_POSITIONAL:
        return partial
    return partial.replace(parameters=(first, *partial.parameters.values()))


def signature_of(obj: Any, depth: int = 0) -> inspect.Signature:
    """``inspect.signature(obj)`` without running user code, or NoSignature."""
    if depth > _MAX_DEPTH:
        raise NoSignature("too deeply nested")
    if not callable(obj):
        raise NoSignature("not callable")
    if type(obj) is types.MethodType:
        return _bound(signature_of(static.method_parts(obj)[0], depth + 1))
    obj = _unwrap(obj)
    if type(obj) is types.MethodType:
        return signature_of(obj, depth + 1)
    explicit = _static(obj, "__signature__")
    if _is_enum_signature(obj, explicit):
        return _delegate(obj)
    if explicit is not MISSING and explicit is not None:
        if type(explicit) is not inspect.Signature:
            raise NoSignature("__signature__ is not an inspect.Signature")
        return explicit
    partialmethod = _static(obj, "_partialmethod")
    if type(partialmethod) is functools.partialmethod:
        return _partialmethod(partialmethod, depth)
    if partialmethod is not MISSING and type(obj) is types.FunctionType:
        raise refuse("_partialmethod is not a functools.partialmethod")
    tp = type(obj)
    if tp is types.FunctionType:
        return inspect.signature(obj, follow_wrapped=False)  # reads code, defaults and annotations only
    if issubclass(tp, BUILTIN_CALLABLES):  # builtin callable types cannot be subclassed in Python
        return _builtin(obj)
    if issubclass(tp, functools.partial):
        func, args, keywords = static.partial_parts(obj)
        return _partial(signature_of(func, depth + 1), args, keywords or {})
    if issubclass(tp, type):
        return _class(obj, depth)
    if _functionlike(obj):
        return _delegate(obj)
    if _method_descriptor_like(tp):  # inspect reads it as a builtin: only a text signature gives one
        if static.is_heap_type(tp) or not _text_signature(obj):
            raise NoSignature("no signature found for builtin")
        return _delegate(obj)
    if not static.is_heap_type(tp):
        raise NoSignature("callable is not supported by signature")
    call = _user_defined(_class_level(tp, "__call__"))
    if call is None:
        raise NoSignature("callable is not supported by signature")
    return _bound(signature_of(call, depth + 1))


_FUNCTION_ATTRIBUTES = ("__name__", "__code__", "__defaults__", "__kwdefaults__", "__annotations__")


def _functionlike(obj: Any) -> bool:
    """inspect's duck test for function-like objects (Cython functions), when all it reads is plain C data."""
    if static.defines_in_python(type(obj), (*_FUNCTION_ATTRIBUTES, *_ATTRIBUTE_HOOKS, "__getattr__")):
        return False
    name, code, defaults, kwdefaults, annotations = (static.get_quietly(obj, n) for n in _FUNCTION_ATTRIBUTES)
    return (
        type(name) is str
        and type(code) is types.CodeType
        and (defaults is None or type(defaults) is tuple)
        and (kwdefaults is None or type(kwdefaults) is dict)
        and (annotations is None or type(annotations) is dict)
    )


def _method_descriptor_like(tp: type) -> bool:
    return static.lookup(tp, "__get__") is not MISSING and static.lookup(tp, "__set__") is MISSING


def _text_signature(obj: Any) -> bool:
    text = static.get_quietly(obj, "__text_signature__")
    return type(text) is str and bool(text)


def _delegate(obj: Any) -> inspect.Signature:
    """inspect.signature for an object whose signature inspect reads from C data alone."""
    try:
        return inspect.signature(obj, follow_wrapped=False)
    except (ValueError, TypeError) as error:
        raise NoSignature(type(error).__name__) from None


def signature_text(obj: Any) -> str:
    """The rendered signature of ``obj``, or NoSignature."""
    return render(signature_of(obj))
