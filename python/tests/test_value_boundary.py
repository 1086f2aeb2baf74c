"""Property tests of the value contract (docs/protocol.md, "Value contract") through a real worker, both codecs.

Hypothesis generates nested Python values (ints of any size, floats with NaN/±Infinity/-0.0, text with lone
surrogates, NUL and astral characters, bytes, tuples, sets, mixed keys, objects whose ``__repr__`` raises or is
huge). Each one is built in the worker from its source, returned, printed, raised and returned from a function;
the invariants: the worker survives (same pid, the sentinel kept), every answer arrives, what the contract calls
exact decodes to the original exactly, and everything else is flagged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from worker_process import WorkerProcess

from ipython_mcp_worker.values.jsonvalue import MAX_SAFE_INTEGER, decode_text

PROPERTY_SETTINGS = settings(
    max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture],
    print_blob=True,
)

OBJECTS = """
class RaisingRepr:
    def __repr__(self):
        raise ValueError('no repr for you')
    __str__ = __repr__
class ExitingRepr:
    def __repr__(self):
        raise SystemExit(3)
    __str__ = __repr__
class HugeRepr:
    def __repr__(self):
        return 'x' * 3_000_000
    __str__ = __repr__
class SurrogateRepr:
    def __repr__(self):
        return 'bad \\udcff text'
    __str__ = __repr__
sentinel = 'still here'
"""


@dataclass(frozen=True)
class Obj:
    """A live object that is not data: built in the worker from ``source``."""

    source: str


def source(value: Any) -> str:
    """Python source that builds ``value`` in the worker."""
    if isinstance(value, Obj):
        return value.source
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, (bool, int, str, bytes)) or value is None:
        return repr(value)
    if isinstance(value, tuple):
        return "(" + "".join(source(item) + ", " for item in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(source(item) for item in value) + "]"
    if isinstance(value, frozenset):
        return "frozenset([" + ", ".join(source(item) for item in value) + "])"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{source(key)}: {source(item)}" for key, item in value.items()) + "}"
    raise AssertionError(f"no source for {type(value)}")


def has_json_form(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(has_json_form(item) for item in value)
    if isinstance(value, dict):
        return all(type(key) is str and has_json_form(item) for key, item in value.items())
    return False


def as_json_data(value: Any) -> Any:
    """What the value means as JSON data: tuples are arrays."""
    if isinstance(value, (list, tuple)):
        return [as_json_data(item) for item in value]
    if isinstance(value, dict):
        return {key: as_json_data(item) for key, item in value.items()}
    return value


def child(path: str, key: str) -> str:
    import json

    return f"{path}.{key}" if key.isidentifier() and key.isascii() else f"{path}[{json.dumps(key)}]"


def decode(value: Any, encoded: dict[str, str], path: str = "$") -> Any:
    """Undo the contract's encodings, guided by the ``encoded`` map (an escaped key is ``key``, or ``key+<kind>``
    when its value is encoded too)."""
    kind = encoded.get(path, "").removeprefix("key").removeprefix("+")
    if kind == "int":
        assert isinstance(value, str) and re.fullmatch(r"-?\d+", value), (path, value)
        number = int(value)
        assert abs(number) > MAX_SAFE_INTEGER, f"{path}: a safe integer must not be encoded"
        return number
    if kind == "float":
        assert value in ("NaN", "Infinity", "-Infinity", "-0.0"), (path, value)
        return float(value.replace("Infinity", "inf"))
    if kind == "text":
        return decode_text(value)
    if isinstance(value, list):
        return [decode(item, encoded, f"{path}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            item_path = child(path, key)
            original = decode_text(key) if encoded.get(item_path, "").startswith("key") else key
            out[original] = decode(item, encoded, item_path)
        return out
    assert not (isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER), path
    if isinstance(value, float):
        assert math.isfinite(value) and not (value == 0 and math.copysign(1, value) < 0), path
    if isinstance(value, str):
        value.encode("utf-8")  # unflagged text is valid UTF-8
    return value


def same(left: Any, right: Any) -> bool:
    """Equality that tells NaN, -0.0 and int/float apart."""
    if isinstance(left, float) and isinstance(right, float):
        if math.isnan(left) or math.isnan(right):
            return math.isnan(left) and math.isnan(right)
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    if type(left) is not type(right):
        return False
    if isinstance(left, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same(left[key], right[key]) for key in left)
    return left == right


def texts() -> st.SearchStrategy[str]:
    every_code_point = st.characters(exclude_categories=())  # surrogates included
    return st.one_of(
        st.text(max_size=12),
        st.text(every_code_point, max_size=12),
        st.sampled_from(["", "\x00", "nul\x00in", "\U0001f600", "caf\udce9", "\ud800", "\\udce9", "a\\b"]),
    )


def integers() -> st.SearchStrategy[int]:
    edges = [MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 2**31, 2**32, 2**63, 2**64, 10**20, 10**400]
    return st.one_of(st.integers(), st.integers(-(2**80), 2**80), st.sampled_from(edges + [-e for e in edges]))


LEAVES = st.one_of(
    st.none(), st.booleans(), integers(), st.floats(), texts(), st.binary(max_size=8),
    st.sampled_from([Obj("RaisingRepr()"), Obj("ExitingRepr()"), Obj("HugeRepr()"), Obj("SurrogateRepr()"),
                     Obj("object()")]),
)


def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.one_of(texts(), texts(), integers(), st.booleans())
    return st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=5).map(tuple),
        st.dictionaries(texts(), children, max_size=5),
        st.dictionaries(keys, children, max_size=4),
        st.frozensets(integers(), max_size=4),
    )


VALUES = st.recursive(LEAVES, containers, max_leaves=16)


@pytest.fixture(scope="module", params=["msgpack", "json"])
def worker(request):
    process = WorkerProcess(codec=request.param)
    process.execute(OBJECTS + "import os")
    process.pid = process.execute("os.getpid()")["result"]["value"]
    yield process
    process.close()


def check_survives(worker: WorkerProcess) -> None:
    result = worker.execute("sentinel, os.getpid()")
    assert result["result"]["value"] == ["still here", worker.pid]


def answer(worker: WorkerProcess, op: str, params: dict[str, Any]) -> dict[str, Any]:
    response = worker.request(op, params)
    assert response["type"] == "response"
    return response


@PROPERTY_SETTINGS
@given(VALUES)
def test_a_returned_value_is_exact_or_flagged_and_the_worker_survives(worker, value):
    code = f"value = {source(value)}\nvalue"
    response = answer(worker, "execute", {"code": code})
    assert response["ok"], response
    result = response["result"]
    rendered = result["result"]
    if value is None:
        assert rendered is None  # IPython shows no value for None
    elif has_json_form(value) and rendered["kind"] == "json" and not result["truncated"]["result"]:
        decoded = decode(rendered["value"], rendered.get("encoded", {}))
        assert same(decoded, as_json_data(value)), (code, rendered)
    elif has_json_form(value):
        assert result["truncated"]["result"], (code, rendered)  # only a limit can stop a JSON form
    else:
        assert rendered["kind"] == "repr" and isinstance(rendered["repr"], str), (code, rendered)
    check_survives(worker)


def test_an_escaped_key_whose_value_is_encoded_too_is_marked_for_both(worker):
    result = answer(worker, "execute", {"code": "{'k\\udc80': 10**20, 'caf\\udce9': 'v\\ud800'}"})["result"]["result"]
    assert result["encoded"] == {'$["k\\\\udc80"]': "key+int", '$["caf\\\\udce9"]': "key+text"}
    assert decode(result["value"], result["encoded"]) == {"k\udc80": 10**20, "caf\udce9": "v\ud800"}


@PROPERTY_SETTINGS
@given(VALUES)
def test_printed_raised_and_called_values_always_answer(worker, value):
    setup = f"value = {source(value)}\ndef give():\n    return value\n"
    assert answer(worker, "execute", {"code": setup})["ok"]
    printed = answer(worker, "execute", {"code": "print(value)"})["result"]
    if printed["status"] == "ok" and "stdout" not in printed.get("escaped", []):
        printed["stdout"].encode("utf-8")
    raised = answer(worker, "execute", {"code": "raise ValueError(value)"})["result"]
    # A __str__ that raises SystemExit while IPython renders the traceback is what IPython then reports.
    assert raised["status"] == "error" and raised["error"]["type"] in ("ValueError", "SystemExit")
    called = answer(worker, "call_function", {"name": "give", "arguments": {}})
    if called["ok"]:
        assert has_json_form(value)
        if not called["result"]["truncated"]:
            assert same(decode(called["result"]["value"], called["result"].get("encoded", {})), as_json_data(value))
    else:
        assert called["error"]["code"] == "result_not_json", called
        assert not has_json_form(value)
    check_survives(worker)


@PROPERTY_SETTINGS
@given(st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                                                     st.floats(), texts()),
                       max_size=4))
def test_javascript_numbers_arrive_as_python_would_write_them(worker, value):
    """call_function arguments: a safe integral number is an int, whatever the codec made of it on the way."""
    assert answer(worker, "execute", {"code": "def types(**kw):\n    return {k: type(v).__name__ for k, v in kw.items()}"})["ok"]
    wire = {}
    for key, item in value.items():
        if isinstance(item, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in item):
            continue  # JSON text from a client cannot hold a lone surrogate
        if isinstance(item, float) and not math.isfinite(item):
            continue  # nor NaN or Infinity
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_SAFE_INTEGER:
            item = float(item)  # a JavaScript number is a double
        wire[key] = float(item) if isinstance(item, int) and not isinstance(item, bool) and item % 2 else item
    response = answer(worker, "call_function", {"name": "types", "arguments": wire})
    assert response["ok"], response
    for key, item in wire.items():
        expected = type(item).__name__
        if isinstance(item, float) and item.is_integer() and abs(item) <= MAX_SAFE_INTEGER:
            expected = "int"
        assert response["result"]["value"][key] == expected, (key, item)
    check_survives(worker)


# -- defence in depth: nothing that fails to encode ends the worker ------------------------------------------


BREAK_NEXT_RESULT = (
    "import ipython_mcp_worker.shell.execute as _shell\n"
    "_original = _shell.execute_result\n"
    "def _patched(*args):\n"
    "    extra = get_ipython().user_ns.pop('_extra', {})\n"
    "    return {**_original(*args), **extra}\n"
    "_shell.execute_result = _patched\n"
)


@pytest.fixture
def breakable(worker):
    """A worker whose next execute result gets the parts in the ``_extra`` variable added, past every value check."""
    assert answer(worker, "execute", {"code": BREAK_NEXT_RESULT})["ok"]
    yield worker
    assert answer(worker, "execute", {"code": "_shell.execute_result = _original"})["ok"]
    check_survives(worker)


def test_a_response_that_fails_to_encode_is_repaired_and_flagged(breakable):
    code = "_extra = {'odd': object(), 'big': 2**70, 'text': '\\udcff'}\n40 + 2"
    response = answer(breakable, "execute", {"code": code})
    assert response["ok"], response
    result = response["result"]
    assert result["result"]["value"] == 42
    assert result["odd"].startswith("<object object at") and result["big"] == str(2**70)
    assert result["text"] == "\\udcff"
    assert sorted(result["escaped"]) == ["big", "odd", "text"]


def test_a_response_that_cannot_be_repaired_is_a_structured_error(breakable):
    code = ("import ipython_mcp_worker.values.repair as _repair\n_saved = _repair.repair\n"
            "def _broken(message):\n    raise RuntimeError('no repair')\n"
            "_repair.repair = _broken\n_extra = {'odd': object()}\n1")
    response = answer(breakable, "execute", {"code": code})
    assert answer(breakable, "execute", {"code": "_repair.repair = _saved"})["ok"]
    assert not response["ok"]
    assert response["error"]["code"] == "internal_error"
    assert "could not be encoded" in response["error"]["message"]


def test_streamed_output_with_lone_surrogates_arrives(worker):
    events: list[dict[str, Any]] = []
    response = worker.request("execute", {"code": "print('a\\udcffb')"}, stream=True, events=events)
    assert response["ok"] and response["result"]["stdout"] == "a\\udcffb\n"
    assert response["result"]["escaped"] == ["stdout"]
    streamed = "".join(event["text"] for event in events if event.get("type") == "event")
    assert streamed == "a\\udcffb\n"
    check_survives(worker)


def test_an_error_message_with_lone_surrogates_is_flagged(worker):
    result = answer(worker, "execute", {"code": "raise ValueError('bad \\udcff')"})["result"]
    assert result["error"]["message"] == "bad \\udcff"
    assert "error.message" in result["escaped"]
    check_survives(worker)


def test_a_syntax_error_with_an_absurd_line_number_answers(worker):
    result = answer(worker, "execute", {"code": "raise SyntaxError('x', ('f', 2**70, 1, 'text'))"})["result"]
    assert result["status"] == "error" and result["error"]["lineno"] == 0
    check_survives(worker)
