"""Discovery runs no user code: list, search and inspect over objects whose attribute hooks hang, raise or count.

Every hook below records its call in ``calls`` and then either waits on an Event that is never set (``hang``,
bounded by HANG_SECONDS) or raises. A discovery operation that ran one would take HANG_SECONDS (or see the
exception); each test asserts that nothing was recorded and that the operations returned well before that.
"""

from __future__ import annotations

import signal
import sys
import threading
import time

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from ipython_mcp_worker.inspection.signature import NoSignature, signature_text
from ipython_mcp_worker.inspection.signature_text import annotation_text, value_text
from ipython_mcp_worker.namespace.operations import KINDS, NamespaceOperations
from ipython_mcp_worker.protocol.limits import Limits
from ipython_mcp_worker.registry.dynamic_tools import Registry

HANG_SECONDS = 4.0

HAZARDS = '''
import functools, threading, types
calls = []
_gate = threading.Event()

def _hook(tag):
    calls.append(tag)
    if MODE == "hang":
        _gate.wait(HANG_SECONDS)
    raise LookupError(f"hook {tag!r} ran")

class HookMeta(type):
    def __getattr__(cls, name):
        _hook(("meta.__getattr__", name))
    def __getattribute__(cls, name):
        _hook(("meta.__getattribute__", name))

class HookedClass(metaclass=HookMeta):
    """A class whose metaclass hooks every attribute read."""
    def __init__(self, a, b: int = 2):
        pass

class HookedCallable:
    """A callable whose attribute hooks hang or raise."""
    def __getattr__(self, name):
        _hook(("__getattr__", name))
    def __getattribute__(self, name):
        _hook(("__getattribute__", name))
    def __call__(self, x, y=1):
        return x

class PropertyCallable:
    @property
    def __signature__(self):
        _hook("__signature__")
    @property
    def __wrapped__(self):
        _hook("__wrapped__")
    @property
    def __doc__(self):
        _hook("__doc__")
    @property
    def __class__(self):
        _hook("__class__")
    def __call__(self):
        return 1

class LoudRepr:
    def __repr__(self):
        _hook("__repr__")

class HookedList(list):
    def __getattribute__(self, name):
        _hook(("list.__getattribute__", name))

class HookedModule(types.ModuleType):
    def __getattr__(self, name):
        _hook(("module.__getattr__", name))
    def __getattribute__(self, name):
        _hook(("module.__getattribute__", name))
    def __repr__(self):
        return "<hooked module>"

hooked_class = HookedClass
hooked_callable = HookedCallable()
property_callable = PropertyCallable()
hooked_partial = functools.partial(hooked_callable, 5)
hooked_method = types.MethodType(HookedCallable.__call__, hooked_callable)
bound_over_instance = types.MethodType(hooked_callable, object())  # its repr would read the function's name
hooked_module = HookedModule("hooked_module", "The hooked module.")
hooked_builtin = list.append.__get__(HookedList())

def wraps_hooked(*args, **kwargs):
    """Delegates to hooked_callable."""
wraps_hooked.__wrapped__ = hooked_callable

def annotated(a: HookedClass, b=LoudRepr(), *, c: "list[HookedClass]" = (LoudRepr(),)) -> HookedClass:
    """Annotations and defaults that hook."""
'''

HOOKED_NAMES = (
    "hooked_class",
    "hooked_callable",
    "property_callable",
    "hooked_partial",
    "hooked_method",
    "hooked_module",
    "hooked_builtin",
    "wraps_hooked",
    "annotated",
    "HookedClass",
    "HookedCallable",
    "PropertyCallable",
)


@pytest.fixture
def shell():
    config = Config()
    config.HistoryManager.enabled = False
    instance = InteractiveShell(config=config)
    yield instance
    InteractiveShell.clear_instance()


@pytest.fixture(params=["hang", "raise"])
def hazards(request, shell):
    shell.user_ns.update(MODE=request.param, HANG_SECONDS=HANG_SECONDS)
    result = shell.run_cell(HAZARDS, store_history=False)
    assert result.success, result.error_in_exec
    shell.user_ns["calls"].clear()
    namespace = NamespaceOperations(shell, Limits(), [], {})
    namespace.bind_configured_modules()
    return namespace


def _timed(call):
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def test_list_reads_signatures_modules_and_docs_without_hooks(shell, hazards):
    result, elapsed = _timed(lambda: hazards.list({}))
    assert shell.user_ns["calls"] == [] and elapsed < HANG_SECONDS / 2
    by_name = {entry["name"]: entry for entry in result["functions"]}
    assert set(by_name) >= {"hooked_partial", "hooked_method", "hooked_builtin", "wraps_hooked", "annotated"}
    assert by_name["wraps_hooked"]["signature"] == "(x, y=1)"  # followed __wrapped__ statically
    assert by_name["hooked_partial"]["signature"] == "(y=1)"
    assert by_name["hooked_partial"]["doc"] == "A callable whose attribute hooks hang or raise."
    assert by_name["hooked_method"]["signature"] == "(x, y=1)"
    assert by_name["bound_over_instance"]["signature"] == "(y=1)"
    assert by_name["hooked_builtin"]["signature"] == "(...)"  # bound to an object whose class hooks __class__
    assert by_name["annotated"] == {
        "name": "annotated",
        "signature": "(a: __main__.HookedClass, b=<__main__.LoudRepr object>, *, "
        "c: 'list[HookedClass]' = (<__main__.LoudRepr object>,)) -> __main__.HookedClass",
        "signature_truncated": False,
        "module": "__main__",
        "doc": "Annotations and defaults that hook.",
        "doc_truncated": False,
    }


@pytest.mark.parametrize("kinds", [None, [], *([kind] for kind in KINDS), list(KINDS)])
def test_search_of_every_kind_runs_no_hooks(shell, hazards, kinds):
    params = {"query": "hooked"} if kinds is None else {"query": "hooked", "kinds": kinds}
    result, elapsed = _timed(lambda: hazards.search(params))
    assert shell.user_ns["calls"] == [] and elapsed < HANG_SECONDS / 2
    found = {match["name"]: (match["kind"], match["type"]) for match in result["matches"]}
    expected = {
        "hooked_class": ("class", "__main__.HookMeta"),
        "HookedClass": ("class", "__main__.HookMeta"),
        "hooked_callable": ("other", "__main__.HookedCallable"),
        "HookedCallable": ("class", "builtins.type"),
        "hooked_partial": ("function", "functools.partial"),
        "hooked_method": ("function", "builtins.method"),
        "hooked_module": ("module", "__main__.HookedModule"),
        "hooked_builtin": ("function", "builtins.builtin_function_or_method"),
        "HookedList": ("class", "builtins.type"),
        "HookedModule": ("class", "builtins.type"),
        "wraps_hooked": ("function", "builtins.function"),
    }
    wanted = set(KINDS) if kinds is None else set(kinds)
    assert found == {name: value for name, value in expected.items() if value[0] in wanted}
    if "class" in wanted:
        reprs = {match["name"]: match["repr"] for match in result["matches"]}
        assert reprs["hooked_class"] == "<class '__main__.HookedClass'>"


def test_inspect_of_hooked_objects_answers_without_running_them(shell, hazards):
    inspections, elapsed = _timed(lambda: {name: hazards.inspect({"name": name}) for name in HOOKED_NAMES})
    assert shell.user_ns["calls"] == [] and elapsed < HANG_SECONDS / 2
    klass = inspections["hooked_class"]
    assert (klass["kind"], klass["qualified_type"], klass["callable"]) == ("class", "__main__.HookMeta", True)
    assert (klass["signature"], klass["module"], klass["error"]) == ("(a, b: int = 2)", "__main__", None)
    assert klass["documentation"] == "A class whose metaclass hooks every attribute read."
    assert klass["representation"] == "<class '__main__.HookedClass'>"
    instance = inspections["hooked_callable"]
    assert (instance["kind"], instance["signature"], instance["module"], instance["error"]) == (
        "other",
        "(x, y=1)",
        "__main__",
        None,
    )
    assert instance["documentation"] == "A callable whose attribute hooks hang or raise."
    assert instance["representation"].startswith("<__main__.HookedCallable object at ")
    refused = inspections["property_callable"]
    assert (refused["kind"], refused["callable"], refused["signature"]) == ("other", True, None)
    assert refused["error"]["stage"] == "metadata" and refused["error"]["type"] == "SignatureUnavailable"
    assert "__signature__" in refused["error"]["message"] and "runs no user code" in refused["error"]["message"]
    assert refused["documentation"] is None and refused["module"] == "__main__"
    module = inspections["hooked_module"]
    assert (module["kind"], module["module"], module["documentation"]) == ("module", "hooked_module", "The hooked module.")
    assert module["representation"] == "<hooked module>"
    builtin = inspections["hooked_builtin"]
    assert builtin["signature"] is None and builtin["error"]["type"] == "SignatureUnavailable"
    assert inspections["wraps_hooked"]["signature"] == "(x, y=1)"
    assert inspections["wraps_hooked"]["documentation"] == "Delegates to hooked_callable."
    assert inspections["annotated"]["error"] is None
    assert inspections["HookedCallable"]["signature"] == "()"


def test_inspect_shows_a_representation_and_stays_interruptible(shell, hazards):
    """The representation is the one piece of user code inspect runs; search shows reprs of its matches too."""
    shell.user_ns["loud"] = shell.user_ns["LoudRepr"]()
    if shell.user_ns["MODE"] == "raise":
        result = hazards.inspect({"name": "loud"})
        assert result["error"]["stage"] == "repr" and result["representation"] is None
        assert hazards.search({"query": "loud", "exact": True})["matches"][0]["repr"] == (
            "<LoudRepr object; repr raised LookupError>"
        )
        assert shell.user_ns["calls"] == ["__repr__", "__repr__"]
    else:
        main = threading.main_thread().ident
        timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))  # as the worker's deadline does
        timer.start()
        start = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            hazards.inspect({"name": "loud"})
        timer.join()
        assert time.perf_counter() - start < HANG_SECONDS / 2
    hazards.list({})  # list never asks for a representation
    assert shell.user_ns["calls"].count("__repr__") == (2 if shell.user_ns["MODE"] == "raise" else 1)


def test_discover_never_touches_unrelated_or_replacing_objects(shell, hazards):
    run = shell.run_cell("def tool(x: int) -> int:\n    return x\n", store_history=False)
    assert run.success
    registry = Registry(shell.user_ns, Limits(), hazards.is_protected, frozenset())
    registry.register({"name": "tool"})
    discovered, elapsed = _timed(lambda: registry.discover({}))
    assert [tool["tool_name"] for tool in discovered["tools"]] == ["tool"] and discovered["stale"] == []
    for replacement in ("hooked_callable", "hooked_class", "property_callable", "hooked_module"):
        shell.user_ns["tool"] = shell.user_ns[replacement]
        assert registry.discover({})["stale"] == ["tool"]
        registry.unregister({"names": ["tool"]})
        shell.run_cell("def tool(x: int) -> int:\n    return x\n", store_history=False)
        registry.register({"name": "tool"})
    assert shell.user_ns["calls"] == [] and elapsed < HANG_SECONDS / 2
    assert registry.discover({})["stale"] == []


# -- the static helpers on their own -------------------------------------------------------------------


def test_values_and_annotations_render_like_inspect_where_that_runs_no_user_code():
    import enum
    import typing

    class Color(enum.Enum):
        RED = 1

    assert value_text(None) == "None" and value_text("it's") == '"it\'s"'
    assert value_text([1, (2,), {"a": {3}}, frozenset()]) == "[1, (2,), {'a': {3}}, frozenset()]"
    assert value_text(Color.RED) == "<Color.RED: 1>"
    assert value_text(sys) == "<module 'sys'>"
    assert value_text(int) == "<class 'int'>" and value_text(len) == "<built-in function len>"
    assert value_text(list(range(100))).endswith(", ...]")
    assert value_text(10**5000) == "<int>"
    for annotation, text in (
        (typing.Optional[int], "Optional[int]"),  # noqa: UP045 - the typing spelling is what is rendered
        (typing.Union[int, str], "Union[int, str]"),  # noqa: UP007 - the typing spelling is what is rendered
        (typing.List[int], "List[int]"),  # noqa: UP006 - the typing spelling is what is rendered
        (typing.Dict[str, typing.Any], "Dict[str, Any]"),  # noqa: UP006 - the typing spelling is what is rendered
        (typing.Callable[[int], str], "Callable[[int], str]"),
        (typing.Callable[..., str], "Callable[..., str]"),
        (typing.Annotated[int, "meta"], "Annotated[int, 'meta']"),
        (typing.Literal["a", 1], "Literal['a', 1]"),
        (list[int], "list[int]"),
        (int | None, "int | None"),
        (typing.TypeVar("T"), "~T"),
        ("Forward", "'Forward'"),
        (None, "None"),
    ):
        assert annotation_text(annotation) == text, annotation
    shared = int
    for _ in range(20):  # 2**20 leaves, but few distinct objects: rendering stays bounded
        shared = typing.Tuple[shared, shared]  # noqa: UP006 - a typing alias is what is rendered
    started = time.perf_counter()
    assert annotation_text(shared).startswith("Tuple[Tuple[") and time.perf_counter() - started < 1.0


def test_signature_errors_say_whether_python_or_discovery_declined():
    class Computed:
        @property
        def __signature__(self):
            raise AssertionError("ran")

        def __call__(self):
            pass

    with pytest.raises(NoSignature) as refused:
        signature_text(Computed())
    assert refused.value.reported is True
    with pytest.raises(NoSignature) as absent:
        signature_text(5)
    assert absent.value.reported is False
    with pytest.raises(NoSignature) as loop:
        looped = lambda: None  # noqa: E731
        looped.__wrapped__ = looped
        signature_text(looped)
    assert loop.value.reported is False
