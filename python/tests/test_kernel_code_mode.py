"""Code Mode's run_code inside a real ipykernel: the cell is the kernel's own, its tool calls are input requests on
the kernel's stdin channel, answered here as the Node side answers them (packages/jupyter-kernel kernel-stdin.ts)."""

from __future__ import annotations

import json
import queue
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_kernel_side import Kernel, booted_kernel

from ipython_mcp_worker.kernel.stdin_calls import PROMPT_PREFIX, STDIN_REFUSED

ECHO = {"python_name": "echo", "tool_name": "echo", "doc": "Echo.",
        "parameters": [{"name": "text", "key": "text", "annotation": "str", "required": True}]}


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    yield from booted_kernel(tmp_path_factory)


@pytest.fixture
def comm(kernel: Kernel) -> str:
    comm_id = kernel.open_comm()
    assert kernel.ready(comm_id)["type"] == "ready"
    kernel.request(comm_id, 1, "define_tools", {"tools": [ECHO], "max_tool_calls": 3})
    response = kernel.response(comm_id, 1)
    assert response["ok"] is True, response
    return comm_id


def run_code(kernel: Kernel, comm: str, request_id: int, code: str, allow_stdin: bool = True) -> None:
    message = kernel.client.session.msg(
        "execute_request",
        {"code": code, "silent": False, "store_history": True, "allow_stdin": allow_stdin, "stop_on_error": False,
         "user_expressions": {}},
        metadata={"ipython_mcp": {"id": request_id, "op": "run_code", "params": {"code": code}, "comm": comm}})
    kernel.client.shell_channel.send(message)


def answer_calls(kernel: Kernel, answer: Callable[[dict[str, Any]], list[dict[str, Any]]], count: int) -> list[str]:
    """Answers ``count`` input requests: ``answer`` gives the replies (several: stale ones first) for each call."""
    prompts = []
    while len(prompts) < count:
        request = kernel.client.get_stdin_msg(timeout=30)
        prompt = request["content"]["prompt"]
        prompts.append(prompt)
        assert prompt.startswith(PROMPT_PREFIX)
        call = json.loads(prompt[len(PROMPT_PREFIX):])
        replies = answer(call)
        kernel.client.input(json.dumps(replies[0]))
        for later in replies[1:]:
            request = kernel.client.get_stdin_msg(timeout=30)  # asked again after a stale answer
            assert json.loads(request["content"]["prompt"][len(PROMPT_PREFIX):]) == call
            kernel.client.input(json.dumps(later))
    return prompts


def echoed(call: dict[str, Any]) -> list[dict[str, Any]]:
    value = json.dumps(f"echo:{call['arguments']['text']}")
    return [{"type": "tool_result", "call_id": call["call_id"], "ok": True, "value_json": value}]


def test_tool_calls_travel_as_input_requests_and_the_cell_answers_on_the_comm(kernel: Kernel, comm: str) -> None:
    run_code(kernel, comm, 2, 'first = echo(text="a")\n[first, echo(text="b")]')
    prompts = answer_calls(kernel, echoed, 2)
    assert json.loads(prompts[0][len(PROMPT_PREFIX):])["name"] == "echo"
    response = kernel.response(comm, 2)
    result = response["result"]
    assert result is not None, response
    assert result["status"] == "ok" and result["result"]["value"] == ["echo:a", "echo:b"] and result["tool_calls_made"] == 2


def test_failures_budget_and_input(kernel: Kernel, comm: str) -> None:
    def failing(call: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "tool_result", "call_id": call["call_id"], "ok": False, "message": "no such city"}]

    code = ("out = []\nfor _ in range(5):\n    try:\n        echo(text='x')\n    except ToolCallError as error:\n"
            "        out.append(str(error))\nout.append(input('prompt? '))\nout")
    run_code(kernel, comm, 3, code)
    answer_calls(kernel, failing, 3)
    result = kernel.response(comm, 3)["result"]
    assert result["result"]["value"][:3] == ["no such city"] * 3
    assert "at most 3 tool calls" in result["result"]["value"][3]
    # The agent's input() reads "" without asking anyone; the prompt is printed, as on the local worker.
    assert result["result"]["value"][-1] == "" and result["output"] == "prompt? "
    with pytest.raises(queue.Empty):
        kernel.client.get_stdin_msg(timeout=0.5)



def test_a_stale_answer_is_skipped_and_the_call_asked_again(kernel: Kernel, comm: str) -> None:
    def stale_first(call: dict[str, Any]) -> list[dict[str, Any]]:
        stale = {"type": "tool_result", "call_id": call["call_id"] - 1, "ok": True, "value_json": '"stale"'}
        return [stale, *echoed(call)]

    run_code(kernel, comm, 4, 'echo(text="fresh")')
    answer_calls(kernel, stale_first, 1)
    assert kernel.response(comm, 4)["result"]["result"]["value"] == "echo:fresh"


def test_a_cell_without_stdin_names_the_setting(kernel: Kernel, comm: str) -> None:
    run_code(kernel, comm, 5, 'try:\n    echo(text="x")\nexcept ToolCallError as error:\n    message = str(error)\nmessage',
             allow_stdin=False)
    message = kernel.response(comm, 5)["result"]["result"]["value"]
    assert message == STDIN_REFUSED and "allow_stdin" in message


def test_human_input_in_the_kernel_is_not_replaced(kernel: Kernel, comm: str) -> None:
    # After the agent's cell, a person's input() asks their own frontend again (ipykernel's raw_input).
    kernel.client.execute('answer = input("person> ")', allow_stdin=True)
    request = kernel.client.get_stdin_msg(timeout=30)
    assert request["content"]["prompt"] == "person> "
    kernel.client.input("typed")
    assert kernel.run("assert answer == 'typed'")["content"]["status"] == "ok"
