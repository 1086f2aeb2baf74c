"""Attribute reads that run no user code: the static half of Python's attribute lookup.

Discovery (list, search, inspect) must answer even when an object's ``__getattr__``, ``__getattribute__`` (or its
metaclass's), a property or another descriptor hangs or raises. ``get(obj, name)`` answers what ``getattr`` would,
as far as that is decided by the type's MRO dicts and the instance ``__dict__`` alone:

* ``__getattr__`` and custom ``__getattribute__`` hooks are never consulted: an attribute that only they would
  produce is ``MISSING``;
* descriptors are resolved only when their ``__get__`` is known C code that runs nothing of the user's (slots,
  C getsets, functions, staticmethod, classmethod over a function, builtin method descriptors); a property or
  any other descriptor raises ``Dynamic``.

Type internals are read through ``type``'s own descriptors (``type.__dict__["__mro__"]`` and friends), so no
metaclass code runs either. ``module_of`` and ``doc_of`` build the namespace's metadata on top of ``get``.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__slots__": ()})()


class Dynamic(Exception):
    """The attribute exists, but only user code (a property, a Python-level descriptor) could produce its value."""


class NoSignature(Exception):
    """No signature for discovery; ``reported`` when only running user code could have given one."""

    def __init__(self, message: str, reported: bool = False) -> None:
        super().__init__(message)
        self.reported = reported


def refuse(message: str) -> NoSignature:
    """A NoSignature that says discovery declined to run user code."""
    return NoSignature(f"{message}; discovery runs no user code", reported=True)


_TYPE_DICT = type.__dict__["__dict__"]
_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_FLAGS = type.__dict__["__flags__"]
_TYPE_MODULE = type.__dict__["__module__"]
_TYPE_QUALNAME = type.__dict__["__qualname__"]
_TYPE_NAME = type.__dict__["__name__"]
_MODULE_DICT = vars(types.ModuleType)["__dict__"]
_FUNCTION_DOC = types.FunctionType.__dict__["__doc__"]
_FUNCTION_NAME = types.FunctionType.__dict__["__name__"]
_FUNCTION_QUALNAME = types.FunctionType.__dict__["__qualname__"]
_FUNCTION_MODULE = types.FunctionType.__dict__["__module__"]
_METHOD_FUNC = types.MethodType.__dict__["__func__"]
_METHOD_SELF = types.MethodType.__dict__["__self__"]
_PARTIAL_FUNC = functools.partial.__dict__["func"]
_PARTIAL_ARGS = functools.partial.__dict__["args"]
_PARTIAL_KEYWORDS = functools.partial.__dict__["keywords"]
_HEAPTYPE = 1 << 9
_MAX_PEEL = 100

# Descriptors whose __get__ is C code that runs nothing of the user's, whatever the instance.
_C_DESCRIPTORS = (types.MemberDescriptorType, types.GetSetDescriptorType)
_BUILTIN_DESCRIPTORS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)
# Names whose ``type`` getset calls the __get__ of the value stored in the class dict: read raw instead.
_RAW_TYPE_ATTRIBUTES = frozenset({"__doc__", "__annotations__"})


def type_text(descriptor: Any, tp: type) -> str | None:
    """``tp.__module__``/``__qualname__`` via ``type``'s descriptor (a str, or None): no metaclass code runs."""
    try:
        value = descriptor.__get__(tp, type)
    except Exception:  # noqa: BLE001 - a heap type may lack __module__
        return None
    return value if type(value) is str else None


def qualified_type_name(tp: type) -> str:
    """``module.qualname`` of a type (``builtins.int``)."""
    qualname = type_text(_TYPE_QUALNAME, tp) or "?"
    module = type_text(_TYPE_MODULE, tp)
    return f"{module}.{qualname}" if module else qualname


def type_module(tp: type) -> str | None:
    return type_text(_TYPE_MODULE, tp)


def type_qualname(tp: type) -> str | None:
    return type_text(_TYPE_QUALNAME, tp)


def type_name(tp: type) -> str | None:
    return type_text(_TYPE_NAME, tp)


def is_heap_type(tp: type) -> bool:
    """True for classes made by ``class`` statements (and heap C types); False for static builtin types."""
    return bool(_TYPE_FLAGS.__get__(tp) & _HEAPTYPE)


def mro(tp: type) -> tuple[type, ...]:
    value = _TYPE_MRO.__get__(tp)
    return value if type(value) is tuple else (tp,)


def class_dict(tp: type) -> Any:
    """The mappingproxy of ``tp``'s own namespace."""
    return _TYPE_DICT.__get__(tp)


def module_dict(module: types.ModuleType) -> dict[str, Any]:
    namespace: dict[str, Any] = _MODULE_DICT.__get__(module)
    return namespace


def lookup(tp: type, name: str) -> Any:
    """The raw value of ``name`` in the first class of ``tp``'s MRO that defines it, or MISSING."""
    for klass in mro(tp):
        namespace = _TYPE_DICT.__get__(klass)
        if name in namespace:
            return namespace[name]
    return MISSING


def defines_in_python(tp: type, names: tuple[str, ...]) -> bool:
    """True when a Python-level (heap) class in ``tp``'s MRO defines one of ``names`` itself."""
    for klass in mro(tp):
        if is_heap_type(klass):
            namespace = _TYPE_DICT.__get__(klass)
            if any(name in namespace for name in names):
                return True
    return False


def is_one_of(tp: Any, candidates: tuple[Any, ...]) -> bool:
    """``tp in candidates`` by identity: ``in`` compares with ``==``, which a metaclass ``__eq__`` may define."""
    return any(tp is candidate for candidate in candidates)


def _has(tp: type, name: str) -> bool:
    return lookup(tp, name) is not MISSING


def _is_data_descriptor(value: Any) -> bool:
    kind = type(value)
    return _has(kind, "__set__") or _has(kind, "__delete__")


def _bind(value: Any, instance: Any, owner: type, name: str) -> Any:
    """``value.__get__(instance, owner)`` for descriptors whose __get__ runs no user code; else Dynamic."""
    kind = type(value)
    if is_one_of(kind, _C_DESCRIPTORS) or is_one_of(kind, _BUILTIN_DESCRIPTORS):
        try:
            return value.__get__(instance, owner)
        except AttributeError:  # an empty slot
            return MISSING
        except TypeError as error:  # a builtin descriptor of another type
            raise Dynamic(f"{name} cannot be bound here") from error
    if kind is types.FunctionType:
        return value if instance is None else types.MethodType(value, instance)
    if kind is staticmethod:
        return value.__func__
    if kind is classmethod and type(value.__func__) is types.FunctionType:
        return types.MethodType(value.__func__, owner)
    if kind is property and instance is None:
        return value
    if not _has(kind, "__get__"):
        return value
    raise Dynamic(f"{name} is computed by a {qualified_type_name(kind)}")


def class_get(cls: type, name: str) -> Any:
    """``getattr(cls, name)`` for a class, statically (type_getattro's order; the metaclass's hooks never run)."""
    meta = type(cls)
    if name in _RAW_TYPE_ATTRIBUTES:
        namespace = _TYPE_DICT.__get__(cls)
        return _bind(namespace[name], None, cls, name) if name in namespace else MISSING
    meta_value = lookup(meta, name)
    if meta_value is not MISSING and _is_data_descriptor(meta_value):
        return _bind(meta_value, cls, meta, name)
    value = lookup(cls, name)
    if value is not MISSING:
        return _bind(value, None, cls, name)
    if meta_value is not MISSING:
        return _bind(meta_value, cls, meta, name)
    return MISSING


def instance_dict(obj: Any) -> dict[str, Any] | None:
    """The instance ``__dict__`` when the type's ``__dict__`` entry is the C one (not a property)."""
    tp = type(obj)
    descriptor = lookup(tp, "__dict__")
    if not is_one_of(type(descriptor), _C_DESCRIPTORS):
        return None
    try:
        value = descriptor.__get__(obj, tp)
    except (AttributeError, TypeError):
        return None
    return value if type(value) is dict else None


def get(obj: Any, name: str) -> Any:
    """What ``getattr(obj, name)`` would return, statically; MISSING when absent; Dynamic when computed."""
    tp = type(obj)
    if issubclass(tp, type):
        return class_get(obj, name)
    if tp is types.MethodType:  # a bound method forwards everything but its own slots to its function
        if name == "__func__":
            return _METHOD_FUNC.__get__(obj)
        if name == "__self__":
            return _METHOD_SELF.__get__(obj)
        return get(_METHOD_FUNC.__get__(obj), name)
    found = lookup(tp, name)
    if found is not MISSING and _is_data_descriptor(found):
        return _bind(found, obj, tp, name)
    namespace = instance_dict(obj)
    if namespace is not None and name in namespace:
        return namespace[name]
    if found is not MISSING:
        return _bind(found, obj, tp, name)
    return MISSING


def get_quietly(obj: Any, name: str) -> Any:
    """``get``, with a computed attribute read as MISSING."""
    try:
        return get(obj, name)
    except Dynamic:
        return MISSING


def method_parts(method: types.MethodType) -> tuple[Any, Any]:
    return _METHOD_FUNC.__get__(method), _METHOD_SELF.__get__(method)


def partial_parts(obj: functools.partial[Any]) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """(func, args, keywords) of a functools.partial (subclasses included), through partial's own slots."""
    return _PARTIAL_FUNC.__get__(obj), _PARTIAL_ARGS.__get__(obj), _PARTIAL_KEYWORDS.__get__(obj)


def peel(obj: Any) -> Any:
    """The function under bound methods and functools.partial layers (their module and docs are the useful ones)."""
    for _ in range(_MAX_PEEL):
        tp = type(obj)
        if tp is types.MethodType:
            obj = _METHOD_FUNC.__get__(obj)
        elif issubclass(tp, functools.partial):
            obj = _PARTIAL_FUNC.__get__(obj)
        else:
            break
    return obj


_HOOKS = ("__getattr__", "__getattribute__", "__class__")  # isinstance reads __class__
_INSPECTED = ("__signature__", "__wrapped__", "_partialmethod")


def runs_attribute_hooks(obj: Any) -> bool:
    """True when getattr-based inspection of ``obj`` (inspect.signature, schema analysis) could run user attribute
    code: a Python-level ``__getattr__``/``__getattribute__``/``__class__`` of ``obj``'s class (a class's
    metaclass), a computed ``__signature__``/``__wrapped__``/``_partialmethod``, or any of that in what it wraps."""
    pending: list[Any] = [obj]
    seen: set[int] = set()
    while pending and len(seen) < _MAX_PEEL:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        tp = type(current)
        if defines_in_python(tp, _HOOKS):
            return True
        if tp is types.MethodType:
            pending.append(_METHOD_FUNC.__get__(current))
        elif issubclass(tp, functools.partial):
            pending.append(_PARTIAL_FUNC.__get__(current))
        try:
            wrapped = [get(current, name) for name in _INSPECTED][1]
        except Dynamic:
            return True
        if wrapped is not MISSING:
            pending.append(wrapped)
    return bool(pending)


# -- namespace metadata ------------------------------------------------------------------------------------


def module_of(obj: Any, kind: str) -> str | None:
    """The module an object comes from, read statically (a str, or None)."""
    if kind == "module":
        value = module_dict(obj).get("__name__")
    elif kind == "class":
        value = type_module(obj)
    else:
        value = get_quietly(peel(obj) if kind == "function" else obj, "__module__")
    return value if type(value) is str else None


def _clean(doc: Any) -> str | None:
    return inspect.cleandoc(doc) if type(doc) is str else None


def _class_doc(cls: type) -> Any:
    """``inspect.getdoc``'s choice for a class: the first ``__doc__`` in the MRO that is not None."""
    classes = mro(cls)
    if len(classes) > 1:  # object's own docstring describes object, not its subclasses
        classes = tuple(klass for klass in classes if klass is not object)
    for klass in classes:
        doc = _TYPE_DICT.__get__(klass).get("__doc__")
        if doc is not None:
            return doc
    return None


def _member_doc(value: Any) -> Any:
    """The docstring of a raw class-dict entry (function, static/class method, property, builtin descriptor)."""
    kind = type(value)
    if kind is staticmethod or kind is classmethod:
        value = value.__func__
        kind = type(value)
    if kind is types.FunctionType:
        return _FUNCTION_DOC.__get__(value)
    if kind is property or is_one_of(kind, _BUILTIN_DESCRIPTORS):
        return get_quietly(value, "__doc__")
    return None


def _inherited_doc(owner: Any, name: str) -> Any:
    """``inspect._finddoc``'s answer for a method ``name`` without a docstring: the first one up ``owner``'s MRO."""
    if not issubclass(type(owner), type):
        return None
    for klass in mro(owner):
        namespace = _TYPE_DICT.__get__(klass)
        if name in namespace:
            doc = _member_doc(namespace[name])
            if doc is not None:
                return doc
    return None


def _defining_class(function: types.FunctionType) -> Any:
    """The class a function was defined in, by its ``__qualname__`` from its module (None for top-level ones)."""
    qualname, module_name = _FUNCTION_QUALNAME.__get__(function), _FUNCTION_MODULE.__get__(function)
    module = sys.modules.get(module_name) if type(module_name) is str else None
    if type(qualname) is not str or module is None or not issubclass(type(module), types.ModuleType):
        return None
    parts = qualname.split(".")[:-1]
    if not parts:
        return None
    owner: Any = module_dict(module).get(parts[0])
    for part in parts[1:]:
        if not issubclass(type(owner), type):
            return None
        owner = lookup(owner, part)
    return owner if issubclass(type(owner), type) else None


def _function_doc(obj: Any) -> Any:
    """The docstring of a function-kind object, inherited from the defining class's bases when missing."""
    owner = None
    if type(obj) is types.MethodType:
        func, self = method_parts(obj)
        owner = self if issubclass(type(self), type) else type(self)
        obj = func
    obj = peel(obj)
    if type(obj) is not types.FunctionType:
        return get_quietly(obj, "__doc__")
    doc = _FUNCTION_DOC.__get__(obj)
    if doc is not None:
        return doc
    name = _FUNCTION_NAME.__get__(obj)
    if type(name) is not str:
        return None
    return _inherited_doc(owner if owner is not None else _defining_class(obj), name)


def doc_of(obj: Any, kind: str) -> str | None:
    """The cleaned docstring (what ``inspect.getdoc`` gives), read statically; for instances the static ``__doc__``."""
    if kind == "module":
        return _clean(module_dict(obj).get("__doc__"))
    if kind == "class":
        return _clean(_class_doc(obj))
    if kind == "function":
        return _clean(_function_doc(obj))
    return _clean(get_quietly(obj, "__doc__"))
