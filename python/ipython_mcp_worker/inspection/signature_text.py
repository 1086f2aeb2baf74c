"""Signature text for discovery: ``str(inspect.Signature)`` without running the reprs of user objects.

``Signature.__str__`` calls ``repr`` on every default value and ``inspect.formatannotation`` (getattr on the
annotation, then ``repr``) on every annotation: user code. ``render`` produces the same text where that text
comes from C code on builtin data (numbers, strings, containers of them, classes, functions, enum members with the
stock repr, objects with ``object.__repr__``) and reads everything else statically: another object shows as
``<module.Type object>``, and typing constructs are spelled out from their parts.
"""

from __future__ import annotations

import enum
import inspect
import sys
import types
import typing
from typing import Any

from . import static
from .static import MISSING, is_one_of, refuse

_MAX_ITEMS = 64
_MAX_LITERAL = 4096
#: The C callable types (their signatures and reprs involve no user code).
BUILTIN_CALLABLES = (
    types.BuiltinFunctionType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)
_SCALARS = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis), type(NotImplemented))
_OBJECT_REPR = object.__dict__["__repr__"]
_ENUM_REPRS = tuple(cls.__dict__["__repr__"] for cls in (enum.Enum, enum.Flag) if "__repr__" in cls.__dict__)
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD


class _Budget:
    def __init__(self) -> None:
        self.left = _MAX_ITEMS

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _type_name(tp: type, strip_typing: bool = True) -> str:
    module, qualname = static.type_module(tp), static.type_qualname(tp) or "?"
    if module is None or module == "builtins" or (strip_typing and module == "typing"):
        return qualname
    return f"{module}.{qualname}"


def value_text(value: Any, budget: _Budget | None = None) -> str:
    """A default value as repr shows it when that repr is C code on builtin data; else a static stand-in."""
    budget = budget or _Budget()
    tp = type(value)
    if not budget.take():
        return "..."
    if is_one_of(tp, _SCALARS):
        if (tp is str or tp is bytes) and len(value) > _MAX_LITERAL:
            return repr(value[:_MAX_LITERAL]) + "..."
        try:
            return repr(value)
        except ValueError:  # an int beyond the digit limit
            return f"<{tp.__name__}>"
    if is_one_of(tp, (list, tuple, set, frozenset)):
        items = [value_text(item, budget) for item in _first(value)]
        body = ", ".join(items) + (", ..." if len(value) > _MAX_ITEMS else "")
        if tp is list:
            return f"[{body}]"
        if tp is tuple:
            return f"({body},)" if len(value) == 1 else f"({body})"
        if not value:
            return f"{tp.__name__}()"
        return f"{{{body}}}" if tp is set else f"frozenset({{{body}}})"
    if tp is dict:
        pairs = [f"{value_text(k, budget)}: {value_text(v, budget)}" for k, v in _first(value.items())]
        return "{" + ", ".join(pairs) + (", ..." if len(value) > _MAX_ITEMS else "") + "}"
    if issubclass(tp, type):
        return type.__repr__(value)
    if tp is types.FunctionType or issubclass(tp, BUILTIN_CALLABLES):
        return repr(value)  # C reprs from the function's own name fields
    if issubclass(tp, types.ModuleType):
        name = static.module_dict(value).get("__name__")
        return f"<module {name!r}>" if type(name) is str else "<module>"
    if issubclass(tp, enum.Enum) and is_one_of(static.lookup(tp, "__repr__"), _ENUM_REPRS):
        namespace = static.instance_dict(value) or {}
        name = namespace.get("_name_")
        if type(name) is str:
            return f"<{static.type_name(tp)}.{name}: {value_text(namespace.get('_value_'), budget)}>"
    if static.lookup(tp, "__repr__") is _OBJECT_REPR:
        text: str = _OBJECT_REPR(value)  # C: the type's module and qualname, and the address
        return text
    return f"<{static.qualified_type_name(tp)} object>"


def _first(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if len(out) >= _MAX_ITEMS:
            break
        out.append(item)
    return out


def _typing_part(obj: Any, name: str) -> Any:
    return static.get_quietly(obj, name)


def annotation_text(annotation: Any, budget: _Budget | None = None) -> str:
    """``inspect.formatannotation``'s text, from static reads (typing constructs rendered structurally).

    ``budget`` bounds the parts rendered in all (shared sub-annotations could otherwise multiply the work)."""
    budget = budget or _Budget()
    if not budget.take():
        return "..."
    tp = type(annotation)
    if annotation is None:
        return "None"
    if annotation is Ellipsis:
        return "..."
    if tp is str:
        return repr(annotation)
    if issubclass(tp, type):
        return _type_name(annotation)
    if tp is types.GenericAlias or tp is types.UnionType:
        origin, args = _typing_part(annotation, "__origin__"), _typing_part(annotation, "__args__")
        if type(args) is not tuple:
            return f"<{static.qualified_type_name(tp)}>"
        parts = [annotation_text(arg, budget) for arg in args[:_MAX_ITEMS]]
        if tp is types.UnionType:  # X | None shows None, not NoneType
            return " | ".join("None" if arg is type(None) else part for arg, part in zip(args, parts, strict=False))
        return f"{annotation_text(origin, budget)}[{', '.join(parts) or '()'}]"
    if id(tp) in _TYPING_TYPES:
        return _typing_text(annotation, tp, budget)
    return f"<{static.qualified_type_name(tp)} object>"


def _typing_text(annotation: Any, tp: type, budget: _Budget) -> str:
    name = _typing_part(annotation, "_name")
    origin = _typing_part(annotation, "__origin__")
    args = _typing_part(annotation, "__args__")
    if is_one_of(tp, _VERBATIM_TYPING):
        return repr(annotation).replace("typing.", "")  # names and flags of its own, no user objects
    label = name if type(name) is str else annotation_text(origin, budget) if origin is not MISSING else None
    if label is None:
        return f"<{static.qualified_type_name(tp)} object>"
    if type(args) is not tuple or (tp is _SPECIAL_GENERIC):
        return label
    if tp is _ANNOTATED:
        metadata = _typing_part(annotation, "__metadata__")
        extras = [value_text(item) for item in metadata[:_MAX_ITEMS]] if type(metadata) is tuple else ["..."]
        return f"Annotated[{annotation_text(origin, budget)}, {', '.join(extras)}]"
    if tp is _LITERAL:
        return f"Literal[{', '.join(value_text(arg) for arg in args[:_MAX_ITEMS])}]"
    parts = [annotation_text(arg, budget) for arg in args[:_MAX_ITEMS]]
    if tp is _UNION:
        if len(args) == 2 and any(arg is type(None) for arg in args):
            return f"Optional[{parts[1] if args[0] is type(None) else parts[0]}]"
        return f"Union[{', '.join(parts)}]"
    if is_one_of(tp, _CALLABLE) and parts:
        params = "..." if len(args) == 2 and args[0] is Ellipsis else f"[{', '.join(parts[:-1])}]"
        prefix = "collections.abc.Callable" if tp is not _CALLABLE[0] else "Callable"
        return f"{prefix}[{params}, {parts[-1]}]"
    return f"{label}[{', '.join(parts) or '()'}]"


# Ids (identity, never ==) of typing's own classes; the modules keep them alive.
_TYPING_TYPES = frozenset(
    id(value)
    for module in (typing, sys.modules["_collections_abc"])
    for value in vars(module).values()
    if issubclass(type(value), type) and static.type_module(value) in ("typing", "_collections_abc")
)
_VERBATIM_TYPING = tuple(
    getattr(typing, name)
    for name in ("TypeVar", "ParamSpec", "ForwardRef", "TypeVarTuple", "_SpecialForm")
    if hasattr(typing, name)
)
_SPECIAL_GENERIC = getattr(typing, "_SpecialGenericAlias", None)
_ANNOTATED = getattr(typing, "_AnnotatedAlias", None)
_LITERAL = getattr(typing, "_LiteralGenericAlias", None)
_UNION = getattr(typing, "_UnionGenericAlias", None)
_CALLABLE = (
    getattr(typing, "_CallableGenericAlias", None),
    getattr(sys.modules["_collections_abc"], "_CallableGenericAlias", None),
)


def _parameter_text(parameter: inspect.Parameter) -> str:
    if type(parameter) is not inspect.Parameter:
        raise refuse("the signature holds a Parameter subclass")
    text = parameter.name
    annotated = parameter.annotation is not inspect.Parameter.empty
    if annotated:
        text = f"{text}: {annotation_text(parameter.annotation)}"
    if parameter.default is not inspect.Parameter.empty:
        text = f"{text}{' = ' if annotated else '='}{value_text(parameter.default)}"
    if parameter.kind is _VAR_POSITIONAL:
        return "*" + text
    if parameter.kind is _VAR_KEYWORD:
        return "**" + text
    return text


def render(signature: inspect.Signature) -> str:
    """``str(signature)``, with defaults and annotations shown through ``value_text``/``annotation_text``."""
    parts: list[str] = []
    positional_only_pending = False
    keyword_only_marker = True
    for parameter in signature.parameters.values():
        text = _parameter_text(parameter)
        kind = parameter.kind
        if kind is _POSITIONAL_ONLY:
            positional_only_pending = True
        elif positional_only_pending:
            parts.append("/")
            positional_only_pending = False
        if kind is _VAR_POSITIONAL:
            keyword_only_marker = False
        elif kind is _KEYWORD_ONLY and keyword_only_marker:
            parts.append("*")
            keyword_only_marker = False
        parts.append(text)
    if positional_only_pending:
        parts.append("/")
    rendered = f"({', '.join(parts)})"
    if signature.return_annotation is not inspect.Signature.empty:
        rendered += f" -> {annotation_text(signature.return_annotation)}"
    return rendered
