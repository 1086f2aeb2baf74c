"""Code Mode's tool bridge: the agent's tools as synchronous functions in the shell's user namespace.

``define_tools`` binds one function per tool. Calling one sends a ``tool_call`` frame for the active request
and blocks the main thread until the parent answers with the matching ``tool_result`` (docs/protocol.md,
"Nested tool calls"). ``run_code`` runs one cell for Code Mode: it re-binds deleted functions, resets the
per-request call counter, and runs the cell with its own capture (capture/cell.py): stdout, stderr and the text of
non-image displays go into one ordered, bounded output, image displays are kept, and the value must be exact JSON
or is given as text.

Nothing here evaluates strings: signatures are built with ``inspect.Parameter`` from structured parameter
specs that the parent renders from each tool's JSON Schema.
"""

from __future__ import annotations

import inspect
import json
import keyword
import math
import re
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ..capture.cell import CellCapture, ValueCodec
from ..capture.displays import DisplayCollector, ImageRoom
from ..capture.matplotlib_backend import forget_inline, prefer_inline
from ..capture.sinks import PrefixSink
from ..ipc.codec import FrameTooLarge
from ..protocol.context import WorkerContext
from ..protocol.errors import OpError
from ..values.jsonvalue import MAX_SAFE_INTEGER, encode_text
from .transport import PipeTransport, ToolTransport

DEFAULT_MAX_TOOL_CALLS = 100
_MAX_ARGUMENT_DEPTH = 64
# The repr object.__repr__ gives a display object (``<IPython.core.display.HTML object>``): nothing to read.
_DEFAULT_REPR = re.compile(r"^<[\w.]+ object( at 0x[0-9a-f]+)?>$")
# The main thread's ident (the tool functions' thread check compares idents: cheaper than current_thread()).
_MAIN_THREAD = threading.main_thread().ident
# json.loads' own scanner, called directly for a value that is JSON text from end to end (what JSON.stringify writes):
# json.loads itself first strips whitespace with two regular expressions on every call.
_SCAN_JSON = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in __init__, untyped in typeshed


class ToolCallError(Exception):
    """A tool called from code failed; the message is the tool's own error message. Code may catch it."""

    def __init__(self, message: str, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.tool_name = tool_name


class ToolArgumentError(ToolCallError, TypeError):
    """An argument a tool cannot receive exactly (no JSON form, or a number or text JavaScript cannot hold).

    Both a ToolCallError (the call failed) and a TypeError (like any other argument Python refuses)."""


class RunCodeCell(NamedTuple):
    """One run_code cell between ``begin_cell`` and ``cell_result``."""

    code: str
    capture: CellCapture
    output: PrefixSink
    image_displays: DisplayCollector
    budget_before: int


class _TypeText:
    """An annotation shown as the parent rendered it (``str``, ``list[int]``), without evaluating anything."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class ToolBridge:
    """Owns the tool functions of one worker and the per-request call budget."""

    def __init__(self, worker: WorkerContext) -> None:
        self.worker = worker
        self.functions: dict[str, Callable[..., Any]] = {}
        self.max_tool_calls = DEFAULT_MAX_TOOL_CALLS
        self._next_call_id = 0
        self._budget_request: int | None = None
        self._calls_made = 0
        # How long this request's previous call waited for its answer (µs), sent with the next call: the parent does
        # not count the frames' transit as the code's time (docs/protocol.md, "Nested tool calls").
        self._waited_us: int | None = None
        # How a call reaches the host and its answer comes back: the worker's channel, unless the worker lives in
        # a Jupyter kernel, whose calls travel on the kernel's stdin channel (kernel/stdin_calls.py).
        self.transport: ToolTransport = PipeTransport(worker)
        self._bind("ToolCallError", ToolCallError)

    # ---- operations -------------------------------------------------------------------------------------

    def define_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        """``{"tools": [spec], "max_tool_calls"?}`` → ``{"defined": [python names], "removed": [...]}``."""
        tools = params.get("tools")
        if not isinstance(tools, list):
            raise OpError("invalid_arguments", "define_tools needs a list 'tools'")
        if "max_tool_calls" in params:
            self.max_tool_calls = _count(params["max_tool_calls"], "max_tool_calls")
        functions: dict[str, Callable[..., Any]] = {}
        for index, spec in enumerate(tools):
            function = self._make_function(spec, index)
            if function.__name__ in functions:
                raise OpError("name_collision", f"two tools are named {function.__name__!r} in Python")
            functions[function.__name__] = function
        namespace = self.worker.shell.user_ns
        removed = []
        for name, old in self.functions.items():
            if name not in functions and namespace.get(name) is old:
                del namespace[name]
                self.worker.shell.user_ns_hidden.pop(name, None)
                removed.append(name)
        self.functions = functions
        self._bind_all()
        prefer_inline()
        return {"defined": list(functions), "removed": removed}

    def run_code(self, params: dict[str, Any]) -> dict[str, Any]:
        """Run one cell for Code Mode: ``{"code", "max_tool_calls"?, "max_result_bytes"?}`` → the cell's status,
        value, image displays and error, its ordered output, ``result_cut`` (what bounding the value dropped, with
        exact counts, or None) and the number of tool calls it made."""
        cell = self.begin_cell(params)
        try:
            outcome = self.worker.owner.run_cell(cell.code, cell.capture)
        finally:
            self.end_cell(cell)
        return self.cell_result(cell, outcome)

    def begin_cell(self, params: dict[str, Any]) -> RunCodeCell:
        """Everything run_code sets up before its cell runs: the checked params, the tool functions bound again,
        the call budget of the active request, and the cell's capture. A kernel's own cell (kernel/) begins here
        from its pre_run_cell hook and ends with ``end_cell`` and ``cell_result`` from post_run_cell."""
        code = params.get("code")
        if not isinstance(code, str):
            raise OpError("invalid_arguments", "run_code needs a string 'code'")
        limit = _count(params.get("max_tool_calls", self.max_tool_calls), "max_tool_calls")
        max_result_bytes = params.get("max_result_bytes")
        if max_result_bytes is not None:
            max_result_bytes = _count(max_result_bytes, "max_result_bytes")
        if self.worker.owner.operation is None:
            raise OpError("internal_error", "run_code ran outside an operation")
        self._bind_all(missing_only=True)
        prefer_inline()
        self._new_request(self.worker.active_request_id)
        budget_before = self.max_tool_calls
        self.max_tool_calls = limit
        limits = self.worker.limits
        # stdout, stderr and the text of displays, in the order they came.
        output = PrefixSink(limits.max_text_chars)
        images = ImageRoom.for_cell(limits)
        image_displays = DisplayCollector(limits, images)

        def display(data: dict[str, Any], metadata: dict[str, Any]) -> None:
            kept = {mime: value for mime, value in (data or {}).items()
                    if isinstance(mime, str) and mime.startswith("image/")}
            if kept:
                # Only the images of such a display reach the model; its other forms (a plotly figure's JSON,
                # say) would only take room in the reply.
                image_displays(kept, metadata)
                return
            text = display_text(data or {})
            if text:
                output.write(text if text.endswith("\n") else text + "\n")

        # The model reads a run_code value as data: one that JSON cannot hold exactly is shown as IPython's text.
        capture = CellCapture(output, output, display, ValueCodec(limits, images, exact=True), max_result_bytes)
        return RunCodeCell(code, capture, output, image_displays, budget_before)

    def end_cell(self, cell: RunCodeCell) -> None:
        """The cell ran (or failed to): the request's own call budget gives way to the standing one again."""
        self.max_tool_calls = cell.budget_before
        forget_inline()

    def cell_result(self, cell: RunCodeCell, outcome: Any) -> dict[str, Any]:
        """run_code's result from the cell's outcome (capture/cell.py's CellOutcome)."""
        value = outcome.value
        output = cell.output
        image_displays = cell.image_displays
        error = outcome.error_details(self.worker.limits)
        return {
            "status": outcome.status,
            "execution_count": outcome.execution_count,
            "truncated": {
                "result": value is not None and value.truncated,
                "displays": image_displays.truncated,
                "output": output.truncated,
            },
            "result": None if value is None else value.value,
            "displays": image_displays.displays,
            "displays_omitted": image_displays.omitted,
            "error": error,
            "output": output.text(),
            "output_omitted_chars": output.omitted,
            "result_cut": None if value is None else value.cut,
            "tool_calls_made": self._calls_made,
        }

    def _new_request(self, request_id: int | None) -> None:
        """A request's calls start from nothing: the budget and the previous call's wait are its own."""
        self._budget_request = request_id
        self._calls_made = 0
        self._waited_us = None

    # ---- the call path ----------------------------------------------------------------------------------

    def call(self, tool_name: str, arguments: dict[str, Any]) -> Any:
        """Send one nested call and wait for its result. Main thread, during a request, within the budget.

        Raises ToolCallError when the tool failed or the budget is spent; KeyboardInterrupt (the parent's
        interrupt) propagates out of the wait.
        """
        if threading.get_ident() != _MAIN_THREAD:
            raise RuntimeError(f"{tool_name}: tool functions can only be called from the main thread")
        request_id = self.worker.active_request_id
        if request_id is None:
            raise RuntimeError(f"{tool_name}: tool functions can only be called while code is running")
        if self._budget_request != request_id:
            self._new_request(request_id)
        if self._calls_made >= self.max_tool_calls:
            raise ToolCallError(
                f"tool call limit reached: one run may make at most {self.max_tool_calls} tool calls", tool_name)
        self._next_call_id += 1
        call_id = self._next_call_id
        message = {"type": "tool_call", "id": request_id, "call_id": call_id, "name": tool_name,
                   "arguments": arguments}
        if self._waited_us is not None:
            message["waited_us"] = self._waited_us
        transport = self.transport
        try:
            payload = transport.encode(message)
        except FrameTooLarge as error:
            raise ToolCallError(
                f"the arguments of {tool_name} are {error.size} bytes, over the {error.limit}-byte message limit",
                tool_name) from None
        self._calls_made += 1
        self._waited_us = None
        started = time.perf_counter_ns()
        answer = transport.round_trip(payload, call_id)
        self._waited_us = (time.perf_counter_ns() - started) // 1000
        if answer.get("ok") is True:
            return _tool_value(answer, tool_name)
        raise ToolCallError(str(answer.get("message", "the tool call failed")), tool_name)

    # ---- building functions -----------------------------------------------------------------------------

    def _make_function(self, spec: Any, index: int) -> Callable[..., Any]:
        if not isinstance(spec, dict):
            raise OpError("invalid_arguments", f"tools[{index}] must be an object")
        python_name = spec.get("python_name")
        tool_name = spec.get("tool_name")
        if not isinstance(python_name, str) or not python_name.isidentifier() or keyword.iskeyword(python_name):
            raise OpError("invalid_name", f"tools[{index}].python_name must be a Python identifier")
        if not isinstance(tool_name, str) or not tool_name:
            raise OpError("invalid_arguments", f"tools[{index}].tool_name must be a non-empty string")
        doc = spec.get("doc")
        parameters = spec.get("parameters")
        call = self.call
        if parameters is None:
            signature = inspect.Signature(
                [inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD, annotation=_TypeText("Any"))],
                return_annotation=_TypeText("Any"),
            )
            keys: dict[str, str] | None = None
            omit_none: frozenset[str] = frozenset()
        else:
            signature, keys, omit_none = _signature(parameters, index)
        # What signature.bind would check, precomputed: a call that passes only known names and every required one
        # binds to exactly those names in parameter order; any other call goes to bind for Python's own TypeError.
        known = frozenset(keys or ())
        required = tuple(name for name, parameter in signature.parameters.items()
                         if parameter.default is inspect.Parameter.empty and keys is not None)
        order = tuple((name, key, name in omit_none) for name, key in (keys or {}).items())

        def tool_function(*args: Any, **kwargs: Any) -> Any:
            if args:
                raise TypeError(f"{python_name}() takes keyword arguments only: {python_name}{signature}")
            if keys is None:
                arguments = {name: _to_wire(value, name) for name, value in kwargs.items()}
            else:
                if not (kwargs.keys() <= known and all(name in kwargs for name in required)):
                    signature.bind(**kwargs)  # raises the TypeError naming the missing or unexpected argument
                arguments = {}
                for name, key, omit in order:
                    if name not in kwargs:
                        continue
                    value = kwargs[name]
                    if value is None and omit:
                        continue
                    arguments[key] = _to_wire(value, name)
            try:
                return call(tool_name, arguments)
            except ToolCallError as error:
                # Raised again here so the traceback ends in the tool's own frame, not in the bridge.
                raise ToolCallError(str(error), tool_name) from None

        tool_function.__code__ = tool_function.__code__.replace(co_name=python_name)
        tool_function.__name__ = python_name
        tool_function.__qualname__ = python_name
        tool_function.__doc__ = doc if isinstance(doc, str) else None
        tool_function.__signature__ = signature  # type: ignore[attr-defined]
        tool_function.__module__ = "__main__"
        tool_function.tool_name = tool_name  # type: ignore[attr-defined]
        return tool_function

    def _bind(self, name: str, value: Any) -> None:
        shell = self.worker.shell
        shell.user_ns[name] = value
        shell.user_ns_hidden[name] = value

    def _bind_all(self, missing_only: bool = False) -> None:
        """Bind ToolCallError and every tool function; with ``missing_only``, only names the user deleted
        (``del``, ``%reset``), so a name the code rebound on purpose keeps its new value."""
        namespace = self.worker.shell.user_ns
        for name, value in (("ToolCallError", ToolCallError), *self.functions.items()):
            if not missing_only or name not in namespace:
                self._bind(name, value)


def _signature(parameters: Any, index: int) -> tuple[inspect.Signature, dict[str, str], frozenset[str]]:
    if not isinstance(parameters, list):
        raise OpError("invalid_arguments", f"tools[{index}].parameters must be a list or null")
    built: list[inspect.Parameter] = []
    keys: dict[str, str] = {}
    omit_none: set[str] = set()
    for position, parameter in enumerate(parameters):
        where = f"tools[{index}].parameters[{position}]"
        if not isinstance(parameter, dict):
            raise OpError("invalid_arguments", f"{where} must be an object")
        name = parameter.get("name")
        key = parameter.get("key")
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name in keys:
            raise OpError("invalid_name", f"{where}.name must be a unique Python identifier")
        if not isinstance(key, str):
            raise OpError("invalid_arguments", f"{where}.key must be a string")
        annotation = _TypeText(str(parameter.get("annotation") or "Any"))
        if parameter.get("required") is True:
            default: Any = inspect.Parameter.empty
        else:
            default = parameter.get("default")
            if parameter.get("omit_none") is True:
                omit_none.add(name)
        built.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        keys[name] = key
    # Required keyword-only parameters may follow optional ones; inspect accepts any order for them.
    return inspect.Signature(built, return_annotation=_TypeText("Any")), keys, frozenset(omit_none)


def display_text(data: dict[str, Any]) -> str | None:
    """The text a person would read from a non-image display: markdown, a real text/plain, JSON, HTML."""
    plain = data.get("text/plain")
    markdown = data.get("text/markdown")
    if isinstance(markdown, str):
        return markdown
    if isinstance(plain, str) and not _DEFAULT_REPR.match(plain):
        return plain
    if "application/json" in data:
        try:
            return json.dumps(data["application/json"], ensure_ascii=False)
        except (TypeError, ValueError):
            pass
    for mime in ("text/html", "text/latex"):
        text = data.get(mime)
        if isinstance(text, str):
            return text
    return plain if isinstance(plain, str) else None


def _to_wire(value: Any, path: str, depth: int = 0) -> Any:
    """A JSON-compatible copy of an argument that JavaScript receives exactly, or ToolArgumentError naming the
    part that has none."""
    if depth > _MAX_ARGUMENT_DEPTH:
        raise ToolArgumentError(f"argument {path} is nested too deeply (or contains itself)")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        if encode_text(value) is not None:
            raise ToolArgumentError(f"argument {path} holds lone surrogates (undecodable text), which a tool cannot "
                                    "receive; decode the bytes properly or pass them escaped")
        return str(value)
    if isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise ToolArgumentError(f"argument {path} is an integer beyond ±(2**53 - 1), which a JavaScript tool "
                                    "cannot receive exactly; pass it as a string")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ToolArgumentError(f"argument {path} is {value!r}, which has no JSON form")
        return float(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ToolArgumentError(f"argument {path} has a key of type {type(key).__name__}; keys must be strings")
            key_path = f"{path}[{key!r}]"
            out[_to_wire(key, key_path, depth + 1)] = _to_wire(item, key_path, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_to_wire(item, f"{path}[{position}]", depth + 1) for position, item in enumerate(value)]
    converter = getattr(type(value), "tolist", None)  # numpy arrays and scalars, pandas Series
    if callable(converter):
        return _to_wire(converter(value), path, depth + 1)
    raise ToolArgumentError(f"argument {path} of type {type(value).__qualname__} has no JSON form")


def _tool_value(answer: dict[str, Any], tool_name: str) -> Any:
    """The value of a successful tool result: ``value_json`` is JSON text as the parent wrote it, with NaN and
    ±Infinity as bare tokens and BigInts as exact digits (docs/protocol.md, "Value contract")."""
    text = answer.get("value_json")
    if not isinstance(text, str):
        raise ToolCallError("the parent sent a tool result without value_json", tool_name)
    try:
        value, end = _SCAN_JSON(text, 0)
    except (StopIteration, ValueError):
        end = -1  # json.loads below gives the error its own words
    if end == len(text):
        return value
    try:
        return json.loads(text)  # whitespace around the value, or anything the scanner did not take whole
    except ValueError as error:
        raise ToolCallError(f"the parent sent a tool result that is not JSON ({error})", tool_name) from None


def _count(value: Any, field: str) -> int:
    if type(value) is not int or value < 0:
        raise OpError("invalid_arguments", f"{field} must be a non-negative integer")
    return value
