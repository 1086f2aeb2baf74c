"""Namespace operations against a real, in-process IPython shell (history disabled, one shell per test)."""

from __future__ import annotations

import collections.abc
import importlib
import importlib.util
import json
import os
import sys
import time

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from ipython_mcp_worker.namespace.operations import RUNTIME_NAMES, NamespaceOperations
from ipython_mcp_worker.protocol.errors import OpError
from ipython_mcp_worker.protocol.limits import Limits


@pytest.fixture
def shell():
    config = Config()
    config.HistoryManager.enabled = False
    instance = InteractiveShell(config=config)
    yield instance
    InteractiveShell.clear_instance()


def make(shell, limits=None, preload=(), aliases=None) -> NamespaceOperations:
    namespace = NamespaceOperations(shell, limits or Limits(), list(preload), dict(aliases or {}))
    namespace.bind_configured_modules()
    return namespace


def run(shell, code: str) -> None:
    result = shell.run_cell(code, store_history=True)  # as the worker runs cells: the count advances
    assert result.success, result.error_before_exec or result.error_in_exec


def op_error(call, params) -> OpError:
    with pytest.raises(OpError) as caught:
        call(params)
    return caught.value


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """Write importable modules into a directory on sys.path; forget them afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def write(name: str, source: str):
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        written.append(name)
        importlib.invalidate_caches()
        return path

    yield write
    for name in written:
        sys.modules.pop(name, None)


FUNCTIONS = '''
import functools
def add(a: int, b: int = 2) -> int:
    """Add two numbers.

        Indented detail."""
    return a + b
def nodoc(x):
    return x
add3 = functools.partial(add, 3)
up = str.upper
lam = lambda: None
def weird():
    pass
weird.__signature__ = "bogus"
class K:
    pass
value = 5
_private = add
'''

TRAP = """
calls = []
class Meta(type):
    def __getattr__(cls, name):
        calls.append(("meta", name))
        raise AttributeError(name)
class Trap(metaclass=Meta):
    @property
    def boom(self):
        calls.append("boom")
        raise RuntimeError("boom")
    @property
    def __class__(self):
        calls.append("__class__")
        raise RuntimeError("class")
    def __getattr__(self, name):
        calls.append(name)
        raise AttributeError(name)
trap = Trap()
trap_prop = property(lambda self: calls.append("prop"))
"""


# -- configuration and names ---------------------------------------------------------------------------


def test_configured_modules_are_bound_and_protected(shell):
    ns = make(shell, preload=["os.path", "json"], aliases={"collections.abc": "cabc"})
    assert shell.user_ns["os"] is os and shell.user_ns["json"] is json
    assert shell.user_ns["cabc"] is collections.abc
    assert ns.protected_names() == RUNTIME_NAMES | {"os", "json", "cabc"}
    assert ns.is_protected("_x") and ns.is_protected("In") and ns.is_protected("cabc")
    assert not ns.is_protected("x")
    run(shell, "x = 1\ny = 2")
    assert ns.user_names() == ["x", "y"]
    ns.on_names_removed(["x"])  # the default hook is a no-op


def test_configured_module_failures_name_the_module(shell):
    ns = NamespaceOperations(shell, Limits(), ["json", "ipython_mcp_no_such_module"], {})
    error = op_error(lambda _: ns.bind_configured_modules(), None)
    assert error.code == "startup_failed"
    assert "ipython_mcp_no_such_module" in error.message
    assert error.details["module"] == "ipython_mcp_no_such_module"
    with pytest.raises(OpError) as caught:
        NamespaceOperations(shell, Limits(), [], {"json": "not an identifier"})
    assert caught.value.code == "startup_failed"


def test_user_names_skip_hidden_bindings_until_rebound(shell):
    ns = make(shell)
    sentinel = object()
    shell.user_ns_hidden["helper"] = sentinel
    shell.user_ns["helper"] = sentinel
    assert ns.user_names() == []
    run(shell, "helper = 2\n_mine = 3\nIn = 4")
    assert ns.user_names() == ["helper"]


# -- list --------------------------------------------------------------------------------------------------


def test_list_reports_functions_with_signature_module_and_doc(shell):
    ns = make(shell)
    run(shell, FUNCTIONS)
    result = ns.list({})
    by_name = {entry["name"]: entry for entry in result["functions"]}
    assert list(by_name) == ["add", "add3", "lam", "nodoc", "up", "weird"]
    assert result["total"] == 6 and result["truncated"] is False
    assert by_name["add"] == {
        "name": "add",
        "signature": "(a: int, b: int = 2) -> int",
        "signature_truncated": False,
        "module": "__main__",
        "doc": "Add two numbers.\n\nIndented detail.",
        "doc_truncated": False,
    }
    assert by_name["add3"]["signature"] == "(b: int = 2) -> int"
    assert by_name["add3"]["doc"].startswith("Add two numbers.")
    assert by_name["nodoc"]["doc"] is None
    assert by_name["up"]["signature"] == "(self, /)"
    assert by_name["weird"]["signature"] == "(...)"  # __signature__ is not a Signature


def test_list_follows_redefinitions_and_bounds_everything(shell):
    ns = make(shell, Limits(max_results=2, max_repr_chars=6, max_text_chars=4))
    run(shell, FUNCTIONS)
    run(shell, "def add(a, b, c):\n    'New.'\n    return a")
    result = ns.list({})
    assert [entry["name"] for entry in result["functions"]] == ["add", "add3"]
    assert result["total"] == 6 and result["truncated"] is True
    first = result["functions"][0]
    assert (first["signature"], first["signature_truncated"]) == ("(a, b,", True)
    assert (first["doc"], first["doc_truncated"]) == ("New.", False)


def test_list_rejects_bad_params(shell):
    ns = make(shell)
    assert op_error(ns.list, None).code == "invalid_arguments"
    assert op_error(ns.list, {"query": "x"}).code == "invalid_arguments"


# -- search ----------------------------------------------------------------------------------------------


def test_search_orders_exact_first_and_filters_kinds(shell):
    ns = make(shell, preload=["json"])
    run(
        shell,
        "import math as m\nalpha = 1\nAlpha_2 = 'two'\nbeta_alpha = [1]\ndef alpha_fn(): pass\nclass ALPHA: pass",
    )
    result = ns.search({"query": "alpha"})
    assert [match["name"] for match in result["matches"]] == [
        "alpha",
        "ALPHA",
        "Alpha_2",
        "alpha_fn",
        "beta_alpha",
    ]
    assert result["total"] == 5 and result["truncated"] is False
    assert result["matches"][0] == {
        "name": "alpha",
        "kind": "variable",
        "type": "builtins.int",
        "repr": "1",
        "repr_truncated": False,
    }
    assert ns.search({"query": "alpha", "exact": True})["total"] == 1
    kinds = ns.search({"query": "alpha", "kinds": ["function", "class"]})
    assert [(m["name"], m["kind"]) for m in kinds["matches"]] == [
        ("ALPHA", "class"),
        ("alpha_fn", "function"),
    ]
    modules = ns.search({"query": "", "kinds": ["module"]})
    assert [(m["name"], m["type"]) for m in modules["matches"]] == [
        ("json", "builtins.module"),
        ("m", "builtins.module"),
    ]
    assert ns.search({"query": "alpha", "kinds": []})["total"] == 0


def test_search_bounds_results_and_reprs(shell):
    ns = make(shell, Limits(max_results=2, max_repr_chars=3))
    run(shell, "item_a = 'aaaaaa'\nitem_b = 2\nitem_c = 3")
    result = ns.search({"query": "ITEM"})
    assert result["total"] == 3 and result["truncated"] is True
    assert [(m["name"], m["repr"], m["repr_truncated"]) for m in result["matches"]] == [
        ("item_a", "'aa", True),
        ("item_b", "2", False),
    ]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"query": 3},
        {"query": "a", "exact": "yes"},
        {"query": "a", "kinds": ["bogus"]},
        {"query": "a", "kinds": "module"},
    ],
)
def test_search_rejects_bad_params(shell, params):
    assert op_error(make(shell).search, params).code == "invalid_arguments"


def test_classification_runs_no_user_properties_or_getattr(shell):
    ns = make(shell)
    run(shell, TRAP)
    result = ns.search({"query": "trap"})
    kinds = {m["name"]: (m["kind"], m["type"]) for m in result["matches"]}
    assert kinds == {
        "Trap": ("class", "__main__.Meta"),
        "trap": ("variable", "__main__.Trap"),
        "trap_prop": ("variable", "builtins.property"),
    }
    assert ns.search({"query": "trap", "kinds": ["variable"]})["total"] == 2
    inspection = ns.inspect({"name": "trap"})
    assert (inspection["kind"], inspection["qualified_type"], inspection["callable"]) == (
        "variable",
        "__main__.Trap",
        False,
    )
    assert inspection["module"] == "__main__" and inspection["error"] is None
    assert shell.user_ns["calls"] == []


def test_raising_repr_is_reported_not_fatal(shell):
    ns = make(shell)
    run(
        shell, "class Bad:\n    def __repr__(self):\n        raise ValueError('no repr for you')\nbad = Bad()"
    )
    (match,) = ns.search({"query": "bad", "exact": True})["matches"]
    assert match["kind"] == "variable" and "repr raised ValueError" in match["repr"]
    inspection = ns.inspect({"name": "bad"})
    assert inspection["error"] == {"stage": "repr", "type": "ValueError", "message": "no repr for you"}
    assert inspection["representation"] is None
    assert (inspection["kind"], inspection["qualified_type"], inspection["module"]) == (
        "variable",
        "__main__.Bad",
        "__main__",
    )


def test_keyboard_interrupt_is_never_swallowed(shell):
    ns = make(shell)
    run(shell, "class Stop:\n    def __repr__(self):\n        raise KeyboardInterrupt\nstop = Stop()")
    run(shell, "def halt():\n    raise KeyboardInterrupt")
    with pytest.raises(KeyboardInterrupt):
        ns.inspect({"name": "stop"})
    with pytest.raises(KeyboardInterrupt):
        ns.search({"query": "stop"})
    with pytest.raises(KeyboardInterrupt):
        ns.call_function({"name": "halt", "arguments": {}})


def test_search_over_100000_names_is_fast_and_lazy(shell):
    ns = make(shell)
    run(
        shell,
        "class Counted:\n    reprs = 0\n    def __repr__(self):\n        Counted.reprs += 1\n        return 'C'",
    )
    shell.user_ns.update({f"name_{i}": i for i in range(100_000)})
    run(shell, "name_zzz = Counted()")
    start = time.perf_counter()
    result = ns.search({"query": "NAME_9"})
    by_kind = ns.search({"query": "name_", "kinds": ["variable"]})
    elapsed = time.perf_counter() - start
    print(f"two searches over 100,000 names took {elapsed:.3f}s")
    assert elapsed < 5.0
    assert result["total"] == 11_111 and result["truncated"] is True
    assert len(result["matches"]) == 100 and result["matches"][0]["name"] == "name_9"
    assert by_kind["total"] == 100_001
    assert shell.user_ns["Counted"].reprs == 0  # name_zzz was matched but never returned


def test_list_and_search_over_odd_keys_agree_with_a_plain_scan(shell):
    """The by-type and by-name passes (C-level over 100,000 names) pick what a plain scan of the rules picks,
    and never call a method of a key that is not an exact str."""
    ns = make(shell)
    run(
        shell,
        "import functools, math\n"
        "class Key(str):\n"
        "    calls = 0\n"
        "    def casefold(self):\n        Key.calls += 1\n        return 'x'\n"
        "    def __eq__(self, other):\n        Key.calls += 1\n        return str.__eq__(self, other)\n"
        "    __hash__ = str.__hash__\n"
        "class Part(functools.partial):\n    pass\n"
        "def f_plain(x):\n    return x\n"
        "f_part = Part(f_plain, 1)\n"
        "f_bound = [].append\n"
        "f_builtin = math.sqrt\n"
        "f_lambda = lambda: 0\n"
        "class f_class:\n    pass\n"
        "f_module = math\n"
        "f_value = 3\n"
        "_f_private = f_plain\n",
    )
    key_type, f_plain = shell.user_ns["Key"], shell.user_ns["f_plain"]
    shell.user_ns[key_type("f_key")] = f_plain
    shell.user_ns[7] = f_plain
    key_type.calls = 0
    sentinel = object()
    shell.user_ns_hidden["f_hidden"] = sentinel
    shell.user_ns["f_hidden"] = sentinel
    functions = [entry["name"] for entry in ns.list({})["functions"]]
    assert functions == ["f_bound", "f_builtin", "f_lambda", "f_part", "f_plain"]
    found = {m["name"]: m["kind"] for m in ns.search({"query": "F_"})["matches"]}
    assert found == {
        "f_bound": "function",
        "f_builtin": "function",
        "f_class": "class",
        "f_lambda": "function",
        "f_module": "module",
        "f_part": "function",
        "f_plain": "function",
        "f_value": "variable",
    }
    assert [m["name"] for m in ns.search({"query": "f_part", "exact": True})["matches"]] == ["f_part"]
    assert ns.search({"query": "f_key", "exact": True})["total"] == 0
    assert shell.user_ns["Key"].calls == 0
    run(shell, "f_hidden = 1")  # rebound by the user: now it is theirs
    assert "f_hidden" in {m["name"] for m in ns.search({"query": "f_hidden"})["matches"]}


def test_configured_modules_contribute_their_own_public_functions(shell, modules):
    modules(
        "nsmod_lib",
        "import json\nfrom json import dumps\ndef tool(a: int) -> int:\n    'A tool.'\n    return a\n"
        "def _hidden():\n    pass\nclass Widget:\n    pass\nCONSTANT = 3\n",
    )
    modules("nsmod_aliased", "def helper():\n    return 1\n")
    ns = make(shell, preload=["nsmod_lib"], aliases={"nsmod_lib": "lib", "nsmod_aliased": "al", "os.path": "osp"})
    listed = {entry["name"]: entry for entry in ns.list({})["functions"]}
    assert "nsmod_lib.tool" in listed and "al.helper" in listed
    assert listed["nsmod_lib.tool"]["signature"] == "(a: int) -> int" and listed["nsmod_lib.tool"]["doc"] == "A tool."
    assert "lib.tool" not in listed  # one module, listed once, under its first binding
    assert not any(name.endswith(("dumps", "_hidden", "Widget", "CONSTANT")) for name in listed)
    assert "osp.join" in listed  # os.path defines join itself
    found = {m["name"]: m["kind"] for m in ns.search({"query": "nsmod_lib"})["matches"]}
    assert found == {"nsmod_lib": "module", "nsmod_lib.tool": "function", "nsmod_lib.Widget": "class"}
    assert ns.search({"query": "al.helper", "exact": True})["total"] == 1
    assert ns.call_function({"name": "nsmod_lib.tool", "arguments": {"a": 4}})["value"] == 4
    run(shell, "nsmod_lib = 'shadowed'")  # an inactive binding contributes nothing; the alias then lists it
    listed = [entry["name"] for entry in ns.list({})["functions"]]
    assert "nsmod_lib.tool" not in listed and "lib.tool" in listed
    run(shell, "del lib")
    assert not any(name.endswith(".tool") for name in (e["name"] for e in ns.list({})["functions"]))
    ns.reset({})
    assert "nsmod_lib.tool" in [entry["name"] for entry in ns.list({})["functions"]]


def test_module_members_are_read_without_running_module_getattr(shell, modules):
    modules(
        "nsmod_lazy",
        "calls = []\ndef __getattr__(name):\n    calls.append(name)\n    raise AttributeError(name)\n"
        "def real():\n    pass\n",
    )
    ns = make(shell, preload=["nsmod_lazy"])
    assert [m["name"] for m in ns.search({"query": "nsmod_lazy."})["matches"]] == ["nsmod_lazy.real"]
    ns.list({})
    assert sys.modules["nsmod_lazy"].calls == []


# -- inspect ---------------------------------------------------------------------------------------------


def test_inspect_function_module_and_dotted_attribute(shell):
    ns = make(shell)
    run(shell, FUNCTIONS + "\nimport json, types\nlib = types.SimpleNamespace(value=[1, 2])")
    add = ns.inspect({"name": "add"})
    assert add["representation"].startswith("<function add at ")
    del add["representation"]
    assert add == {
        "name": "add",
        "kind": "function",
        "qualified_type": "builtins.function",
        "callable": True,
        "signature": "(a: int, b: int = 2) -> int",
        "module": "__main__",
        "documentation": "Add two numbers.\n\nIndented detail.",
        "truncated": dict.fromkeys(
            ["qualified_type", "signature", "module", "documentation", "representation"], False
        ),
        "error": None,
    }
    value = ns.inspect({"name": "lib.value"})
    assert (value["name"], value["kind"], value["qualified_type"]) == (
        "lib.value",
        "variable",
        "builtins.list",
    )
    assert (value["representation"], value["signature"], value["callable"]) == ("[1, 2]", None, False)
    module = ns.inspect({"name": "json"})
    assert (module["kind"], module["module"]) == ("module", "json")
    assert module["documentation"].startswith("JSON (JavaScript Object Notation)")
    klass = ns.inspect({"name": "K"})
    assert (klass["kind"], klass["qualified_type"], klass["signature"]) == ("class", "builtins.type", "()")


def test_inspect_truncates_each_field_independently(shell):
    ns = make(shell, Limits(max_repr_chars=12, max_text_chars=10))
    run(shell, "n = 1234567890123\nInt = int")
    result = ns.inspect({"name": "n"})
    assert result["qualified_type"] == "builtins.int"
    assert result["representation"] == "123456789012"  # max_repr_chars, as --help says, not max_text_chars
    assert result["documentation"] is None  # an instance leaves out its class's docstring (inspect int for it)
    assert len(ns.inspect({"name": "Int"})["documentation"]) == 10
    assert result["truncated"] == {
        "qualified_type": False,
        "signature": False,
        "module": False,
        "documentation": False,
        "representation": True,
    }
    tight = make(shell, Limits(max_repr_chars=5, max_text_chars=5))
    run(shell, FUNCTIONS)
    assert all(tight.inspect({"name": "add"})["truncated"].values())


def test_inspect_reports_stage_errors_and_fills_other_fields(shell):
    ns = make(shell)
    run(
        shell,
        "class Holder:\n    @property\n    def fragile(self):\n        raise RuntimeError('fragile')\nholder = Holder()\n"
        "class DocMeta(type):\n    @property\n    def __doc__(cls):\n        raise LookupError('no docs')\n"
        "class Documented(metaclass=DocMeta):\n    pass\n"
        "class Sig:\n    @property\n    def __signature__(self):\n        raise RuntimeError('no signature')\n"
        "    def __call__(self):\n        return 1\nsig = Sig()",
    )
    resolve = ns.inspect({"name": "holder.fragile"})
    assert resolve["error"] == {"stage": "resolve", "type": "RuntimeError", "message": "fragile"}
    assert resolve["kind"] is None and resolve["representation"] is None
    documented = ns.inspect({"name": "Documented"})  # the metaclass property is never run: no doc, no error
    assert (documented["error"], documented["documentation"]) == (None, None)
    assert documented["kind"] == "class" and documented["signature"] == "()"
    assert documented["representation"] == "<class '__main__.Documented'>"
    metadata = ns.inspect({"name": "sig"})  # a property __signature__ would run user code: no signature, and why
    assert (metadata["error"]["stage"], metadata["error"]["type"]) == ("metadata", "SignatureUnavailable")
    assert "__signature__ is computed by a builtins.property" in metadata["error"]["message"]
    assert (metadata["kind"], metadata["callable"], metadata["signature"]) == ("other", True, None)
    assert metadata["representation"].startswith("<__main__.Sig object")


def test_huge_builtin_values_get_exact_prefix_reprs_quickly(shell):
    ns = make(shell, Limits(max_repr_chars=30, max_text_chars=40))
    shell.user_ns.update(
        big_list=list(range(5_000_000)),
        big_dict={i: str(i) for i in range(1_000_000)},
        big_text="it's " * 2_000_000,
        big_bytes=b'"q" ' * 2_000_000,
    )
    names = ("big_list", "big_dict", "big_text", "big_bytes")
    expected = {name: repr(shell.user_ns[name])[:30] for name in names}
    start = time.perf_counter()
    found = {name: (ns.inspect({"name": name}), ns.search({"query": name, "exact": True})) for name in names}
    elapsed = time.perf_counter() - start
    for name in names:
        inspection, search = found[name]
        assert (inspection["representation"], inspection["truncated"]["representation"]) == (expected[name], True)
        assert (search["matches"][0]["repr"], search["matches"][0]["repr_truncated"]) == (expected[name], True)
    assert elapsed < 1.0  # the full reprs take about a second and hundreds of MB


def test_inspect_failures(shell):
    ns = make(shell)
    run(shell, "import types\nlib = types.SimpleNamespace(value=1)")
    missing = op_error(ns.inspect, {"name": "nothing_here"})
    assert (missing.code, missing.details) == ("name_not_found", {"name": "nothing_here"})
    attribute = op_error(ns.inspect, {"name": "lib.nope"})
    assert (attribute.code, attribute.details["missing"]) == ("name_not_found", "lib.nope")
    for params in (
        {},
        {"name": ""},
        {"name": "a..b"},
        {"name": "1x"},
        {"name": "x()"},
        {"name": 5},
        {"name": "lib", "x": 1},
    ):
        assert op_error(ns.inspect, params).code == "invalid_arguments", params


# -- call_function -------------------------------------------------------------------------------------


CALLABLES = """
import types
invocations = []
def add(a, b=2):
    invocations.append((a, b))
    return {"sum": a + b, "items": [a, b]}
def numbers():
    return list(range(5))
def divide():
    return 1 / 0
def opaque():
    return object()
def nested():
    return {"a": {1, 2}}
class NoSignature:
    __signature__ = 5
    def __call__(self, **kwargs):
        return sorted(kwargs)
no_signature = NoSignature()
lib = types.SimpleNamespace(double=lambda x: x * 2, value=3)
"""


def test_call_function_binds_invokes_once_and_returns_json(shell):
    ns = make(shell)
    run(shell, CALLABLES)
    assert ns.call_function({"name": "add", "arguments": {"a": 1}}) == {
        "value": {"sum": 3, "items": [1, 2]},
        "truncated": False,
    }
    assert shell.user_ns["invocations"] == [(1, 2)]
    assert ns.call_function({"name": "lib.double", "arguments": {"x": 21}})["value"] == 42
    assert ns.call_function({"name": "no_signature", "arguments": {"z": 1, "y": 2}})["value"] == ["y", "z"]
    assert ns.call_function({"name": "numbers"}) == {"value": [0, 1, 2, 3, 4], "truncated": False}
    small = make(shell, Limits(max_results=2))
    assert small.call_function({"name": "numbers", "arguments": {}}) == {"value": [0, 1], "truncated": True}


def test_call_function_error_codes(shell):
    ns = make(shell)
    run(shell, CALLABLES)
    assert op_error(ns.call_function, {"name": "nope", "arguments": {}}).code == "name_not_found"
    assert op_error(ns.call_function, {"name": "lib.nope", "arguments": {}}).code == "name_not_found"
    not_callable = op_error(ns.call_function, {"name": "lib.value", "arguments": {}})
    assert (not_callable.code, not_callable.details["type"]) == ("not_callable", "builtins.int")
    for params in (
        {"name": "add", "arguments": [1]},
        {"name": "add", "arguments": {1: 2}},
        {"arguments": {}},
    ):
        assert op_error(ns.call_function, params).code == "invalid_arguments"
    for arguments in ({}, {"a": 1, "c": 2}):
        assert op_error(ns.call_function, {"name": "add", "arguments": arguments}).code == "binding_failed"
    assert shell.user_ns["invocations"] == []  # binding failures never invoke
    not_json = op_error(ns.call_function, {"name": "opaque", "arguments": {}})
    assert (not_json.code, not_json.details["type"]) == ("result_not_json", "builtins.object")
    nested = op_error(ns.call_function, {"name": "nested", "arguments": {}})
    assert (nested.details["type"], nested.details["offending_type"]) == ("builtins.dict", "set")


def test_call_raised_details_are_bounded(shell):
    run(shell, CALLABLES)
    raised = op_error(make(shell).call_function, {"name": "divide", "arguments": {}})
    assert raised.code == "call_raised"
    details = raised.details
    assert (details["type"], details["message"], details["message_truncated"]) == (
        "ZeroDivisionError",
        "division by zero",
        False,
    )
    assert details["traceback"].endswith("ZeroDivisionError: division by zero\n")
    assert "1 / 0" in details["traceback"] and "namespace.py" not in details["traceback"]
    assert details["traceback_truncated"] is False
    small = make(shell, Limits(max_traceback_chars=40, max_text_chars=5))
    cut = op_error(small.call_function, {"name": "divide", "arguments": {}}).details
    assert (cut["message"], cut["message_truncated"]) == ("divis", True)
    assert len(cut["traceback"]) == 40 and cut["traceback_truncated"] is True
    assert cut["traceback"].endswith("division by zero\n")


# -- reload ----------------------------------------------------------------------------------------------


def test_build_import_edit_reload_workflow(shell, modules):
    ns = make(shell)
    path = modules("nsmod_tool", "def greet(name):\n    return 'hello ' + name\n")
    run(shell, "import nsmod_tool\nimport nsmod_tool as tool_alias\nkeep = 1")
    assert ns.call_function({"name": "nsmod_tool.greet", "arguments": {"name": "x"}})["value"] == "hello x"
    path.write_text("def greet(name, punctuation='!'):\n    return 'HELLO ' + name.upper() + punctuation\n")
    result = ns.reload({"modules": ["nsmod_tool", "nsmod_tool"]})
    assert result == {
        "results": [{"module": "nsmod_tool", "status": "reloaded", "bindings": ["nsmod_tool", "tool_alias"]}]
    }
    assert shell.user_ns["tool_alias"] is sys.modules["nsmod_tool"]
    assert ns.call_function({"name": "tool_alias.greet", "arguments": {"name": "x"}})["value"] == "HELLO X!"
    inspection = ns.inspect({"name": "nsmod_tool.greet"})
    assert inspection["signature"] == "(name, punctuation='!')"


def test_reload_sees_same_size_edit_within_the_same_second(shell, modules, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    ns = make(shell)
    path = modules("nsmod_stale", "def value():\n    return 1\n")
    second = (int(time.time()) - 100) * 1_000_000_000
    os.utime(path, ns=(second + 100_000_000, second + 100_000_000))
    run(shell, "import nsmod_stale")
    cached = importlib.util.cache_from_source(str(path))
    assert os.path.exists(cached)
    path.write_text("def value():\n    return 2\n")  # same size, same whole-second mtime as the .pyc records
    os.utime(cached, ns=(second + 200_000_000, second + 200_000_000))
    os.utime(path, ns=(second + 300_000_000, second + 300_000_000))
    assert ns.reload({"modules": ["nsmod_stale"]})["results"][0]["status"] == "reloaded"
    assert ns.call_function({"name": "nsmod_stale.value", "arguments": {}})["value"] == 2


def test_reload_reports_not_imported_and_failures_and_touches_nothing_else(shell, modules):
    ns = make(shell, Limits(max_text_chars=12))
    counting = "LOADS = globals().get('LOADS', 0) + 1\ndef ok():\n    return 'ok'\n"
    path = modules("nsmod_target", counting)
    modules("nsmod_bystander", counting)
    run(shell, "import nsmod_target, nsmod_bystander")
    path.write_text(counting + "def broken(:\n    pass\n")
    result = ns.reload({"modules": ["nsmod_target", "nsmod_never_imported"]})["results"]
    assert result[0]["status"] == "failed" and result[0]["bindings"] == []
    assert result[0]["error"]["type"] == "SyntaxError" and len(result[0]["error"]["message"]) <= 12
    assert result[1] == {"module": "nsmod_never_imported", "status": "not_imported", "bindings": []}
    assert ns.call_function({"name": "nsmod_target.ok", "arguments": {}})["value"] == "ok"
    path.write_text(counting + "# fixed\n")
    assert ns.reload({"modules": ["nsmod_target"]})["results"][0]["status"] == "reloaded"
    assert sys.modules["nsmod_target"].LOADS == 2  # the failed reload did not compile, so never ran
    assert sys.modules["nsmod_bystander"].LOADS == 1


@pytest.mark.parametrize(
    "params", [{}, {"modules": "json"}, {"modules": [1]}, {"modules": ["json"], "deep": True}]
)
def test_reload_rejects_bad_params(shell, params):
    assert op_error(make(shell).reload, params).code == "invalid_arguments"


# -- remove / reset ----------------------------------------------------------------------------------------


def test_remove_partitions_and_is_idempotent(shell):
    ns = make(shell, aliases={"json": "js"})
    seen: list[list[str]] = []
    ns.on_names_removed = seen.append
    sentinel = object()
    shell.user_ns_hidden["tool"] = sentinel
    shell.user_ns["tool"] = sentinel
    run(shell, "a = 1\nb = 2\n_hidden = 3")
    names = ["b", "a", "In", "_hidden", "js", "zzz", "a", "tool"]
    assert ns.remove({"names": names}) == {
        "removed": ["a", "b"],
        "refused": ["In", "_hidden", "js", "tool"],
        "unknown": ["zzz"],
    }
    assert "a" not in shell.user_ns and "b" not in shell.user_ns and shell.user_ns["_hidden"] == 3
    assert ns.remove({"names": names}) == {
        "removed": [],
        "refused": ["In", "_hidden", "js", "tool"],
        "unknown": ["a", "b", "zzz"],
    }
    assert seen == [["a", "b"]]


@pytest.mark.parametrize("params", [None, {}, {"names": "a"}, {"names": [1]}, {"names": [], "all": True}])
def test_remove_rejects_bad_params(shell, params):
    assert op_error(make(shell).remove, params).code == "invalid_arguments"


def test_reset_removes_user_names_and_restores_configured_bindings(shell):
    ns = make(shell, preload=["json"], aliases={"collections.abc": "cabc"})
    seen: list[list[str]] = []
    ns.on_names_removed = seen.append
    run(shell, "x = 1\ndef f():\n    pass\njson = 'shadow'\ndel cabc\n_kept = 2")
    count = shell.execution_count - 1  # cells executed so far; IPython's attribute is the next cell's number
    assert ns.reset({}) == {
        "removed": ["f", "x"],
        "removed_count": 2,
        "removed_truncated": False,
        "execution_count": count,
    }
    assert shell.user_ns["json"] is json and shell.user_ns["cabc"] is collections.abc
    assert shell.user_ns["_kept"] == 2 and "get_ipython" in shell.user_ns
    assert ns.reset({}) == {"removed": [], "removed_count": 0, "removed_truncated": False, "execution_count": count}
    assert seen == [["f", "x"]]
    run(shell, "y = 1")
    assert shell.execution_count - 1 == count + 1


def test_reset_restores_ipython_bindings_a_user_shadowed_or_deleted(shell):
    ns = make(shell)
    originals = {name: shell.user_ns[name] for name in ("In", "Out", "get_ipython", "exit", "quit", "open")}
    run(shell, "get_ipython = 7\nIn = None\nOut = {}\nexit = 'x'\ndel quit\nopen = print")
    ns.reset({})
    assert {name: shell.user_ns.get(name) for name in originals} == originals
    run(shell, "reachable = get_ipython() is not None and isinstance(In, list)")
    assert shell.user_ns["reachable"] is True


def test_reset_report_stays_within_the_ipc_bound(shell):
    ns = make(shell, Limits(max_ipc_message_bytes=1000))
    shell.user_ns.update({f"name_{i:04}": i for i in range(200)})
    result = ns.reset({})
    assert result["removed_count"] == 200 and result["removed_truncated"] is True
    assert result["removed"] == [f"name_{i:04}" for i in range(len(result["removed"]))]
    assert 0 < len(json.dumps(result["removed"])) <= 500
    assert ns.user_names() == []


def test_reset_rejects_bad_params(shell):
    ns = make(shell)
    run(shell, "x = 1")
    assert op_error(ns.reset, {"everything": True}).code == "invalid_arguments"
    assert op_error(ns.reset, []).code == "invalid_arguments"
    assert ns.user_names() == ["x"]
