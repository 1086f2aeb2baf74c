"""The shell owner: builds the history-disabled IPython shell and runs cells with bounded capture."""

from __future__ import annotations

import base64
import builtins
import functools
import importlib.util
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from ..capture.image_fit import fit_image, pillow_missing_note
from ..capture.matplotlib_backend import forget_inline, prefer_inline
from ..capture.spill import SpillDirectory, SpillFile
from ..capture.streams import FdCapture, HeadTailSink, StreamRouter, TextSink, Throttle
from ..capture.terminal_text import install_terminal_text
from ..ipc.channel import Interrupter
from ..protocol.constants import IMAGE_MIME_TYPES, MAX_IMAGE_BASE64_CHARS, MAX_INT32
from ..protocol.limits import Limits, bound_text
from ..protocol.params import require_str
from ..values.failure import exception_details
from ..values.jsonvalue import (
    JsonCut,
    JsonForm,
    NotJson,
    child_path,
    encode_text,
    is_plain_scalar,
    json_form,
    safe_repr,
)
from . import bookkeeping
from .packages import install_package_magics


class _QuietDisplayHook(DisplayHook):
    """Records the cell's value (``_``, ``Out``, ExecutionResult.result) without printing ``Out[n]``."""

    # IPython's DisplayHook is unannotated: its methods are untyped calls to the checker.
    def __call__(self, result: Any = None) -> None:
        self.check_for_underscore()  # type: ignore[no-untyped-call]
        if result is not None and not self.quiet():
            self.update_user_ns(result)  # type: ignore[no-untyped-call]
            self.fill_exec_result(result)  # type: ignore[no-untyped-call]

    def cull_cache(self) -> None:
        """IPython's cull of a full output cache (the oldest entries of ``Out`` and their ``_N`` names go), said in one
        line of the cell's stderr instead of IPython's UserWarning, whose text and source line point into site-packages
        and which a warnings filter set to "error" would turn into a failure of a cell that did nothing wrong."""
        out = self.shell.user_ns.get("_oh", {})  # type: ignore[union-attr]  # the shell is set by then
        before = len(out)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            super().cull_cache()  # type: ignore[no-untyped-call]
        sys.stderr.write(
            f"[IPython's output cache was full ({before} entries): the oldest {before - len(out)} were dropped from Out, "
            "with their _N names]\n"
        )

    def quiet(self) -> bool:
        """IPython's rule (a cell ending in ``;`` shows no value), without tokenizing cells that hold no ``;``.

        IPython tokenizes the whole cell again on every value to find a trailing ``;`` token; a cell without the
        character cannot end in one, so only cells that contain it are handed to IPython's own check.
        """
        try:
            cell = self.shell.history_manager.input_hist_parsed[-1]  # type: ignore[union-attr]  # set by then
        except IndexError:
            return False
        if isinstance(cell, str) and ";" not in cell:
            return False
        return bool(super().quiet())  # type: ignore[no-untyped-call]


class _CollectingPublisher(DisplayPublisher):
    """Collects display() payloads into the active operation, capped as they arrive."""

    def __init__(self, owner: ShellOwner, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]  # IPython's DisplayPublisher is unannotated
        self._owner = owner

    def publish(
        self,
        data: dict[str, Any],
        metadata: dict[str, Any] | None = None,
        source: str | None = None,
        *,
        transient: dict[str, Any] | None = None,
        update: bool = False,
        **kwargs: Any,
    ) -> None:
        operation = self._owner.operation
        if operation is not None:
            operation.add_display(data, metadata or {})

    def clear_output(self, wait: bool = False) -> None:
        return None


class Operation:
    """Per-request capture state: the sinks, displays and the streaming callback."""

    def __init__(
        self,
        limits: Limits,
        stream: Callable[[str, str], None] | None,
        open_spill: Callable[[str], SpillFile | None] | None = None,
    ) -> None:
        self.limits = limits
        self.throttles: dict[str, Throttle] = {}
        self.stdout: TextSink
        self.stderr: TextSink
        spill_out = None if open_spill is None else functools.partial(open_spill, "stdout")
        spill_err = None if open_spill is None else functools.partial(open_spill, "stderr")
        if stream is None:
            self.stdout = HeadTailSink(limits.max_text_chars, None, spill_out)
            self.stderr = HeadTailSink(limits.max_text_chars, None, spill_err)
        else:
            out = self.throttles["stdout"] = Throttle(functools.partial(stream, "stdout"))
            err = self.throttles["stderr"] = Throttle(functools.partial(stream, "stderr"))
            self.stdout = HeadTailSink(limits.max_text_chars, out.add, spill_out)
            self.stderr = HeadTailSink(limits.max_text_chars, err.add, spill_err)
        # An attribute, not only a method: Code Mode's run_code wraps it for one cell (bridge.py).
        self.add_display: Callable[[dict[str, Any], dict[str, Any]], None] = self._add_display
        self.displays: list[dict[str, Any]] = []
        self.displays_omitted = 0
        self.traceback_text = ""
        # Set once the fd pipes were drained (and fd 1/2 repaired) after the user code ran, so end() need not.
        self.settled = False
        # Set when the cell ended in MemoryError (the memory guard's backstop reports it as memory_limit).
        self.memory_error = False
        self.image_room = image_budget(limits)
        # Code Mode: a value whose JSON form needs encoded places (big ints, NaN...) is returned as its repr.
        self.exact_values = False
        # Set by Code Mode's run_code: the result's JSON size budget, and what rendering the result cut.
        self.result_max_bytes: int | None = None
        self.result_cut: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def flush_streams(self) -> None:
        for throttle in self.throttles.values():
            throttle.flush()

    def _add_display(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        with self._lock:
            if len(self.displays) >= self.limits.max_display_items:
                self.displays_omitted += 1
                return
            display, used = normalize_display(data, metadata, self.limits, self.image_room)
            self.image_room -= used
            self.displays.append(display)


def image_budget(limits: Limits) -> int:
    """Base64 characters of images one operation may return in total: half the IPC message bound, so the
    images of one cell can never push its result over ``max_ipc_message_bytes``."""
    return limits.max_ipc_message_bytes // 2


def normalize_display(
    data: Any, metadata: Any, limits: Limits, image_room: int = MAX_IMAGE_BASE64_CHARS
) -> tuple[dict[str, Any], int]:
    """Bound one display payload; returns it with the base64 characters its images use.

    Binary images (``image/png``, ``image/jpeg``...) are kept as base64 text when one is at most
    MAX_IMAGE_BASE64_CHARS and fits ``image_room``; everything else (SVG included) goes through the JSON depth,
    item and character limits. Anything dropped or cut sets ``truncated``.
    """
    out: dict[str, Any] = {}
    notes: dict[str, str] = {}  # what happened to an image, for the display's metadata (image_fit.py)
    truncated = False
    used = 0
    encoded = JsonForm(None)
    items = list(data.items()) if type(data) is dict else []
    if type(data) is not dict and data is not None:
        truncated = True
    if len(items) > limits.max_results:
        items, truncated = items[: limits.max_results], True
    for mime, value in items:
        if type(mime) is not str:
            truncated = True
            continue
        if mime.startswith("image/") and not mime.startswith("image/svg"):
            if isinstance(value, (bytes, bytearray)):
                value = base64.b64encode(value).decode("ascii")
            room = min(MAX_IMAGE_BASE64_CHARS, image_room - used)
            fitted = fit_image(mime, value, room) if isinstance(value, str) and room > 0 else None
            if fitted is not None:
                kind, value, note = fitted
                out[kind] = value
                used += len(value)
                if note is not None:
                    notes["ipython-mcp/resized"] = note
            else:
                truncated = True
                if isinstance(value, str) and importlib.util.find_spec("PIL") is None:
                    notes["ipython-mcp/dropped"] = pillow_missing_note(mime, len(value), room)
            continue
        try:
            form = json_form(value, limits, child_path("$", mime))
        except NotJson:
            form = JsonForm(*safe_repr(value, limits.max_text_chars))
        out[mime] = form.value
        truncated = truncated or form.truncated
        encoded.encoded.update(form.encoded)
        encoded.encoded_omitted += form.encoded_omitted
    try:
        meta_form = json_form(metadata if metadata is not None else {}, limits, "metadata")
        meta, cut = meta_form.value, meta_form.truncated
    except NotJson:
        meta, cut = {}, True
    if type(meta) is not dict:
        meta, cut = {}, True
    else:
        encoded.encoded.update(meta_form.encoded)
        encoded.encoded_omitted += meta_form.encoded_omitted
    if notes:
        meta = {**meta, **notes}
    return encoded.annotate({"data": out, "metadata": meta, "truncated": truncated or cut}), used


def build_shell() -> InteractiveShell:
    config = Config()
    config.HistoryManager.enabled = False
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "nocolor" if _ipython_major() >= 9 else "NoColor"
    config.InteractiveShell.autocall = 0
    config.InteractiveShell.automagic = True
    config.InteractiveShell.xmode = "Context"
    shell = InteractiveShell.instance(config=config)
    return shell


def _ipython_major() -> int:
    import IPython

    try:
        return int(IPython.__version__.split(".")[0])
    except ValueError:
        return 8


class ShellOwner:
    """Owns the shell on the main thread. Every namespace operation runs through ``run``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.operation: Operation | None = None
        # Where execute spills the whole text of a truncated stream (spill.py); None when spilling is off.
        self.spills: SpillDirectory | None = None
        self.shell = build_shell()
        # IPython's DisplayHook constructor is unannotated.
        self.shell.displayhook = _QuietDisplayHook(  # type: ignore[no-untyped-call]
            shell=self.shell, cache_size=self.shell.cache_size
        )
        self.shell.display_trap.hook = self.shell.displayhook
        self.shell.display_pub = _CollectingPublisher(self, shell=self.shell)
        self.shell._showtraceback = self._record_traceback  # type: ignore[method-assign]
        self._stdout_router = StreamRouter("stdout", lambda: self._sink(1))
        self._stderr_router = StreamRouter("stderr", lambda: self._sink(2))
        sys.stdout = self._stdout_router
        sys.stderr = self._stderr_router
        builtins.input = _empty_input
        self.shell.user_ns["input"] = _empty_input
        self.shell.user_ns_hidden["input"] = _empty_input
        self.fd_capture = FdCapture(self._sink)
        # IPython 9's history records of outputs and tracebacks, kept forever even with history disabled.
        bookkeeping.turn_off(self.shell)
        bookkeeping.render_without(self.shell, Interrupter.hide_handler_frames)
        prefer_inline()
        install_package_magics(self.shell)
        install_terminal_text(self.shell)

    def _sink(self, target: int) -> TextSink | None:
        operation = self.operation
        if operation is None:
            return None
        return operation.stdout if target == 1 else operation.stderr

    def _record_traceback(self, etype: type[BaseException] | None, evalue: BaseException | None, stb: list[str]) -> None:
        operation = self.operation
        if operation is not None:
            operation.traceback_text = self.shell.InteractiveTB.stb2text(stb)

    def begin(self, stream: Callable[[str, str], None] | None, *, spill: bool = False) -> Operation:
        """A new operation; ``spill``: its truncated streams go to spill files (execute's, whose result names them)."""
        spills = self.spills if spill else None
        open_spill = None
        if spills is not None:
            # The cell's number is known now (IPython gives it this execution_count): it names the file.
            cell = self.shell.execution_count

            def open_spill(stream_name: str) -> SpillFile | None:
                return spills.open(f"cell{cell}-{stream_name}")

        self.operation = Operation(self.limits, stream, open_spill)
        return self.operation

    def end(self) -> None:
        operation = self.operation
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        if operation is None or not operation.settled:
            # Operations other than execute may run user code too: drain what it wrote to fd 1/2 now, so it cannot
            # surface in the next operation's output.
            self.fd_capture.settle()
        if sys.stdout is not self._stdout_router:
            sys.stdout = self._stdout_router
        if sys.stderr is not self._stderr_router:
            sys.stderr = self._stderr_router
        if operation is not None:
            operation.flush_streams()
            operation.stdout.finish()
            operation.stderr.finish()
            # add_display is a bound method of the operation (or Code Mode's wrapper of one): a reference cycle
            # that only the cyclic collector frees. Cut once the operation has ended, the operation is freed at
            # once, and the collector runs about a quarter as often per execute. Nothing displays into an ended
            # operation: the publisher writes to the active one.
            operation.add_display = _ended_display
        self.operation = None

    def execute(self, params: dict[str, Any], operation: Operation) -> dict[str, Any]:
        code = require_str(params, "code")
        result = self.shell.run_cell(code, store_history=True)  # type: ignore[no-untyped-call]  # IPython: unannotated
        self.shell.exit_now = False
        operation.memory_error = isinstance(result.error_in_exec, MemoryError)
        self.fd_capture.settle()
        operation.settled = True
        forget_inline()
        return self._execute_result(result, operation)

    def _execute_result(self, result: Any, operation: Operation) -> dict[str, Any]:
        limits = self.limits
        error = result.error_before_exec or result.error_in_exec
        value = None
        result_truncated = False
        if error is None and result.result is not None:
            value, result_truncated = self._render_value(result.result)
        return {
            "status": "error" if error is not None else "ok",
            "execution_count": self.shell.execution_count - 1 if result.execution_count is None
            else result.execution_count,
            "stdout": operation.stdout.text(),
            "stderr": operation.stderr.text(),
            "stdout_omitted_chars": operation.stdout.omitted,
            "stderr_omitted_chars": operation.stderr.omitted,
            **_cut_fields("stdout", operation.stdout),
            **_cut_fields("stderr", operation.stderr),
            "truncated": {
                "stdout": operation.stdout.truncated,
                "stderr": operation.stderr.truncated,
                "result": result_truncated,
                "displays": operation.displays_omitted > 0
                or (bool(operation.displays) and any(d["truncated"] for d in operation.displays)),
            },
            "result": value,
            "displays": operation.displays,
            "displays_omitted": operation.displays_omitted,
            "error": None if error is None else describe_error(error, operation.traceback_text, limits,
                                                              before_exec=result.error_before_exec is not None),
        }

    def _render_value(self, value: Any) -> tuple[dict[str, Any], bool]:
        operation = self.operation
        max_bytes = operation.result_max_bytes if operation is not None else None
        if max_bytes is None and is_plain_scalar(value, self.limits):
            # What json_form would answer, without its walk: nothing encoded, nothing cut.
            return {"kind": "json", "value": value}, False
        try:
            form = json_form(value, self.limits, max_bytes=max_bytes)
            exact_only = operation is not None and operation.exact_values
            if not (exact_only and (form.encoded or form.encoded_omitted)):
                if operation is not None and max_bytes is not None and form.cut is not None:
                    operation.result_cut = _cut_report(form.cut) if form.cut.any else None
                    return form.annotate({"kind": "json", "value": form.value}), form.cut.any
                return form.annotate({"kind": "json", "value": form.value}), form.truncated
        except NotJson:
            pass
        formatter = self.shell.display_formatter
        try:
            # IPython's DisplayFormatter.format is unannotated.
            data = {} if formatter is None else formatter.format(  # type: ignore[no-untyped-call]
                value, include=("text/plain", *IMAGE_MIME_TYPES)
            )[0]
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - a broken _repr_ (even one raising SystemExit) must not fail the cell
            data = {}
        text = data.get("text/plain")
        if not isinstance(text, str):
            text, truncated = safe_repr(value, self.limits.max_text_chars)
            omitted = None  # bounded_repr never builds the whole repr of a huge value, so the rest is unknown
        else:
            omitted = max(0, len(text) - self.limits.max_text_chars)
            text, truncated = bound_text(text, self.limits.max_text_chars)
        if operation is not None and truncated:
            operation.result_cut = {"repr_chars": omitted}
        rendered: dict[str, Any] = {"kind": "repr", "repr": text}
        images = {mime: data[mime] for mime in IMAGE_MIME_TYPES if isinstance(data.get(mime), (str, bytes))}
        if images:
            room = operation.image_room if operation is not None else image_budget(self.limits)
            bundle, used = normalize_display(images, {}, self.limits, room)
            if operation is not None:
                operation.image_room -= used
            if bundle["data"]:
                rendered["images"] = bundle["data"]
            truncated = truncated or bundle["truncated"]
        return rendered, truncated


def _cut_fields(name: str, sink: TextSink) -> dict[str, Any]:
    """Where a truncated stream was cut, and its spill file (closed first, so it is whole); nothing otherwise."""
    at = sink.omitted_at
    if at is None:
        return {}
    sink.finish()
    # Text with lone surrogates reaches the parent escaped (repair.py, each one as ``\udcXX``): the position is
    # counted in the escaped head then, so it still falls between head and tail.
    head = sink.text()[:at]
    escaped = encode_text(head)
    fields: dict[str, Any] = {f"{name}_omitted_at": at if escaped is None else len(escaped)}
    spill = sink.spill
    if spill is not None:
        fields[f"{name}_spill"] = spill.path
        if spill.omitted:
            fields[f"{name}_spill_omitted_chars"] = spill.omitted
    return fields


def _cut_report(cut: JsonCut) -> dict[str, Any]:
    return {"items": cut.items, "chars": cut.chars, "deep": cut.deep, "size": cut.size}


def describe_error(error: BaseException, traceback_text: str, limits: Limits, *, before_exec: bool) -> dict[str, Any]:
    if isinstance(error, SyntaxError):
        kind = "syntax"
    elif isinstance(error, KeyboardInterrupt):
        kind = "interrupted"
    else:
        kind = "exception"
    # IPython already rendered the traceback (in the configured xmode): cleaned, folded, then bounded.
    described = {"kind": kind, **exception_details(error, limits, traceback_text=traceback_text)}
    if isinstance(error, SyntaxError):
        filename, filename_truncated = bound_text(str(error.filename or ""), limits.max_repr_chars)
        described.update(filename=filename, filename_truncated=filename_truncated, lineno=_line_number(error.lineno))
    return described


def _line_number(value: Any) -> int:
    """SyntaxError.lineno as a small int: user code can set it to anything."""
    return value if type(value) is int and 0 <= value <= MAX_INT32 else 0


def _ended_display(data: dict[str, Any], metadata: dict[str, Any]) -> None:
    """An ended operation's add_display: what it displays now belongs to no result."""


def _empty_input(prompt: object = "") -> str:
    """Nobody can type into the worker: input() shows its prompt and reads an empty line."""
    if prompt:
        sys.stdout.write(str(prompt))
    return ""
