"""The shell owner: builds the history-disabled IPython shell and runs cells into the capture their caller gives.

Every request is an ``Operation`` (``begin`` .. ``end``): its stdout and stderr sinks receive whatever user code
writes while it runs, streamed and spilled as the request asked, and displays go nowhere. A cell runs through
``run_cell`` with a ``CellCapture`` (capture/cell.py) built by its caller (shell/execute.py, Code Mode's run_code):
from then on that capture's sinks and display policy are the active ones, and the cell comes back as a
``CellOutcome``, which the caller shapes into its own result. Nothing here knows which caller asked.
"""

from __future__ import annotations

import builtins
import functools
import sys
from collections.abc import Callable
from typing import Any

from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from ..capture.cell import CellCapture, CellOutcome
from ..capture.displays import DisplayPolicy
from ..capture.matplotlib_backend import forget_inline, prefer_inline
from ..capture.spill import SpillDirectory, SpillFile
from ..capture.streams import FdCapture, HeadTailSink, StreamRouter, TextSink, Throttle, Writer
from ..capture.terminal_text import install_terminal_text
from ..ipc.channel import Interrupter
from ..protocol.errors import OpError
from ..protocol.limits import Limits
from . import bookkeeping
from .display_hooks import QuietDisplayHook, RoutingPublisher
from .packages import install_package_magics


class Operation:
    """One request's capture state: its stdout and stderr sinks (with the streaming callback and spill files it
    asked for), the cell capture while a cell runs, and what the worker reads once it ended."""

    def __init__(
        self,
        limits: Limits,
        stream: Callable[[str, str], None] | None,
        open_spill: Callable[[str], SpillFile | None] | None = None,
    ) -> None:
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
        # The capture of the cell this operation ran (run_cell): its sinks and display policy are the active ones
        # until the operation ends. None while no cell ran: output goes to the sinks above, displays nowhere.
        self.capture: CellCapture | None = None
        self.traceback_text = ""
        # Set once the fd pipes were drained (and fd 1/2 repaired) after the user code ran, so end() need not.
        self.settled = False
        # Set when the cell ended in MemoryError (the memory guard's backstop reports it as memory_limit).
        self.memory_error = False

    def flush_streams(self) -> None:
        for throttle in self.throttles.values():
            throttle.flush()


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
    """Owns the shell on the main thread: each request runs between ``begin`` and ``end``, a cell through
    ``run_cell``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.operation: Operation | None = None
        # Where execute spills the whole text of a truncated stream (spill.py); None when spilling is off.
        self.spills: SpillDirectory | None = None
        self.shell = build_shell()
        # IPython's DisplayHook constructor is unannotated.
        self.shell.displayhook = QuietDisplayHook(  # type: ignore[no-untyped-call]
            shell=self.shell, cache_size=self.shell.cache_size
        )
        self.shell.display_trap.hook = self.shell.displayhook
        self.shell.display_pub = RoutingPublisher(self._display_policy, shell=self.shell)
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

    def _sink(self, target: int) -> Writer | None:
        operation = self.operation
        if operation is None:
            return None
        capture = operation.capture
        if capture is None:
            return operation.stdout if target == 1 else operation.stderr
        return capture.stdout if target == 1 else capture.stderr

    def _display_policy(self) -> DisplayPolicy | None:
        operation = self.operation
        capture = None if operation is None else operation.capture
        return None if capture is None else capture.display

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
        self.close_operation()

    def close_operation(self) -> None:
        """Flush what the ended operation's streams still hold, close its sinks, and forget it."""
        operation = self.operation
        if operation is not None:
            operation.flush_streams()
            operation.stdout.finish()
            operation.stderr.finish()
        self.operation = None

    def run_cell(self, code: str, capture: CellCapture) -> CellOutcome:
        """Run one cell of the active operation into ``capture``, which stays active until the operation ends."""
        self.enter_cell(capture)
        result = self.shell.run_cell(code, store_history=True)  # type: ignore[no-untyped-call]  # IPython: unannotated
        return self.cell_outcome(result, capture)

    def enter_cell(self, capture: CellCapture) -> None:
        """Make ``capture`` the active one for the cell about to run (``run_cell``, or a kernel's own cell)."""
        operation = self.operation
        if operation is None:
            raise OpError("internal_error", "a cell ran outside an operation")
        operation.capture = capture

    def cell_outcome(self, result: Any, capture: CellCapture) -> CellOutcome:
        """What the cell that just ran into ``capture`` came to, from IPython's ExecutionResult."""
        operation = self.operation
        if operation is None:
            raise OpError("internal_error", "a cell ended outside an operation")
        self.shell.exit_now = False
        operation.memory_error = isinstance(result.error_in_exec, MemoryError)
        self.fd_capture.settle()
        operation.settled = True
        forget_inline()
        error = result.error_before_exec or result.error_in_exec
        value = None
        if error is None and result.result is not None:
            value = capture.values.encode(result.result, self.shell.display_formatter, capture.result_max_bytes)
        return CellOutcome(
            execution_count=self.shell.execution_count - 1 if result.execution_count is None
            else result.execution_count,
            error=error,
            traceback_text=operation.traceback_text,
            value=value,
        )


def _empty_input(prompt: object = "") -> str:
    """Nobody can type into the worker: input() shows its prompt and reads an empty line."""
    if prompt:
        sys.stdout.write(str(prompt))
    return ""
