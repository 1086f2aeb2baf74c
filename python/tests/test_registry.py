"""The dynamic tool registry (ipython_mcp_worker.registry.dynamic_tools): registration rules, reconciliation, calls."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest

from ipython_mcp_worker.protocol.errors import OpError
from ipython_mcp_worker.protocol.limits import Limits
from ipython_mcp_worker.registry.dynamic_tools import Registry
from ipython_mcp_worker.schema.fingerprint import schema_fingerprint

STABLE = frozenset(
    {
        "list",
        "execute",
        "call_function",
        "search",
        "reload",
        "inspect",
        "remove",
        "reset",
        "register_tool",
        "unregister_tool",
        "runtime_status",
    }
)
PROTECTED = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open", "math"})


def make(ns: dict[str, Any] | None = None, **limits: int) -> tuple[Registry, dict[str, Any]]:
    namespace = {} if ns is None else ns
    return Registry(namespace, Limits(**limits), PROTECTED.__contains__, STABLE), namespace


def fails(code: str, op, *args) -> OpError:
    with pytest.raises(OpError) as caught:
        op(*args)
    assert caught.value.code == code, caught.value.to_wire()
    return caught.value


def reg(registry: Registry, name: str, tool_name: str | None = None, description: str | None = None) -> dict:
    return registry.register({"name": name, "tool_name": tool_name, "description": description})


def call(registry: Registry, tool_name: str, arguments: Any, fingerprint: str | None = None) -> dict:
    if fingerprint is None:
        fingerprint = next(
            tool["fingerprint"] for tool in registry.discover({})["tools"] if tool["tool_name"] == tool_name
        )
    return registry.call({"tool_name": tool_name, "arguments": arguments, "fingerprint": fingerprint})


def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Indented detail.
    """
    return a + b


# -- registration -----------------------------------------------------------------------------------------


def test_register_returns_the_registration_snapshot() -> None:
    registry, ns = make()
    ns["add"] = add
    result = reg(registry, "add")
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert result == {
        "tool_name": "add",
        "name": "add",
        "description": "Add two integers.\n\nIndented detail.",
        "description_truncated": False,
        "input_schema": schema,
        "fingerprint": schema_fingerprint(schema),
        "revision": 1,
    }
    assert registry.revision == 1


def test_explicit_tool_name_and_description() -> None:
    registry, ns = make()
    ns["add"] = add
    result = reg(registry, "add", "sum-two_numbers", "Adds.")
    assert (result["tool_name"], result["name"], result["description"]) == ("sum-two_numbers", "add", "Adds.")
    assert call(registry, "sum-two_numbers", {"a": 1})["value"] == 3


def test_missing_docstring_gives_an_empty_description() -> None:
    registry, ns = make()

    def nodoc(x: int) -> int:
        return x

    ns["nodoc"] = nodoc
    assert reg(registry, "nodoc")["description"] == ""


def test_partial_description_comes_from_the_function() -> None:
    registry, ns = make()
    ns["add_one"] = functools.partial(add, b=1)
    result = reg(registry, "add_one")
    assert result["description"].startswith("Add two integers.")
    assert result["input_schema"]["properties"]["b"] == {"type": "integer", "default": 1}


def test_description_is_bounded() -> None:
    registry, ns = make(max_tool_description_chars=10)

    def long_doc(x: int) -> int:
        """0123456789abcdef"""
        return x

    ns["long_doc"] = long_doc
    ns["same_doc"] = long_doc
    ns["third_doc"] = long_doc
    result = reg(registry, "long_doc")
    assert (result["description"], result["description_truncated"]) == ("0123456789", True)
    assert reg(registry, "same_doc", None, "0123456789")["description_truncated"] is False
    error = fails("invalid_arguments", reg, registry, "third_doc", None, "0123456789X")
    assert error.details["limit"] == 10
    assert registry.revision == 2


@pytest.mark.parametrize("name", ["a.b", "1abc", "class", "", "a-b", "x y", "None"])
def test_invalid_backing_names(name: str) -> None:
    registry, ns = make()
    ns[name] = add
    fails("invalid_name", reg, registry, name)
    assert registry.revision == 0


@pytest.mark.parametrize("name", ["_private", "__dunder__", "_", "In", "get_ipython", "math"])
def test_protected_backing_names(name: str) -> None:
    registry, ns = make()
    ns[name] = add
    fails("protected_name", reg, registry, name)


@pytest.mark.parametrize("tool_name", ["1abc", "_abc", "-abc", "a b", "a.b", "café", "abc\n", "", "a" * 65])
def test_invalid_tool_names(tool_name: str) -> None:
    registry, ns = make()
    ns["add"] = add
    fails("invalid_name", reg, registry, "add", tool_name)
    assert registry.revision == 0


def test_tool_name_limits() -> None:
    registry, ns = make(max_tool_name_chars=5)
    ns["add"] = add
    ns["longer"] = add
    ns["café"] = add
    assert reg(registry, "add", "a2345")["tool_name"] == "a2345"
    fails("invalid_name", reg, registry, "longer")  # the default tool name is the backing name
    fails("invalid_name", reg, registry, "café")  # an identifier, but not an ASCII tool name
    assert reg(registry, "café", "cafe")["name"] == "café"


def test_malformed_params() -> None:
    registry, ns = make()
    ns["add"] = add
    fails("invalid_arguments", registry.register, {"tool_name": "x"})
    fails("invalid_arguments", registry.register, {"name": "add", "tool_name": 3})
    fails("invalid_arguments", registry.register, {"name": "add", "description": ["x"]})
    fails("invalid_arguments", registry.register, ["add"])
    assert registry.revision == 0


def test_lookup_failures() -> None:
    registry, ns = make()
    ns["value"] = 3
    fails("name_not_found", reg, registry, "missing")
    fails("not_callable", reg, registry, "value")

    def untyped(x):
        return x

    ns["untyped"] = untyped
    error = fails("unsupported_signature", reg, registry, "untyped")
    assert error.details == {"parameter": "x", "reason": "unannotated"}
    assert registry.revision == 0
    assert registry.discover({}) == {"revision": 0, "tools": [], "stale": []}


def test_inspection_raising_is_unsupported_signature() -> None:
    registry, ns = make()

    class Weird:
        @property
        def __signature__(self):
            raise RuntimeError("boom")

        def __call__(self, x: int) -> int:
            return x

    ns["weird"] = Weird()
    error = fails("unsupported_signature", reg, registry, "weird")
    assert error.details["reason"] == "no_signature"


# -- collisions and limits ----------------------------------------------------------------------------------


def test_collisions_change_nothing() -> None:
    registry, ns = make()
    ns["add"] = add
    ns["execute"] = add
    ns["other"] = add
    first = reg(registry, "add")
    assert fails("name_collision", reg, registry, "execute").details["with"] == "stable"
    assert fails("name_collision", reg, registry, "other", "execute").details["with"] == "stable"
    assert fails("name_collision", reg, registry, "other", "add").details["with"] == "dynamic"
    assert fails("name_collision", reg, registry, "add", "add2").details["with"] == "backing_symbol"
    assert registry.revision == 1
    assert registry.discover({})["tools"] == [first]
    assert reg(registry, "execute", "execute2")["tool_name"] == "execute2"


def test_re_registration_of_a_live_tool_refreshes_it() -> None:
    registry, ns = make(max_dynamic_tools=1)
    ns["add"] = add
    first = reg(registry, "add")
    again = reg(registry, "add", None, "Adds, freshly described.")
    assert again["description"] == "Adds, freshly described."
    assert again["input_schema"] == first["input_schema"]
    assert again["revision"] == registry.revision == 2  # a full registry refreshes in place
    assert registry.discover({})["tools"] == [again]
    assert call(registry, "add", {"a": 1})["value"] == 3

    def subtract(a: int, b: int = 2) -> int:
        """A different object under the same name."""
        return a - b

    ns["add"] = subtract
    third = reg(registry, "add")
    assert (third["description"], third["revision"]) == ("A different object under the same name.", 3)
    assert call(registry, "add", {"a": 1})["value"] == -1


def test_registry_full() -> None:
    registry, ns = make(max_dynamic_tools=2)
    for name in ("one", "two", "three"):
        ns[name] = add
    reg(registry, "one")
    reg(registry, "two")
    error = fails("registry_full", reg, registry, "three")
    assert error.details == {"limit": 2}
    assert registry.revision == 2
    # A stale registration still occupies its slot, but re-registering it is allowed at capacity.
    del ns["two"]
    assert registry.discover({})["stale"] == ["two"]
    fails("registry_full", reg, registry, "three")
    ns["two"] = add
    assert reg(registry, "two")["revision"] == registry.revision
    registry.unregister({"names": ["one"]})
    assert reg(registry, "three")["tool_name"] == "three"


# -- unregister, discover, clear ------------------------------------------------------------------------------


def test_unregister_partitions_sorted_and_is_idempotent() -> None:
    registry, ns = make()
    ns["b_tool"] = add
    ns["a_tool"] = add
    reg(registry, "b_tool")
    reg(registry, "a_tool")
    assert registry.revision == 2
    result = registry.unregister({"names": ["zzz", "b_tool", "execute", "a_tool", "b_tool"]})
    assert result == {"unregistered": ["a_tool", "b_tool"], "unknown": ["execute", "zzz"], "revision": 3}
    assert registry.unregister({"names": ["a_tool", "b_tool"]}) == {
        "unregistered": [],
        "unknown": ["a_tool", "b_tool"],
        "revision": 3,
    }
    assert registry.unregister({"names": []}) == {"unregistered": [], "unknown": [], "revision": 3}
    fails("invalid_arguments", registry.unregister, {"names": "a_tool"})
    fails("invalid_arguments", registry.unregister, {"names": [1]})
    assert registry.discover({})["tools"] == []


def test_unregister_removes_only_the_requested_and_stale_ones_too() -> None:
    registry, ns = make()
    ns["keep"] = add
    ns["gone"] = add
    reg(registry, "keep")
    reg(registry, "gone")
    del ns["gone"]
    assert registry.discover({})["stale"] == ["gone"]
    assert registry.unregister({"names": ["gone"]})["unregistered"] == ["gone"]
    result = registry.discover({})
    assert [tool["tool_name"] for tool in result["tools"]] == ["keep"]
    assert result["stale"] == []


def test_discover_sorted_snapshot() -> None:
    registry, ns = make()
    for name in ("zeta", "alpha", "mid"):
        ns[name] = add
        reg(registry, name)
    result = registry.discover({})
    assert [tool["tool_name"] for tool in result["tools"]] == ["alpha", "mid", "zeta"]
    assert [tool["revision"] for tool in result["tools"]] == [2, 3, 1]
    assert result["revision"] == 3
    # The snapshot is a copy: mutating it does not touch the registry.
    result["tools"][0]["input_schema"]["properties"].clear()
    assert registry.discover({})["tools"][0]["input_schema"]["properties"]


def test_clear() -> None:
    registry, ns = make()
    registry.clear()
    assert registry.revision == 0
    ns["add"] = add
    reg(registry, "add")
    registry.clear()
    assert registry.revision == 2
    assert registry.discover({}) == {"revision": 2, "tools": [], "stale": []}
    fails("tool_not_found", registry.call, {"tool_name": "add", "arguments": {}, "fingerprint": "x"})
    registry.clear()
    assert registry.revision == 2
    assert reg(registry, "add")["revision"] == 3


# -- reconciliation --------------------------------------------------------------------------------------------


def define(ns: dict[str, Any], source: str) -> None:
    exec(source, ns)


ORIGINAL = "def tool(a: int, b: str = 'x') -> str:\n    '''Original doc.'''\n    return f'{a}{b}'\n"

STALE_CHANGES = {
    "add_param_with_default": "def tool(a: int, b: str = 'x', c: int = 0) -> str:\n    return ''\n",
    "remove_param": "def tool(a: int) -> str:\n    return ''\n",
    "rename_param": "def tool(a: int, bb: str = 'x') -> str:\n    return ''\n",
    "change_default": "def tool(a: int, b: str = 'y') -> str:\n    return ''\n",
    "change_annotation": "def tool(a: float, b: str = 'x') -> str:\n    return ''\n",
    "make_keyword_required": "def tool(a: int, *, b: str) -> str:\n    return ''\n",
    "unsupported_now": "def tool(a, b: str = 'x') -> str:\n    return ''\n",
    "not_callable_now": "tool = 3\n",
}


@pytest.mark.parametrize("source", list(STALE_CHANGES.values()), ids=list(STALE_CHANGES))
def test_incompatible_redefinition_is_stale(source: str) -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    registration = reg(registry, "tool")
    define(ns, source)
    result = registry.discover({})
    assert result == {"revision": 2, "tools": [], "stale": ["tool"]}
    error = fails("stale_registration", call, registry, "tool", {"a": 1}, registration["fingerprint"])
    assert error.details["reason"] == "stale"
    assert registry.revision == 2


def test_call_detects_staleness_and_advances_the_revision() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    registration = reg(registry, "tool")
    define(ns, STALE_CHANGES["change_default"])
    fails("stale_registration", call, registry, "tool", {"a": 1}, registration["fingerprint"])
    assert registry.revision == 2
    assert registry.discover({})["stale"] == ["tool"]
    assert registry.revision == 2


def test_stale_stays_stale_even_if_the_old_signature_returns() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    original = ns["tool"]
    reg(registry, "tool")
    define(ns, STALE_CHANGES["remove_param"])
    assert registry.discover({})["stale"] == ["tool"]
    ns["tool"] = original
    assert registry.discover({})["stale"] == ["tool"]
    define(ns, ORIGINAL)
    assert registry.discover({})["stale"] == ["tool"]
    assert registry.revision == 2


def test_re_registration_after_stale_takes_a_new_snapshot() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    reg(registry, "tool")
    define(ns, "def tool(a: int, c: int = 5) -> int:\n    '''New doc.'''\n    return a + c\n")
    # register reconciles the colliding registration itself: no discover needed in between.
    result = reg(registry, "tool")
    assert result["description"] == "New doc."
    assert list(result["input_schema"]["properties"]) == ["a", "c"]
    assert result["revision"] == registry.revision == 2
    assert registry.discover({})["stale"] == []
    assert call(registry, "tool", {"a": 1})["value"] == 6


def test_re_registration_under_another_tool_name_collides_while_stale() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    reg(registry, "tool")
    define(ns, STALE_CHANGES["change_annotation"])
    fails("name_collision", reg, registry, "tool", "tool2")
    assert registry.revision == 1  # a failing registration does not even record the staleness it saw
    assert registry.discover({})["stale"] == ["tool"]
    assert registry.revision == 2


def test_delete_backing_symbol() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    reg(registry, "tool")
    del ns["tool"]
    assert registry.discover({}) == {"revision": 2, "tools": [], "stale": ["tool"]}


def test_invalidate_names() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    ns["add"] = add
    reg(registry, "tool")
    reg(registry, "add", "adder")
    registry.invalidate_names(["tool", "unrelated"])
    assert registry.revision == 3
    registry.invalidate_names(["tool"])  # already stale: no change
    registry.invalidate_names([])
    assert registry.revision == 3
    result = registry.discover({})
    assert result["stale"] == ["tool"]
    assert [tool["tool_name"] for tool in result["tools"]] == ["adder"]
    # The binding is still there, but an invalidated registration stays stale until re-registered.
    fails("stale_registration", call, registry, "tool", {"a": 1}, "whatever")
    assert reg(registry, "tool")["revision"] == 4


def test_body_only_change_stays_callable_with_the_new_body() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    registration = reg(registry, "tool")
    define(ns, "def tool(a: int, b: str = 'x') -> int:\n    '''Brand new doc.'''\n    return a * 100\n")
    result = registry.discover({})
    assert result["stale"] == []
    assert result["revision"] == 1
    assert result["tools"] == [registration]  # description snapshot unchanged
    assert call(registry, "tool", {"a": 2}, registration["fingerprint"])["value"] == 200


def test_docstring_change_keeps_the_old_description() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    reg(registry, "tool")
    ns["tool"].__doc__ = "Changed in place."
    define(ns, "def tool(a: int, b: str = 'x') -> str:\n    '''Redefined doc.'''\n    return 'new'\n")
    tools = registry.discover({})["tools"]
    assert tools[0]["description"] == "Original doc."
    assert call(registry, "tool", {"a": 1})["value"] == "new"


def test_same_schema_new_conversion_is_adopted() -> None:
    registry, ns = make()
    define(ns, "def tool(xs: set[int]) -> str:\n    return type(xs).__name__\n")
    registration = reg(registry, "tool")
    assert call(registry, "tool", {"xs": [1, 2]})["value"] == "set"
    define(ns, "def tool(xs: frozenset[int]) -> str:\n    return type(xs).__name__\n")
    assert call(registry, "tool", {"xs": [1, 2]}, registration["fingerprint"])["value"] == "frozenset"


def test_in_place_mutations_are_detected() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    reg(registry, "tool")
    ns["tool"].__defaults__ = ("changed",)
    assert registry.discover({})["stale"] == ["tool"]

    registry, ns = make()
    define(ns, "def tool(a: int, b: list[int] = [1]) -> int:\n    return a\n")
    reg(registry, "tool")
    ns["tool"].__defaults__[0].append(2)
    assert registry.discover({})["stale"] == ["tool"]

    registry, ns = make()
    define(ns, ORIGINAL)
    reg(registry, "tool")
    ns["tool"].__annotations__["a"] = str
    assert registry.discover({})["stale"] == ["tool"]


def test_in_place_mutation_with_the_same_schema_stays_fresh() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    reg(registry, "tool")
    ns["tool"].__defaults__ = ("x",)  # a new tuple, equal content
    ns["tool"].__annotations__["a"] = int
    assert registry.discover({})["stale"] == []


def test_partial_and_wraps_state() -> None:
    registry, ns = make()
    define(ns, ORIGINAL)
    ns["part"] = functools.partial(ns["tool"], b="p")
    registration = reg(registry, "part")
    assert registration["input_schema"]["properties"]["b"]["default"] == "p"
    assert call(registry, "part", {"a": 1})["value"] == "1p"
    ns["part"].keywords["b"] = "q"
    assert registry.discover({})["stale"] == ["part"]

    registry, ns = make()
    define(ns, ORIGINAL)
    inner = ns["tool"]

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        return "wrapped:" + inner(*args, **kwargs)

    ns["wrapper"] = wrapper
    registration = reg(registry, "wrapper")
    assert registration["input_schema"]["required"] == ["a"]
    assert call(registry, "wrapper", {"a": 1, "b": "z"})["value"] == "wrapped:1z"
    inner.__defaults__ = ("other",)
    assert registry.discover({})["stale"] == ["wrapper"]


def test_replaced_class_constructor_is_stale() -> None:
    registry, ns = make()
    define(
        ns,
        "class Make:\n"
        "    def __new__(cls, x: int):\n"
        "        return {'x': x}\n"
        "class Base:\n"
        "    def __init__(self, n: int) -> None:\n"
        "        self.n = n\n"
        "class Child(Base):\n"
        "    pass\n",
    )
    made = reg(registry, "Make")
    reg(registry, "Child")
    assert call(registry, "Make", {"x": 4}, made["fingerprint"]) == {"value": {"x": 4}, "truncated": False}
    error = fails("result_not_json", call, registry, "Child", {"n": 1})
    assert error.details["type"] == "Child"

    # Same signature, new constructor: still fresh and served live.
    define(ns, "def _same(cls, x: int):\n    return {'same': x}\nMake.__new__ = _same\n")
    assert call(registry, "Make", {"x": 4}, made["fingerprint"])["value"] == {"same": 4}
    # A replaced constructor with another signature, found through the MRO: stale.
    define(ns, "def _init(self, n: str) -> None:\n    self.n = n\nBase.__init__ = _init\n")
    assert registry.discover({})["stale"] == ["Child"]
    # A metaclass-free class redefinition with a different constructor: stale too.
    define(ns, "class Make:\n    def __init__(self, y: int) -> None:\n        pass\n")
    assert registry.discover({})["stale"] == ["Child", "Make"]


# -- calls -------------------------------------------------------------------------------------------------------


def test_call_invokes_exactly_once_with_converted_keywords() -> None:
    registry, ns = make()
    seen: list[dict[str, Any]] = []

    def record(items: set[int], pair: tuple[int, str], *, flag: bool = False) -> list[int]:
        seen.append({"items": items, "pair": pair, "flag": flag})
        return sorted(items)

    ns["record"] = record
    reg(registry, "record")
    assert call(registry, "record", {"items": [3, 1], "pair": [1, "a"]}) == {
        "value": [1, 3],
        "truncated": False,
    }
    assert seen == [{"items": {1, 3}, "pair": (1, "a"), "flag": False}]


@pytest.mark.parametrize(
    ("arguments", "parameter", "reason"),
    [
        ({"a": True}, "a", "type"),
        ({"a": "1"}, "a", "type"),
        ({}, "a", "missing"),
        ({"a": 1, "c": 2}, "c", "unexpected"),
        ({"a": 1, "b": None}, "b", "type"),
        ([1], None, "type"),
        (None, None, "type"),
    ],
)
def test_invalid_arguments(arguments: Any, parameter: str | None, reason: str) -> None:
    registry, ns = make()
    calls: list[int] = []

    def counted(a: int, b: int = 2) -> int:
        calls.append(a)
        return a

    ns["counted"] = counted
    reg(registry, "counted")
    error = fails("invalid_arguments", call, registry, "counted", arguments)
    assert error.details["parameter"] == parameter
    assert error.details["reason"] == reason
    assert calls == []


def test_invalid_argument_messages_are_bounded() -> None:
    registry, ns = make(max_repr_chars=50)

    def keyed(m: dict[str, int]) -> int:
        return 0

    ns["keyed"] = keyed
    reg(registry, "keyed")
    error = fails("invalid_arguments", call, registry, "keyed", {"m": {"k" * 5000: "x"}})
    assert len(error.message) <= 50
    assert len(error.details["path"]) <= 80


def test_call_raised() -> None:
    registry, ns = make(max_traceback_chars=120, max_text_chars=20)

    def explode(a: int) -> int:
        raise ValueError("x" * 100)

    def leave(a: int) -> int:
        raise SystemExit(3)

    ns["explode"] = explode
    ns["leave"] = leave
    reg(registry, "explode")
    reg(registry, "leave")
    error = fails("call_raised", call, registry, "explode", {"a": 1})
    details = error.details
    assert details["type"] == "ValueError"
    assert (details["message"], details["message_truncated"]) == ("x" * 20, True)
    assert details["traceback_truncated"] is True
    assert len(details["traceback"]) == 120
    assert details["traceback"].rstrip().endswith("x" * 100)
    assert "ipython_mcp_worker" not in details["traceback"]
    assert fails("call_raised", call, registry, "leave", {"a": 1}).details["type"] == "SystemExit"

    registry, ns = make()
    ns["explode"] = explode
    reg(registry, "explode")
    details = fails("call_raised", call, registry, "explode", {"a": 1}).details
    assert details["traceback_truncated"] is False
    assert details["traceback"].startswith("Traceback (most recent call last):")
    assert "in explode" in details["traceback"]
    assert "ipython_mcp_worker" not in details["traceback"]


def test_keyboard_interrupt_propagates() -> None:
    registry, ns = make()

    def interrupted(a: int) -> int:
        raise KeyboardInterrupt

    ns["interrupted"] = interrupted
    reg(registry, "interrupted")
    with pytest.raises(KeyboardInterrupt):
        call(registry, "interrupted", {"a": 1})


def test_result_not_json_and_truncation() -> None:
    registry, ns = make(max_results=3)

    def opaque(a: int) -> object:
        return object()

    def many(n: int) -> list[int]:
        return list(range(n))

    ns["opaque"] = opaque
    ns["many"] = many
    reg(registry, "opaque")
    reg(registry, "many")
    error = fails("result_not_json", call, registry, "opaque", {"a": 1})
    assert error.details == {"type": "object", "path": "$"}
    assert call(registry, "many", {"n": 10}) == {"value": [0, 1, 2], "truncated": True}
    assert call(registry, "many", {"n": 2}) == {"value": [0, 1], "truncated": False}


def test_call_lookup_and_fingerprint() -> None:
    registry, ns = make()
    ns["add"] = add
    registration = reg(registry, "add")
    fails("tool_not_found", registry.call, {"tool_name": "nope", "arguments": {}, "fingerprint": "x"})
    fails("tool_not_found", registry.call, {"tool_name": "execute", "arguments": {}, "fingerprint": "x"})
    error = fails("stale_registration", call, registry, "add", {"a": 1}, "0" * 64)
    assert error.details["reason"] == "fingerprint_mismatch"
    assert error.details["fingerprint"] == registration["fingerprint"]
    fails("invalid_arguments", registry.call, {"tool_name": "add", "arguments": {"a": 1}})
    fails("invalid_arguments", registry.call, {"arguments": {"a": 1}, "fingerprint": "x"})
    assert registry.revision == 1
    assert call(registry, "add", {"a": 1, "b": 5}, registration["fingerprint"])["value"] == 6


def test_revision_is_monotonic_and_unchanged_on_failure() -> None:
    registry, ns = make(max_dynamic_tools=3)
    history = [registry.revision]

    def note() -> None:
        history.append(registry.revision)

    ns["add"] = add
    ns["plain"] = 1
    reg(registry, "add")
    note()
    for bad in ({"name": "plain"}, {"name": "missing"}, {"name": "add", "tool_name": "execute"}, {"name": "_x"}):
        with pytest.raises(OpError):
            registry.register({"tool_name": None, "description": None, **bad})
    note()
    registry.discover({})
    note()
    registry.unregister({"names": ["nothing"]})
    note()
    del ns["add"]
    registry.discover({})
    note()
    registry.discover({})
    note()
    ns["add"] = add
    reg(registry, "add")
    note()
    registry.unregister({"names": ["add"]})
    note()
    assert history == [0, 1, 1, 1, 1, 2, 2, 3, 4]


# -- a real IPython shell --------------------------------------------------------------------------------------


@pytest.fixture
def shell() -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    instance = InteractiveShell(config=config)
    try:
        yield instance
    finally:
        InteractiveShell.clear_instance()
        InteractiveShell._instance = None


def run(shell: Any, source: str) -> None:
    result = shell.run_cell(source, store_history=False, silent=True)
    assert result.success, result.error_in_exec or result.error_before_exec


def ipython_registry(shell: Any) -> Registry:
    return Registry(shell.user_ns, Limits(), PROTECTED.__contains__, STABLE)


def test_ipython_redefinitions(shell: Any) -> None:
    registry = ipython_registry(shell)
    run(
        shell,
        "def greet(name: str, punctuation: str = '!') -> str:\n    '''Say hello.'''\n    return 'hi ' + name + punctuation\n",
    )
    registration = reg(registry, "greet")
    assert registration["description"] == "Say hello."
    assert call(registry, "greet", {"name": "ada"})["value"] == "hi ada!"

    run(
        shell,
        "def greet(name: str, punctuation: str = '!') -> str:\n    '''Other.'''\n    return 'hello ' + name + punctuation\n",
    )
    assert registry.discover({})["tools"] == [registration]
    assert call(registry, "greet", {"name": "ada"}, registration["fingerprint"])["value"] == "hello ada!"

    run(shell, "def greet(name: str, punctuation: str = '?') -> str:\n    return name\n")
    assert registry.discover({})["stale"] == ["greet"]
    fails("stale_registration", call, registry, "greet", {"name": "ada"}, registration["fingerprint"])
    assert reg(registry, "greet")["input_schema"]["properties"]["punctuation"]["default"] == "?"


def test_ipython_delete_and_future_annotations(shell: Any) -> None:
    registry = ipython_registry(shell)
    run(
        shell,
        "from __future__ import annotations\n"
        "Vector = list[float]\n"
        "def norm(v: Vector, scale: float = 1.0) -> float:\n"
        "    return sum(x * x for x in v) ** 0.5 * scale\n",
    )
    registration = reg(registry, "norm")
    assert registration["input_schema"]["properties"]["v"] == {"type": "array", "items": {"type": "number"}}
    assert call(registry, "norm", {"v": [3, 4]})["value"] == 5.0
    run(shell, "def norm(v: Vector, scale: float = 1.0) -> float:\n    return -1.0\n")
    assert call(registry, "norm", {"v": [3, 4]}, registration["fingerprint"])["value"] == -1.0
    run(shell, "Vector = list[int]\n")  # the string annotation now resolves differently
    assert registry.discover({})["stale"] == ["norm"]

    run(shell, "def other(x: int) -> int:\n    return x\n")
    reg(registry, "other")
    run(shell, "del other\n")
    assert registry.discover({})["stale"] == ["norm", "other"]


def test_ipython_class_constructor(shell: Any) -> None:
    registry = ipython_registry(shell)
    run(
        shell,
        "class Meta(type):\n"
        "    def __call__(cls, size: int):\n"
        "        return {'size': size, 'kind': cls.__name__}\n"
        "class Box(metaclass=Meta):\n"
        "    def __init__(self, ignored: str) -> None:\n"
        "        pass\n",
    )
    registration = reg(registry, "Box")
    assert registration["input_schema"]["required"] == ["size"]
    assert call(registry, "Box", {"size": 2})["value"] == {"size": 2, "kind": "Box"}
    run(shell, "def _call(cls, size: int, extra: int = 0):\n    return {}\nMeta.__call__ = _call\n")
    assert registry.discover({})["stale"] == ["Box"]


def test_ipython_reset_clears(shell: Any) -> None:
    registry = ipython_registry(shell)
    run(shell, "def f(x: int) -> int:\n    return x\n")
    reg(registry, "f")
    shell.reset(new_session=False)
    registry.clear()
    assert registry.discover({}) == {"revision": 2, "tools": [], "stale": []}
    fails("name_not_found", reg, registry, "f")


def test_discover_with_the_known_revision_answers_unchanged_until_something_changes() -> None:
    registry, ns = make({"add": add})
    reg(registry, "add")
    full = registry.discover({})
    assert [tool["tool_name"] for tool in full["tools"]] == ["add"]
    assert registry.discover({"known_revision": full["revision"]}) == {"revision": full["revision"], "unchanged": True}
    assert "tools" in registry.discover({"known_revision": full["revision"] - 1})

    def redefined(a: int, b: int = 3) -> int:  # an incompatible redefinition in the namespace
        return a + b

    ns["add"] = redefined
    moved = registry.discover({"known_revision": full["revision"]})
    assert moved["revision"] == full["revision"] + 1 and moved["stale"] == ["add"] and moved["tools"] == []
    with pytest.raises(OpError) as raised:
        registry.discover({"known_revision": "1"})
    assert raised.value.code == "invalid_arguments"


def test_discover_reuses_the_last_reconciliation_until_unsettled():
    ns: dict = {}
    registry = Registry(ns, Limits(), lambda name: False, frozenset())

    def add(a: int) -> int:
        return a

    ns["add"] = add
    registry.register({"name": "add"})
    settled = registry.reconcile_all()

    def changed(a: str) -> str:
        return a

    ns["add"] = changed
    # Nothing ran between the reconciliation and discover as far as the worker knows (ops.py unsettles it
    # before every operation that may run user code).
    assert registry.discover({})["revision"] == settled
    registry.unsettle()
    assert registry.discover({})["stale"] == ["add"]
