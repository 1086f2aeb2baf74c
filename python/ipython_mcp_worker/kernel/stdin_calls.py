"""Code Mode's nested calls from a Jupyter kernel, on the kernel's own stdin channel (docs/jupyter.md).

A run_code cell runs as the kernel's own cell, an ``execute_request`` with ``allow_stdin`` true. Its tool functions
call the host as ``input()`` calls a frontend: the kernel sends an ``input_request`` whose prompt is
``PROMPT_PREFIX`` followed by the ``tool_call`` message as JSON text, and the host's ``input_reply`` carries the
``tool_result`` message as JSON text. The kernel routes an input request to the client that sent the running
request only, so the agent's calls never reach a person's frontend, and a person's ``input()`` never reaches the
agent.
"""

from __future__ import annotations

import builtins
import json
import sys
from typing import Any

from ..code_mode.bridge import ToolCallError
from ..ipc.codec import FrameTooLarge

# Recognisable and versioned: the Node side answers only prompts that start with it (kernel-stdin.ts).
PROMPT_PREFIX = "ipython-mcp/tool_call/1 "
# An answer for an earlier call (one an interrupt abandoned) is skipped and the call asked again, this many times.
_STALE_ANSWERS = 3
STDIN_REFUSED = ("the kernel's stdin channel is off for this cell (its execute_request came with allow_stdin "
                 "false): Code Mode's tool calls travel on it. Fix: let the server or gateway between ipython-mcp "
                 "and the kernel pass allow_stdin through")


class StdinTransport:
    """The bridge's transport inside a kernel: one ``input_request`` per call, answered by the host."""

    def __init__(self, shell: Any, limit: int) -> None:
        self.shell = shell
        self.limit = limit

    def encode(self, message: dict[str, Any]) -> str:
        text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.limit:
            raise FrameTooLarge(size, self.limit)
        return PROMPT_PREFIX + text

    def round_trip(self, payload: str, call_id: int) -> dict[str, Any]:
        kernel = getattr(self.shell, "kernel", None)
        if kernel is None or not getattr(kernel, "_allow_stdin", False):
            raise ToolCallError(STDIN_REFUSED)
        from IPython.core.error import StdinNotImplementedError

        for _ in range(_STALE_ANSWERS + 1):
            try:
                # ipykernel's own path (the requester's routing id and parent header, across its versions); an
                # interrupt of the cell raises KeyboardInterrupt out of its wait.
                value = kernel.raw_input(payload)
            except StdinNotImplementedError:
                raise ToolCallError(STDIN_REFUSED) from None
            except EOFError:
                raise ToolCallError("the host ended the tool call without an answer") from None
            answer = _answer(value)
            if answer is None:
                raise ToolCallError("the host's answer to the tool call is not a tool result")
            if answer.get("call_id") == call_id:
                return answer
        raise ToolCallError("the host kept answering an earlier tool call")


def _answer(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, str):
        return None
    try:
        answer = json.loads(value)
    except ValueError:
        return None
    if not isinstance(answer, dict) or answer.get("type") != "tool_result":
        return None
    return answer


def _empty_input(prompt: object = "") -> str:
    """The agent's own ``input()`` reads an empty line, as on the local worker: nobody types into its cell."""
    if prompt:
        sys.stdout.write(str(prompt))
    return ""


class QuietInput:
    """``input()`` returning "" for the length of an agent's cell; the kernel's own (a frontend prompt) after it."""

    def __init__(self) -> None:
        self._saved: Any = None

    def __enter__(self) -> QuietInput:
        self._saved = builtins.input
        builtins.input = _empty_input
        return self

    def restore(self) -> None:
        if self._saved is not None and builtins.input is _empty_input:
            builtins.input = self._saved
        self._saved = None
