"""Signature tokens: the registry's fast path. While the token of a binding stays equal, its schema cannot
have changed (beside tool_schema.py)."""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Literal

from .annotation_shapes import _BUILTIN_CALLABLES, _MAX_ANNOTATION_DEPTH, _MAX_TOKEN_DEPTH, _MAX_TOKEN_VALUES
from .resolution import _user_defined


class _Keep:
    """The objects a token's ids name, kept alive so an id can never be reused behind our back. Equal to every
    other ``_Keep``: tokens compare by their ids (integers, compared in C), not by these objects."""

    __slots__ = ("objects",)

    def __init__(self, objects: list[Any]) -> None:
        self.objects = objects

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Keep)

    def __hash__(self) -> int:
        return 0


def _ident(obj: Any, keep: list[Any]) -> int:
    """``obj`` by identity: its id, with ``obj`` kept alive by the token."""
    keep.append(obj)
    return id(obj)


def _volatile(keep: list[Any]) -> tuple[str, int]:
    """Equal to nothing: a part whose effect on the schema cannot be tracked forces recomputation (the id of a
    fresh object, kept alive by its token, never equals an id in another live token)."""
    marker = object()
    keep.append(marker)
    return ("volatile", id(marker))


class _Unreadable:
    """What ``_safe_getattr`` answers when reading the attribute raised: a fresh one each time."""

    __slots__ = ()


_MISSING = object()


def _safe_getattr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, _MISSING)
    except Exception:  # noqa: BLE001 - user __getattr__
        return _Unreadable()


def _annotation_is_volatile(annotation: Any, depth: int = 0) -> bool:
    """String or forward-reference annotations resolve against mutable globals: not trackable by identity."""
    if depth > _MAX_ANNOTATION_DEPTH or isinstance(annotation, (str, typing.ForwardRef)):
        return True
    if annotation is None or type(annotation) is type:
        # The common case (``int``, ``str``, ``-> None``), decided without typing's introspection: a plain class
        # has no origin and no arguments. An exact type check: a generic alias only pretends to be a class.
        return False
    try:
        if typing.get_origin(annotation) is Literal:
            return False
        return any(_annotation_is_volatile(arg, depth + 1) for arg in typing.get_args(annotation))
    except Exception:  # noqa: BLE001
        return True


class _Budget:
    """How many more values one token may take, and the objects its ids name (``_Keep``)."""

    def __init__(self) -> None:
        self.left = _MAX_TOKEN_VALUES
        self.keep: list[Any] = []


def _value_token(value: Any, budget: _Budget, depth: int = 0) -> Any:
    budget.left -= 1
    if budget.left < 0 or depth > _MAX_TOKEN_DEPTH:
        return _volatile(budget.keep)
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
    return _ident(value, budget.keep)


def _annotations_token(annotations: Any, keep: list[Any]) -> Any:
    if type(annotations) is not dict:
        return _ident(annotations, keep)
    return tuple(
        (key, _volatile(keep) if _annotation_is_volatile(value) else _ident(value, keep))
        for key, value in annotations.items()
    )


def _token(obj: Any, depth: int, budget: _Budget) -> tuple[Any, ...]:
    keep = budget.keep
    if depth > _MAX_TOKEN_DEPTH:
        return (_volatile(keep),)
    parts: list[Any] = [_ident(obj, keep), _ident(type(obj), keep), _ident(_safe_getattr(obj, "__signature__"), keep)]
    if isinstance(obj, functools.partial):
        parts += [
            "partial",
            _token(obj.func, depth + 1, budget),
            _value_token(obj.args, budget),
            _value_token(obj.keywords, budget),
        ]
    elif inspect.ismethod(obj):
        parts += ["method", _ident(obj.__self__, keep), _token(obj.__func__, depth + 1, budget)]
    elif inspect.isfunction(obj):
        parts += [
            "function",
            _ident(obj.__code__, keep),
            _value_token(obj.__defaults__, budget),
            _value_token(obj.__kwdefaults__, budget),
            _annotations_token(obj.__annotations__, keep),
        ]
    elif inspect.isclass(obj):
        metaclass = type(obj)
        parts += [
            "class",
            tuple(_ident(base, keep) for base in obj.__mro__),
            tuple(_ident(base.__dict__.get("__call__"), keep) for base in metaclass.__mro__),
            tuple(
                (
                    _ident(base.__dict__.get("__new__"), keep),
                    _ident(base.__dict__.get("__init__"), keep),
                    _ident(base.__dict__.get("__signature__"), keep),
                )
                for base in obj.__mro__
            ),
        ]
        for owner, name in ((metaclass, "__call__"), (obj, "__new__"), (obj, "__init__")):
            constructor = _user_defined(owner, name)
            parts.append(None if constructor is None else _token(constructor, depth + 1, budget))
    elif isinstance(obj, _BUILTIN_CALLABLES):
        text_signature = _safe_getattr(obj, "__text_signature__")
        parts += ["builtin", text_signature if text_signature is None or type(text_signature) is str
                  else _ident(text_signature, keep)]
    else:
        call = _user_defined(type(obj), "__call__")
        if call is None or isinstance(call, _BUILTIN_CALLABLES):
            parts += ["instance", _ident(call, keep)]
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
    budget = _Budget()
    try:
        parts = _token(callable_obj, 0, budget)
    except Exception:  # noqa: BLE001 - user attribute access; fall back to "always recompute"
        parts = (_volatile(budget.keep),)
    # Ids and exact scalars only, compared in C; the objects behind the ids ride along, alive.
    return (*parts, _Keep(budget.keep))
