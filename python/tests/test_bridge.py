"""The Code Mode tool bridge against a real worker subprocess: define_tools, run_code and nested tool calls."""

from __future__ import annotations

import json
import re
import time

import pytest
from worker_process import WorkerProcess

from ipython_mcp_worker.protocol.constants import RUN_CODE_DROPPED_FIELDS

WEATHER = {
    "python_name": "get_weather",
    "tool_name": "get-weather",
    "doc": "Get the weather for a city.",
    "parameters": [
        {"name": "city", "key": "city", "annotation": "str", "required": True},
        {"name": "units", "key": "units", "annotation": "Literal['metric', 'imperial']", "required": False,
         "default": "metric"},
        {"name": "days", "key": "days", "annotation": "int | None", "required": False, "default": None,
         "omit_none": True},
        {"name": "from_", "key": "from", "annotation": "str | None", "required": False, "default": None},
    ],
}
ANYTHING = {"python_name": "anything", "tool_name": "anything", "doc": None, "parameters": None}


@pytest.fixture
def worker():
    process = WorkerProcess()
    yield process
    process.close()


def define(worker: WorkerProcess, tools=(WEATHER, ANYTHING), **extra) -> dict:
    response = worker.request("define_tools", {"tools": list(tools), **extra})
    assert response["ok"], response
    return response["result"]


class Tools:
    """Answers tool_call messages like the parent would, and records them in order."""

    def __init__(self, fail: str | None = None, answer: bool = True, delay: float = 0.0) -> None:
        self.calls: list[dict] = []
        self.fail = fail
        self.answer = answer
        self.delay = delay

    def __call__(self, message: dict) -> dict | None:
        self.calls.append(message)
        if self.delay:
            time.sleep(self.delay)
        if not self.answer:
            return None
        if self.fail is not None and message["arguments"].get("city") == self.fail:
            return {"ok": False, "message": f"unknown city {self.fail}"}
        return {"ok": True, "value": {"tool": message["name"], "arguments": message["arguments"]}}


def run(worker: WorkerProcess, code: str, tools: Tools | None = None, **params) -> dict:
    response = worker.request("run_code", {"code": code, **params}, tool_handler=tools or Tools())
    assert response["ok"], response
    return response["result"]


def test_functions_have_keyword_only_signatures_and_docs(worker):
    assert define(worker) == {"defined": ["get_weather", "anything"], "removed": []}
    result = run(worker, "import inspect\nprint(inspect.signature(get_weather))\nprint(get_weather.__doc__)\n"
                         "print(inspect.signature(anything))\nget_weather.__name__, get_weather.tool_name")
    assert result["output"] == (
        "(*, city: str, units: Literal['metric', 'imperial'] = 'metric', days: int | None = None, "
        "from_: str | None = None) -> Any\nGet the weather for a city.\n(**arguments: Any) -> Any\n"
    )
    assert result["result"] == {"kind": "json", "value": ["get_weather", "get-weather"]}


def test_a_call_reaches_the_parent_and_returns_its_value(worker):
    define(worker)
    tools = Tools()
    result = run(worker, "get_weather(city='Paris', from_='x', days=None)", tools)
    assert result["status"] == "ok"
    # Python names map back to the schema's keys; an optional None is left out; defaults are the tool's own.
    expected = {"tool": "get-weather", "arguments": {"city": "Paris", "from": "x"}}
    assert result["result"] == {"kind": "json", "value": expected}
    assert [(call["name"], call["call_id"] > 0) for call in tools.calls] == [("get-weather", True)]
    assert tools.calls[0]["id"] > 0
    assert result["tool_calls_made"] == 1


def test_each_call_after_the_first_says_how_long_the_previous_one_waited(worker):
    define(worker)
    tools = Tools(delay=0.02)
    code = "for city in ['a', 'b', 'c']:\n    get_weather(city=city)"
    run(worker, code, tools)
    run(worker, "get_weather(city='d')", tools)
    waited = [call.get("waited_us") for call in tools.calls]
    # The first call of each run has none; a later one is at least the parent's 20 ms answering the one before.
    assert waited[0] is None and waited[3] is None, waited
    assert all(isinstance(value, int) and 20_000 <= value < 5_000_000 for value in waited[1:3]), waited


def test_arguments_go_in_parameter_order_whatever_order_the_call_gives(worker):
    define(worker)
    tools = Tools()
    run(worker, "get_weather(from_='x', days=2, units='imperial', city='Paris')\nget_weather(days=None, city='Oslo')", tools)
    assert [list(call["arguments"].items()) for call in tools.calls] == [
        [("city", "Paris"), ("units", "imperial"), ("days", 2), ("from", "x")],
        [("city", "Oslo")],
    ]
    # Python's own TypeError when names are both missing and unexpected, as signature.bind words it.
    failed = run(worker, "get_weather(town='Paris', units='metric')", tools)
    assert failed["error"]["type"] == "TypeError"
    assert re.search(r"missing a required (keyword-only )?argument: 'city'", failed["error"]["message"])
    assert len(tools.calls) == 2


def test_arguments_are_converted_to_json_or_refused(worker):
    define(worker)
    result = run(worker, "anything(a=(1, 2), b={'k': [True, None, 1.5]})")
    assert result["result"]["value"]["arguments"] == {"a": [1, 2], "b": {"k": [True, None, 1.5]}}
    for code, pattern in [
        ("anything(x=object())", re.escape("argument x of type object has no JSON form")),
        ("get_weather('Paris')", re.escape("get_weather() takes keyword arguments only")),
        # CPython 3.13 says "missing a required keyword-only argument", earlier versions "missing a required argument".
        ("get_weather(town='Paris')", r"missing a required (keyword-only )?argument: 'city'"),
        ("get_weather(city='Paris', town='x')", re.escape("got an unexpected keyword argument 'town'")),
        ("anything(x=float('nan'))", re.escape("has no JSON form")),
    ]:
        failed = run(worker, code)
        expected = "TypeError" if "JSON" not in pattern else "ToolArgumentError"  # both a ToolCallError and a TypeError
        assert failed["error"]["type"] == expected, code
        assert re.search(pattern, failed["error"]["message"]), (code, failed["error"]["message"])


def test_a_failing_tool_raises_tool_call_error_that_code_can_catch(worker):
    define(worker)
    tools = Tools(fail="Atlantis")
    caught = run(worker, "try:\n    get_weather(city='Atlantis')\nexcept ToolCallError as error:\n"
                         "    print('caught:', error, error.tool_name)", tools)
    assert caught["output"] == "caught: unknown city Atlantis get-weather\n"
    raised = run(worker, "x = 1\nget_weather(city='Atlantis')", tools)
    assert raised["status"] == "error"
    assert (raised["error"]["type"], raised["error"]["message"]) == ("ToolCallError", "unknown city Atlantis")
    assert "get_weather(city='Atlantis')" in raised["error"]["traceback"]
    assert run(worker, "x")["result"] == {"kind": "json", "value": 1}


def test_max_tool_calls_bounds_each_run_and_resets(worker):
    define(worker)
    tools = Tools()
    code = ("made = 0\ntry:\n    for _ in range(5):\n        anything(n=1)\n        made += 1\n"
            "except ToolCallError as error:\n    print(error)\nmade")
    result = run(worker, code, tools, max_tool_calls=2)
    assert result["result"]["value"] == 2
    assert result["output"] == "tool call limit reached: one run may make at most 2 tool calls\n"
    assert len(tools.calls) == 2
    assert result["tool_calls_made"] == 2
    assert run(worker, code, tools, max_tool_calls=3)["result"]["value"] == 3
    assert run(worker, "anything(n=1)", Tools(), max_tool_calls=0)["error"]["type"] == "ToolCallError"


def test_calls_from_other_threads_fail_clearly(worker):
    define(worker)
    code = ("import threading\nfailures = []\ndef work():\n    try:\n        anything(n=1)\n"
            "    except Exception as error:\n        failures.append(f'{type(error).__name__}: {error}')\n"
            "thread = threading.Thread(target=work)\nthread.start(); thread.join()\nfailures")
    result = run(worker, code)
    assert result["result"]["value"] == ["RuntimeError: anything: tool functions can only be called from the main thread"]


def test_an_interrupt_while_waiting_propagates_and_a_late_answer_is_ignored(worker):
    define(worker)
    silent = Tools(answer=False)
    request_id = worker.next_id
    worker.send({"type": "request", "id": request_id, "op": "run_code",
                 "params": {"code": "state = 'kept'\nanything(n=1)"}, "stream": False})
    worker.next_id += 1
    message = worker.read()
    assert message["type"] == "tool_call"
    silent(message)
    time.sleep(0.1)
    worker.send({"type": "interrupt", "id": request_id})
    response = worker.read()
    assert response["type"] == "response" and response["id"] == request_id
    assert response["result"]["error"]["type"] == "KeyboardInterrupt"
    # The abandoned call's answer arrives late; the next call must get its own answer, not that one.
    worker.send({"type": "tool_result", "call_id": message["call_id"], "ok": True, "value_json": '"stale"'})
    result = run(worker, "state, anything(n=2)['arguments']")
    assert result["result"]["value"] == ["kept", {"n": 2}]


def test_frames_arriving_while_the_main_thread_waits_for_its_answer_are_all_handled_in_order(worker):
    # The main thread reads fd 3 itself while a call is pending: a stale answer, a bad frame and an interrupt for
    # another request must be handled as the reader thread would, and the real answer still reach the call.
    define(worker)
    request_id = worker.next_id
    worker.send({"type": "request", "id": request_id, "op": "run_code",
                 "params": {"code": "[anything(n=1)['arguments'], anything(n=2)['arguments']]"}, "stream": False})
    worker.next_id += 1
    first = worker.read()
    assert first["type"] == "tool_call"
    worker.send({"type": "tool_result", "call_id": first["call_id"] - 1, "ok": True, "value_json": '"stale"'})
    worker.send({"type": "no_such_frame"})
    worker.send({"type": "interrupt", "id": request_id + 1000})
    error = worker.read()
    assert error["type"] == "protocol_error" and "no_such_frame" in error["message"]
    worker.send({"type": "tool_result", "call_id": first["call_id"], "ok": True,
                 "value_json": json.dumps({"arguments": first["arguments"]})})
    second = worker.read()
    assert second["type"] == "tool_call" and second["call_id"] == first["call_id"] + 1
    worker.send({"type": "tool_result", "call_id": second["call_id"], "ok": True,
                 "value_json": json.dumps({"arguments": second["arguments"]})})
    response = worker.read()
    assert response["type"] == "response" and response["id"] == request_id, response
    assert response["result"]["result"]["value"] == [{"n": 1}, {"n": 2}]
    # The reader thread owns fd 3 again: an interrupt during plain code still stops it.
    stopped = worker.next_id
    worker.send({"type": "request", "id": stopped, "op": "run_code",
                 "params": {"code": "import time\nwhile True: time.sleep(0.01)"}, "stream": False})
    worker.next_id += 1
    time.sleep(0.2)
    worker.send({"type": "interrupt", "id": stopped})
    response = worker.read()
    assert response["id"] == stopped and response["result"]["error"]["type"] == "KeyboardInterrupt"


def test_a_memory_stop_while_waiting_for_an_answer_answers_memory_limit(worker):
    define(worker)
    request_id = worker.next_id
    worker.send({"type": "request", "id": request_id, "op": "run_code",
                 "params": {"code": "anything(n=1)"}, "stream": False})
    worker.next_id += 1
    assert worker.read()["type"] == "tool_call"
    worker.send({"type": "interrupt", "id": request_id, "reason": "memory_limit"})
    response = worker.read()
    assert response["id"] == request_id and response["ok"] is False
    assert response["error"]["code"] == "memory_limit"
    assert run(worker, "1 + 1")["result"]["value"] == 2


def test_output_is_ordered_across_stdout_stderr_and_displays(worker):
    define(worker)
    code = (
        "import sys\nfrom IPython.display import display, Markdown, HTML\nprint('one')\n"
        "print('two', file=sys.stderr)\ndisplay(Markdown('**three**'))\nprint('four')\n"
        "display(HTML('<b>five</b>'))\ndisplay({'six': 6}, raw=False)\n"
        "import os; os.write(1, b'seven\\n')\nNone"
    )
    result = run(worker, code)
    assert result["output"] == "one\ntwo\n**three**\nfour\n<b>five</b>\n{'six': 6}\nseven\n"
    assert result["displays"] == []
    assert result["output_omitted_chars"] == 0


def test_run_code_answers_its_own_fields_in_order_and_none_of_the_separate_streams(worker):
    define(worker)
    for code in ("print('x' * 50_000)\n1", "1/0"):
        result = run(worker, code)
        assert not set(RUN_CODE_DROPPED_FIELDS) & set(result)
        assert not any(key.startswith(("stdout", "stderr")) for key in result)
        assert list(result) == ["status", "execution_count", "truncated", "result", "displays", "displays_omitted",
                                "error", "output", "output_omitted_chars", "result_cut", "tool_calls_made"]
        assert list(result["truncated"]) == ["result", "displays", "output"]


def test_image_displays_are_kept_apart_from_the_text(worker):
    define(worker)
    code = ("import matplotlib.pyplot as plt\nprint('before')\nplt.plot([1, 2, 3])\nplt.show()\nprint('after')\n"
            "from PIL import Image\nImage.new('RGB', (3, 3), 'red')")
    result = run(worker, code)
    assert result["output"] == "before\nafter\n"
    # The backend variable was only needed for matplotlib's first import; later programs do not inherit it.
    assert run(worker, "import os\n'MPLBACKEND' in os.environ")["result"]["value"] is False
    assert len(result["displays"]) == 1
    assert result["displays"][0]["data"]["image/png"].startswith("iVBOR")
    assert result["result"]["kind"] == "repr"
    assert result["result"]["images"]["image/png"].startswith("iVBOR")


def test_output_is_capped_with_an_exact_count_of_what_was_dropped():
    worker = WorkerProcess(limits={"max_text_chars": 100})
    try:
        define(worker)
        result = run(worker, "import sys\nprint('a' * 80)\nprint('é' * 50, file=sys.stderr)\nprint('z' * 1000)")
        assert result["output"] == "a" * 80 + "\n" + "é" * 19
        assert result["output_omitted_chars"] == (50 + 1 - 19) + 1001
        assert result["truncated"]["output"] is True
    finally:
        worker.close()


def test_oversized_arguments_fail_the_call_not_the_worker():
    worker = WorkerProcess(limits={"max_ipc_message_bytes": 65536})
    try:
        define(worker)
        tools = Tools()
        result = run(worker, "try:\n    anything(blob='x' * 100_000)\nexcept ToolCallError as error:\n"
                             "    print(error)\nanything(n=1)['arguments']", tools)
        assert "over the 65536-byte message limit" in result["output"]
        assert result["result"]["value"] == {"n": 1}
        assert len(tools.calls) == 1
    finally:
        worker.close()


def test_redefining_replaces_the_previous_functions_and_rebinds_deleted_ones(worker):
    define(worker)
    assert define(worker, tools=[ANYTHING]) == {"defined": ["anything"], "removed": ["get_weather"]}
    result = run(worker, "'get_weather' in dir(), callable(anything)")
    assert result["result"]["value"] == [False, True]
    # A user who deletes the functions (or %reset) gets them back at the next run; a rebound name stays.
    run(worker, "del anything, ToolCallError")
    assert run(worker, "anything(n=1)['tool'], ToolCallError.__name__")["result"]["value"] == ["anything", "ToolCallError"]
    run(worker, "anything = 'mine'")
    assert run(worker, "anything")["result"]["value"] == "mine"
    define(worker, tools=[ANYTHING])
    assert run(worker, "anything(n=1)['tool']")["result"]["value"] == "anything"


def test_bad_definitions_are_refused(worker):
    for tools, code in [
        ([{**ANYTHING, "python_name": "not-an-identifier"}], "invalid_name"),
        ([{**ANYTHING, "python_name": "class"}], "invalid_name"),
        ([ANYTHING, ANYTHING], "name_collision"),
        ([{**WEATHER, "parameters": [{"name": "a", "key": "a"}, {"name": "a", "key": "b"}]}], "invalid_name"),
    ]:
        response = worker.request("define_tools", {"tools": tools})
        assert response["ok"] is False and response["error"]["code"] == code, tools


def test_input_returns_an_empty_string(worker):
    define(worker)
    result = run(worker, "answer = input('name? ')\nanswer")
    assert result["result"] == {"kind": "json", "value": ""}
    assert result["output"] == "name? "


def test_arguments_javascript_cannot_hold_raise_tool_argument_error(worker):
    """2**70, lone surrogates: refused before the call, as ToolCallError (and TypeError), never OverflowError."""
    define(worker)
    for argument in ("2**70", "-(2**53)", "'caf\\udce9'", "{'k\\udcff': 1}"):
        code = (f"try:\n    anything(x={argument})\nexcept ToolCallError as error:\n"
                "    print(type(error).__name__, isinstance(error, TypeError))")
        result = run(worker, code)
        assert result["output"] == "ToolArgumentError True\n", (argument, result)
    assert run(worker, "anything(x=2**53 - 1)['arguments']")["result"]["value"] == {"x": 2**53 - 1}


def test_tool_values_arrive_with_every_number_exact(worker):
    """value_json as the parent writes it: NaN and Infinity tokens, BigInt digits, safe integers as int."""
    define(worker)
    text = '{"n": 5000000000, "big": 1180591620717411303424, "nan": NaN, "inf": -Infinity, "f": 1.5, "u": 1e+300}'
    code = "r = anything(n=1)\n[(k, type(v).__name__, repr(v)) for k, v in r.items()]"
    result = run(worker, code, lambda message: {"ok": True, "value_json": text})
    assert result["result"]["value"] == [
        ["n", "int", "5000000000"], ["big", "int", "1180591620717411303424"], ["nan", "float", "nan"],
        ["inf", "float", "-inf"], ["f", "float", "1.5"], ["u", "float", "1e+300"]]


def test_a_run_code_capture_is_freed_without_the_cyclic_collector(worker):
    define(worker)
    setup = ("import gc, weakref\n"
             "_owner = next(o for o in gc.get_objects() if type(o).__name__ == 'ShellOwner')\n"
             "_ended = weakref.ref(_owner.operation.capture)\n"
             "_ended_display = weakref.ref(_owner.operation.capture.display)\n"
             "gc.disable()")
    assert run(worker, setup)["status"] == "ok"
    try:
        assert run(worker, "(_ended(), _ended_display())")["result"]["value"] == [None, None]
    finally:
        run(worker, "gc.enable()")
