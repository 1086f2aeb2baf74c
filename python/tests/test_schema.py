"""Annotation -> JSON Schema, argument conversion and signature tokens (ipython_mcp_worker.schema.tool_schema)."""

# The legacy typing spellings (List, Optional, Union, ...) are exercised on purpose.
# ruff: noqa: UP006, UP007, UP035, UP045

import functools
import inspect
import typing
from typing import Annotated, Any, Dict, FrozenSet, List, Literal, Optional, Set, Tuple, Union

import pytest

from ipython_mcp_worker.protocol.errors import OpError
from ipython_mcp_worker.schema.fingerprint import canonical_json, schema_fingerprint
from ipython_mcp_worker.schema.tool_schema import (
    UNSUPPORTED_SIGNATURE_REASONS,
    ArgumentError,
    analyze_callable,
    input_schema,
    signature_token,
)

# No ``from __future__ import annotations`` here on purpose: most annotations below are real objects, and
# the string-annotation cases are spelled out (or exec'd with the future import) explicitly.


def obj_schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def schema_of_param(annotation_holder) -> dict:
    return input_schema(annotation_holder)["properties"]["x"]


def reason_of(callable_obj) -> tuple[str, str | None]:
    with pytest.raises(OpError) as caught:
        input_schema(callable_obj)
    assert caught.value.code == "unsupported_signature"
    details = caught.value.details
    assert details["reason"] in UNSUPPORTED_SIGNATURE_REASONS
    return details["reason"], details["parameter"]


# -- supported annotations -------------------------------------------------------------------------------


def f_str(x: str): ...
def f_int(x: int): ...
def f_float(x: float): ...
def f_bool(x: bool): ...
def f_none(x: None): ...
def f_nonetype(x: type(None)): ...
def f_list(x: list[int]): ...
def f_typing_list(x: List[str]): ...
def f_set(x: set[str]): ...
def f_typing_set(x: Set[int]): ...
def f_frozenset(x: frozenset[int]): ...
def f_typing_frozenset(x: FrozenSet[str]): ...
def f_var_tuple(x: tuple[float, ...]): ...
def f_typing_var_tuple(x: Tuple[int, ...]): ...
def f_fixed_tuple(x: tuple[int, str, bool]): ...
def f_empty_tuple(x: tuple[()]): ...
def f_dict(x: dict[str, float]): ...
def f_typing_dict(x: Dict[str, list[int]]): ...
def f_pipe_union(x: int | str): ...
def f_union(x: Union[str, int, None]): ...
def f_optional(x: Optional[int]): ...
def f_union_dedupe(x: Union[list[int], List[int], int]): ...
def f_literal(x: Literal["a", 1, 2.5, True, None]): ...
def f_literal_bool_int(x: Literal[1, True, 0, False]): ...
def f_nested(x: dict[str, list[tuple[int, Optional[str]]]]): ...


SUPPORTED = [
    (f_str, {"type": "string"}),
    (f_int, {"type": "integer"}),
    (f_float, {"type": "number"}),
    (f_bool, {"type": "boolean"}),
    (f_none, {"type": "null"}),
    (f_nonetype, {"type": "null"}),
    (f_list, {"type": "array", "items": {"type": "integer"}}),
    (f_typing_list, {"type": "array", "items": {"type": "string"}}),
    (f_set, {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
    (f_typing_set, {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
    (f_frozenset, {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
    (f_typing_frozenset, {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
    (f_var_tuple, {"type": "array", "items": {"type": "number"}}),
    (f_typing_var_tuple, {"type": "array", "items": {"type": "integer"}}),
    (
        f_fixed_tuple,
        {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}, {"type": "boolean"}],
            "minItems": 3,
            "maxItems": 3,
            "items": False,
        },
    ),
    (f_empty_tuple, {"type": "array", "prefixItems": [], "minItems": 0, "maxItems": 0, "items": False}),
    (f_dict, {"type": "object", "additionalProperties": {"type": "number"}}),
    (
        f_typing_dict,
        {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}},
    ),
    (f_pipe_union, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    (f_union, {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}),
    (f_optional, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    (f_union_dedupe, {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "integer"}]}),
    (f_literal, {"enum": ["a", 1, 2.5, True, None]}),
    (f_literal_bool_int, {"enum": [1, True, 0, False]}),
    (
        f_nested,
        {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"anyOf": [{"type": "string"}, {"type": "null"}]}],
                    "minItems": 2,
                    "maxItems": 2,
                    "items": False,
                },
            },
        },
    ),
]


@pytest.mark.parametrize(("fn", "expected"), SUPPORTED, ids=lambda item: getattr(item, "__name__", ""))
def test_supported_annotation(fn, expected) -> None:
    assert input_schema(fn) == obj_schema({"x": expected}, ["x"])


def test_literal_keeps_bool_as_bool() -> None:
    enum = schema_of_param(f_literal_bool_int)["enum"]
    assert [type(value) for value in enum] == [int, bool, int, bool]
    assert canonical_json(enum) == "[1,true,0,false]"


def test_top_level_shape_defaults_and_declaration_order() -> None:
    def fn(
        b: int, a: str = "x", *, c: tuple[int, int] = (1, 2), d: dict[str, Any] | None = None
    ) -> list[int]:
        return []

    with pytest.raises(OpError):  # dict[str, Any] is not supported
        input_schema(fn)

    def good(b: int, a: str = "x", *, z: float, c: tuple[int, int] = (1, 2), d: Optional[list[int]] = None):
        return None

    schema = input_schema(good)
    assert list(schema["properties"]) == ["b", "a", "z", "c", "d"]
    assert schema["required"] == ["b", "z"]
    assert schema["properties"]["a"] == {"type": "string", "default": "x"}
    assert schema["properties"]["c"]["default"] == [1, 2]
    assert schema["properties"]["d"] == {
        "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}],
        "default": None,
    }
    assert schema["additionalProperties"] is False


def test_exact_json_defaults_are_copied() -> None:
    default = {"k": [1.5, True, None, (1, "a")]}

    def fn(x: dict[str, list[Union[float, bool, None, tuple[int, str]]]] = default):
        return x

    schema = input_schema(fn)
    assert schema["properties"]["x"]["default"] == {"k": [1.5, True, None, [1, "a"]]}
    default["k"].append(2.0)
    assert schema["properties"]["x"]["default"] == {"k": [1.5, True, None, [1, "a"]]}


def test_deterministic() -> None:
    def fn(a: set[int], b: Literal["x", "y"] = "y", *, c: Optional[dict[str, float]] = None):
        return None

    first, second = analyze_callable(fn), analyze_callable(fn)
    assert first.schema == second.schema
    assert first.canonical == second.canonical == canonical_json(first.schema)
    assert first.fingerprint == schema_fingerprint(first.schema)
    assert input_schema(fn) is not input_schema(fn)


def test_return_annotation_is_ignored() -> None:
    def one(x: int) -> int:
        return x

    def two(x: int) -> str:
        return str(x)

    assert analyze_callable(one).canonical == analyze_callable(two).canonical


def test_annotations_resolve_against_the_callable_globals() -> None:
    namespace: dict[str, Any] = {}
    exec(
        "from __future__ import annotations\nAlias = list[int]\ndef f(x: Alias, y: 'Missing' = 1): return x\n",
        namespace,
    )
    reason, parameter = reason_of(namespace["f"])
    assert (reason, parameter) == ("unresolved_annotation", "y")
    namespace["Missing"] = int
    assert input_schema(namespace["f"])["properties"] == {
        "x": {"type": "array", "items": {"type": "integer"}},
        "y": {"type": "integer", "default": 1},
    }


def test_nested_string_annotations_resolve() -> None:
    namespace: dict[str, Any] = {}
    exec(
        "def f(x: list['int'], y: 'dict[str, Optional[int]]'): ...\nfrom typing import Optional\n", namespace
    )
    assert input_schema(namespace["f"])["properties"]["x"] == {"type": "array", "items": {"type": "integer"}}
    assert input_schema(namespace["f"])["properties"]["y"] == {
        "type": "object",
        "additionalProperties": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    }
    exec("def g(x: Optional[list['list[\\'int\\']']]): ...\n", namespace)
    assert input_schema(namespace["g"])["properties"]["x"] == {
        "anyOf": [{"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}, {"type": "null"}]
    }


# -- rejections -------------------------------------------------------------------------------------------


def r_unannotated(x, y: int): ...
def r_unresolved(x: "NoSuchName"): ...  # noqa: F821
def r_unresolved_syntax(x: "list[int"): ...  # noqa: F722
def r_any(x: Any): ...
def r_bare_list(x: list): ...
def r_dict_int_keys(x: dict[int, str]): ...
def r_set_of_lists(x: set[list[int]]): ...
def r_annotated(x: Annotated[int, "meta"]): ...
def r_object(x: object): ...
def r_bytes_literal(x: Literal[b"x"]): ...
def r_big_literal(x: Literal[2**60]): ...
def r_bad_tuple(x: tuple[int, ..., str]): ...
def r_callable(x: typing.Callable[[], int]): ...
def r_default_object(x: int = object()): ...
def r_default_nan(x: float = float("nan")): ...
def r_default_set(x: set[int] = frozenset()): ...
def r_default_big(x: int = 2**53): ...
def r_default_nested(x: dict[str, int] = {"a": {1: 2}}): ...  # noqa: B006
def r_positional_only(x: int, /, y: int): ...
def r_var_positional(x: int, *args: int): ...
def r_var_keyword(x: int, **kwargs: int): ...
async def r_coroutine(x: int): ...
def r_generator(x: int):
    yield x


async def r_async_generator(x: int):
    yield x


class AsyncCallable:
    async def __call__(self, x: int):
        return x


class AsyncGenCallable:
    async def __call__(self, x: int):
        yield x


class GenCallable:
    def __call__(self, x: int):
        yield x


class BadSignature:
    __signature__ = "not a signature"

    def __call__(self, x: int):
        return x


REJECTIONS = [
    (r_unannotated, "unannotated", "x"),
    (r_unresolved, "unresolved_annotation", "x"),
    (r_unresolved_syntax, "unresolved_annotation", "x"),
    (r_any, "unsupported_annotation", "x"),
    (r_bare_list, "unsupported_annotation", "x"),
    (r_dict_int_keys, "unsupported_annotation", "x"),
    (r_set_of_lists, "unsupported_annotation", "x"),
    (r_annotated, "unsupported_annotation", "x"),
    (r_object, "unsupported_annotation", "x"),
    (r_bytes_literal, "unsupported_annotation", "x"),
    (r_big_literal, "unsupported_annotation", "x"),
    (r_bad_tuple, "unsupported_annotation", "x"),
    (r_callable, "unsupported_annotation", "x"),
    (r_default_object, "non_json_default", "x"),
    (r_default_nan, "non_json_default", "x"),
    (r_default_set, "non_json_default", "x"),
    (r_default_big, "non_json_default", "x"),
    (r_default_nested, "non_json_default", "x"),
    (r_positional_only, "positional_only", "x"),
    (r_var_positional, "var_positional", "args"),
    (r_var_keyword, "var_keyword", "kwargs"),
    (r_coroutine, "coroutine_function", None),
    (r_generator, "generator_function", None),
    (r_async_generator, "async_generator_function", None),
    (AsyncCallable(), "async_callable_object", None),
    (AsyncGenCallable(), "async_callable_object", None),
    (GenCallable(), "generator_callable_object", None),
    (BadSignature(), "no_signature", None),
    (42, "no_signature", None),
]


@pytest.mark.parametrize(
    ("obj", "reason", "parameter"),
    REJECTIONS,
    ids=[f"{index}-{item[1]}" for index, item in enumerate(REJECTIONS)],
)
def test_rejection(obj, reason, parameter) -> None:
    assert reason_of(obj) == (reason, parameter)


def test_every_reason_is_exercised() -> None:
    assert {reason for _, reason, _ in REJECTIONS} == set(UNSUPPORTED_SIGNATURE_REASONS)


def test_rejection_through_partial_and_bound_method() -> None:
    assert reason_of(functools.partial(r_coroutine, 1))[0] == "coroutine_function"

    class Holder:
        async def method(self, x: int):
            return x

        def gen(self, x: int):
            yield x

    assert reason_of(Holder().method)[0] == "coroutine_function"
    assert reason_of(Holder().gen)[0] == "generator_function"
    assert reason_of(functools.partial(AsyncCallable()))[0] == "async_callable_object"


def test_builtin_positional_only() -> None:
    assert reason_of(len) == ("positional_only", "obj")


def test_error_is_structured() -> None:
    with pytest.raises(OpError) as caught:
        input_schema(r_unannotated)
    wire = caught.value.to_wire()
    assert wire["code"] == "unsupported_signature"
    assert wire["details"] == {"parameter": "x", "reason": "unannotated"}
    assert "x" in wire["message"]


# -- classes ----------------------------------------------------------------------------------------------


def test_class_with_init() -> None:
    class Point:
        label: str  # class attribute annotations are not constructor parameters

        def __init__(self, x: int, y: int = 0) -> None:
            self.x, self.y = x, y

    assert input_schema(Point) == obj_schema(
        {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}}, ["x"]
    )


def test_class_without_constructor() -> None:
    class Empty:
        value: int = 3

    assert input_schema(Empty) == obj_schema({}, [])


def test_metaclass_call_wins() -> None:
    class Meta(type):
        def __call__(cls, m: str):
            return super().__call__(1)

    class WithMeta(metaclass=Meta):
        def __new__(cls, n: int):
            return super().__new__(cls)

        def __init__(self, i: int) -> None:
            pass

    assert input_schema(WithMeta) == obj_schema({"m": {"type": "string"}}, ["m"])


def test_new_wins_over_init_in_the_same_class() -> None:
    class Both:
        def __new__(cls, n: int):
            return super().__new__(cls)

        def __init__(self, *args: Any) -> None:
            pass

    assert input_schema(Both) == obj_schema({"n": {"type": "integer"}}, ["n"])


def test_closest_constructor_in_the_mro_wins() -> None:
    class BaseNew:
        def __new__(cls, n: int):
            return super().__new__(cls)

    class ChildInit(BaseNew):
        def __init__(self, i: str) -> None:
            pass

    class BaseInit:
        def __init__(self, i: str) -> None:
            pass

    class ChildNew(BaseInit):
        def __new__(cls, n: int):
            return super().__new__(cls)

    class GrandChild(ChildInit):
        pass

    assert input_schema(BaseNew) == obj_schema({"n": {"type": "integer"}}, ["n"])
    assert input_schema(ChildInit) == obj_schema({"i": {"type": "string"}}, ["i"])
    assert input_schema(ChildNew) == obj_schema({"n": {"type": "integer"}}, ["n"])
    assert input_schema(GrandChild) == obj_schema({"i": {"type": "string"}}, ["i"])
    assert input_schema(functools.partial(GrandChild)) == obj_schema({"i": {"type": "string"}}, ["i"])


def test_class_constructor_rejections() -> None:
    class Meta(type):
        async def __call__(cls, x: int):
            return None

    class AsyncMade(metaclass=Meta):
        pass

    class Untyped:
        def __init__(self, x) -> None:
            pass

    class Star:
        def __init__(self, **options: int) -> None:
            pass

    assert reason_of(AsyncMade)[0] == "coroutine_function"
    assert reason_of(Untyped) == ("unannotated", "x")
    assert reason_of(Star) == ("var_keyword", "options")


def test_class_string_annotations_resolve_against_the_constructor_globals() -> None:
    namespace: dict[str, Any] = {}
    exec(
        "from __future__ import annotations\n"
        "class Box:\n"
        "    def __init__(self, items: list[Item]): self.items = items\n"
        "Item = int\n",
        namespace,
    )
    assert input_schema(namespace["Box"])["properties"] == {
        "items": {"type": "array", "items": {"type": "integer"}}
    }


# -- partial, wraps, methods, callable objects -------------------------------------------------------------


def base(a: int, b: str, c: float = 1.5, *, d: bool = False) -> str:
    return f"{a}{b}{c}{d}"


def test_partial_schema() -> None:
    schema = input_schema(functools.partial(base, 1, d=True))
    assert schema == obj_schema(
        {
            "b": {"type": "string"},
            "c": {"type": "number", "default": 1.5},
            "d": {"type": "boolean", "default": True},
        },
        ["b"],
    )
    assert reason_of(functools.partial(base, d=object())) == ("non_json_default", "d")


def test_wraps_follows_the_wrapped_signature() -> None:
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        return wrapper

    assert input_schema(decorator(base)) == input_schema(base)


def test_explicit_signature_wins() -> None:
    def fn(*args: Any, **kwargs: Any):
        return args, kwargs

    fn.__signature__ = inspect.Signature(
        [inspect.Parameter("q", inspect.Parameter.KEYWORD_ONLY, annotation="int")]
    )
    assert input_schema(fn) == obj_schema({"q": {"type": "integer"}}, ["q"])


def test_bound_method_and_callable_object() -> None:
    class Adder:
        def __init__(self, base: int) -> None:
            self.base = base

        def add(self, x: int) -> int:
            return self.base + x

        def __call__(self, y: float) -> float:
            return self.base + y

    adder = Adder(1)
    assert input_schema(adder.add) == obj_schema({"x": {"type": "integer"}}, ["x"])
    assert input_schema(adder) == obj_schema({"y": {"type": "number"}}, ["y"])


# -- argument conversion -----------------------------------------------------------------------------------


def test_convert_arguments_to_python_values() -> None:
    def fn(
        i: int,
        s: set[int],
        fs: frozenset[str],
        t: tuple[int, ...],
        fixed: tuple[int, str],
        lit: Literal[1, True, "a"],
        nested: dict[str, list[tuple[int, int]]],
        either: Union[set[int], list[str]],
        num: float,
        flag: bool,
        maybe: Optional[str] = None,
    ): ...

    analysis = analyze_callable(fn)
    converted = analysis.convert_arguments(
        {
            "i": 2.0,
            "s": [1, 2],
            "fs": ["a"],
            "t": [1, 2, 3],
            "fixed": [1, "x"],
            "lit": 1.0,
            "nested": {"k": [[1, 2]]},
            "either": ["x", "y"],
            "num": 3,
            "flag": True,
        }
    )
    assert converted == {
        "i": 2,
        "s": {1, 2},
        "fs": frozenset({"a"}),
        "t": (1, 2, 3),
        "fixed": (1, "x"),
        "lit": 1,
        "nested": {"k": [(1, 2)]},
        "either": ["x", "y"],
        "num": 3,
        "flag": True,
    }
    assert type(converted["i"]) is int
    assert type(converted["s"]) is set
    assert type(converted["lit"]) is int
    assert analysis.convert_arguments({**converted_json(), "lit": True})["lit"] is True
    assert analysis.convert_arguments({**converted_json(), "either": [1, 2]})["either"] == {1, 2}


def converted_json() -> dict[str, Any]:
    return {
        "i": 1,
        "s": [],
        "fs": [],
        "t": [],
        "fixed": [1, "x"],
        "lit": "a",
        "nested": {},
        "either": [],
        "num": 0,
        "flag": False,
    }


@pytest.mark.parametrize(
    ("change", "parameter", "reason"),
    [
        ({"i": True}, "i", "type"),
        ({"i": 1.5}, "i", "type"),
        ({"num": False}, "num", "type"),
        ({"num": "1"}, "num", "type"),
        ({"flag": 1}, "flag", "type"),
        ({"maybe": 3}, "maybe", "type"),
        ({"lit": 2}, "lit", "enum"),
        ({"lit": "b"}, "lit", "enum"),
        ({"fixed": [1]}, "fixed", "length"),
        ({"fixed": [1, "x", 2]}, "fixed", "length"),
        ({"fixed": ["1", "x"]}, "fixed", "type"),
        ({"s": [1, 1]}, "s", "duplicate"),
        ({"s": [1, 1.0]}, "s", "duplicate"),
        ({"s": "12"}, "s", "type"),
        ({"nested": {"k": [[1, "2"]]}}, "nested", "type"),
        ({"nested": []}, "nested", "type"),
        ({"extra": 1}, "extra", "unexpected"),
    ],
)
def test_convert_arguments_rejections(change, parameter, reason) -> None:
    def fn(
        i: int,
        s: set[int],
        fs: frozenset[str],
        t: tuple[int, ...],
        fixed: tuple[int, str],
        lit: Literal[1, True, "a"],
        nested: dict[str, list[tuple[int, int]]],
        either: Union[set[int], list[str]],
        num: float,
        flag: bool,
        maybe: Optional[str] = None,
    ): ...

    analysis = analyze_callable(fn)
    analysis.convert_arguments(converted_json())
    with pytest.raises(ArgumentError) as caught:
        analysis.convert_arguments({**converted_json(), **change})
    assert caught.value.parameter == parameter
    assert caught.value.reason == reason
    assert parameter in caught.value.message


def test_convert_arguments_missing_and_not_an_object() -> None:
    analysis = analyze_callable(base)
    with pytest.raises(ArgumentError) as caught:
        analysis.convert_arguments({"a": 1})
    assert (caught.value.parameter, caught.value.reason) == ("b", "missing")
    with pytest.raises(ArgumentError) as caught:
        analysis.convert_arguments([1, "b"])
    assert (caught.value.parameter, caught.value.reason) == (None, "type")
    assert analysis.convert_arguments({"a": 1, "b": "x"}) == {"a": 1, "b": "x"}


def test_convert_error_messages_are_bounded() -> None:
    def fn(x: dict[str, int]): ...

    with pytest.raises(ArgumentError) as caught:
        analyze_callable(fn).convert_arguments({"x": {"k" * 10_000: "v"}})
    assert len(caught.value.message) < 400


# -- signature tokens --------------------------------------------------------------------------------------


def fresh_function():
    def fn(a: int, b: list[int] = [1], *, c: str = "x") -> int:  # noqa: B006
        return a

    return fn


def test_token_is_stable_for_an_unchanged_callable() -> None:
    fn = fresh_function()
    assert signature_token(fn) == signature_token(fn)
    hash(signature_token(fn))
    assert signature_token(fn) != signature_token(fresh_function())


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda fn: setattr(fn, "__defaults__", ([2],)), id="defaults-replaced"),
        pytest.param(lambda fn: fn.__defaults__[0].append(2), id="mutable-default-mutated"),
        pytest.param(lambda fn: fn.__kwdefaults__.update(c="y"), id="kwdefaults-mutated"),
        pytest.param(lambda fn: fn.__annotations__.update(a=str), id="annotations-mutated"),
        pytest.param(lambda fn: setattr(fn, "__annotations__", {"a": int}), id="annotations-replaced"),
        pytest.param(lambda fn: setattr(fn, "__code__", (lambda a, b=[1], *, c="x": a).__code__), id="code"),
        pytest.param(lambda fn: setattr(fn, "__signature__", inspect.Signature()), id="signature"),
        pytest.param(lambda fn: setattr(fn, "__wrapped__", base), id="wrapped-added"),
    ],
)
def test_token_changes_with_signature_state(mutate) -> None:
    fn = fresh_function()
    before = signature_token(fn)
    mutate(fn)
    assert signature_token(fn) != before


def test_token_follows_the_wrapped_chain() -> None:
    inner = fresh_function()

    @functools.wraps(inner)
    def outer(*args, **kwargs):
        return inner(*args, **kwargs)

    before = signature_token(outer)
    assert signature_token(outer) == before
    inner.__kwdefaults__["c"] = "changed"
    assert signature_token(outer) != before
    before = signature_token(outer)
    outer.__wrapped__ = fresh_function()
    assert signature_token(outer) != before


def test_token_of_partial() -> None:
    fn = fresh_function()
    part = functools.partial(fn, 1, c="z")
    before = signature_token(part)
    assert signature_token(part) == before
    part.keywords["c"] = "other"
    assert signature_token(part) != before
    before = signature_token(part)
    fn.__defaults__ = ([5],)
    assert signature_token(part) != before
    assert signature_token(functools.partial(fn, 1, c="z")) != signature_token(
        functools.partial(fn, 1, c="z")
    )


def test_token_of_classes_tracks_every_constructor() -> None:
    class Meta(type):
        pass

    class Base(metaclass=Meta):
        def __init__(self, a: int) -> None:
            pass

    class Child(Base):
        pass

    token = signature_token(Child)
    assert signature_token(Child) == token

    def new_init(self, b: str) -> None:
        pass

    Base.__init__ = new_init
    assert signature_token(Child) != token
    token = signature_token(Child)

    def child_new(cls, *args: Any):
        return object.__new__(cls)

    Child.__new__ = child_new
    assert signature_token(Child) != token
    token = signature_token(Child)

    def meta_call(cls, z: int):
        return None

    Meta.__call__ = meta_call
    assert signature_token(Child) != token
    token = signature_token(Child)
    new_init.__defaults__ = ("d",)
    assert signature_token(Child) != token


def test_token_of_callable_object_and_method() -> None:
    class Tool:
        def __call__(self, x: int) -> int:
            return x

        def run(self, y: int) -> int:
            return y

    tool = Tool()
    bound = tool.run
    token, bound_token = signature_token(tool), signature_token(bound)
    assert signature_token(tool) == token and signature_token(bound) == bound_token

    def replacement(self, x: str) -> str:
        return x

    Tool.__call__ = replacement
    assert signature_token(tool) != token
    assert signature_token(tool.run) != bound_token  # a new bound method object


def test_token_with_string_annotations_always_recomputes() -> None:
    namespace: dict[str, Any] = {}
    exec("def f(x: 'int'): return x\n", namespace)
    assert signature_token(namespace["f"]) != signature_token(namespace["f"])


def test_token_of_builtins_is_stable() -> None:
    assert signature_token(len) == signature_token(len)
    fromkeys = dict.fromkeys  # each attribute access makes a new bound builtin
    assert signature_token(fromkeys) == signature_token(fromkeys)


def test_token_never_raises() -> None:
    class Hostile:
        def __getattr__(self, name: str):
            raise RuntimeError(name)

        def __call__(self, x: int) -> int:
            return x

    hostile = Hostile()
    assert isinstance(signature_token(hostile), tuple)
