"""The shell owner of a Jupyter kernel's own shell: the worker's capture, worn only while an agent's request runs.

A local worker builds its shell and routes its streams and displays for good (shell/owner.py). A kernel's shell
belongs to the kernel and to the people using it: between the agent's requests it is left exactly as ipykernel
made it. While a request runs, its stdout, stderr, displays and tracebacks go to the request's capture AND on to
the kernel's own streams and publisher, so every client of the kernel (a JupyterLab console, ``jupyter console
--existing``) sees the agent's output as it sees its own.

Only the thread that began the request (and the threads it starts) is captured: ipykernel 7 runs a subshell's cells on threads of their own at
the same time, and what they print, display or raise is theirs (it goes on to the kernel's streams untouched).

While a request runs, ``exit()`` and ``quit()`` raise SystemExit instead of asking the kernel to stop (ipykernel's
``ask_exit`` would end the kernel's event loop: the person's kernel, and every name in it): the agent's call fails
as any ``sys.exit()`` does and the kernel goes on.

fd-level output (C code, subprocesses) is captured while the request runs (fd_output.py). What a kernel has no
room for is left out: the history and cache changes, the package magics and the terminal text
hooks a local worker installs.
"""

from __future__ import annotations

import io
import sys
import threading
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from ..capture.displays import DisplayPolicy
from ..capture.sinks import Writer, fd_writer, release_held
from ..capture.streams import StreamRouter
from ..protocol.limits import Limits
from ..shell.owner import Operation, ShellOwner
from .fd_output import kernel_fd_capture


class _Forward:
    """What of one stream of the agent's request goes on to the kernel's clients: the first ``head`` characters as
    they are written, then only the last ``tail`` characters are held, and sent with the count of what lay between
    when the request ends. A flood reaches JupyterLab (and the kernel's memory) bounded, as the result is; the whole
    output is in the agent's spill file."""

    def __init__(self, original: Any, head: int, tail: int) -> None:
        self.original = original
        self._head = head
        self._tail = tail
        self._sent = 0
        # The request's thread and the fd drain thread both write here.
        self._lock = threading.Lock()
        self._held: list[str] = []
        self._held_size = 0
        self._omitted = 0

    def write(self, text: str) -> None:
        with self._lock:
            self._write(text)

    def _write(self, text: str) -> None:
        room = self._head - self._sent
        if room > 0:
            part = text[:room]
            self._sent += len(part)
            self.original.write(part)
            text = text[room:]
            if not text:
                return
        self._held.append(text)
        self._held_size += len(text)
        if self._held_size > 2 * self._tail:
            self._trim()

    def _trim(self) -> None:
        joined = "".join(self._held)
        cut = max(0, len(joined) - self._tail)
        self._omitted += cut
        self._held = [joined[cut:]] if cut < len(joined) else []
        self._held_size = len(joined) - cut

    def finish(self) -> None:
        """Send the held tail (after a line naming what was left out), once the request ends."""
        with self._lock:
            self._finish()

    def _finish(self) -> None:
        self._trim()
        held = "".join(self._held)
        self._held, self._held_size = [], 0
        if self._omitted:
            self.original.write(f"\n[ipython-mcp: {self._omitted} characters omitted here; the agent's result keeps "
                                f"head and tail, and the whole output is in its spill file]\n")
            self._omitted = 0
        if held:
            self.original.write(held)


class _Both:
    """fd-level output of the request: into its sink and, bounded, on to the kernel's clients."""

    def __init__(self, sink: Writer, forward: _Forward) -> None:
        self._sink = sink
        self._forward = forward

    def write(self, text: str) -> None:
        fd_writer(self._sink).write(text)
        self._forward.write(text)

    def release(self) -> None:
        release_held(self._sink)


class _Tee(io.TextIOBase):
    """Writes go to the request's router and, bounded (``_Forward``), on to the kernel's own stream; everything else
    is the kernel's."""

    def __init__(self, router: StreamRouter, forward: _Forward, thread: int) -> None:
        super().__init__()
        self._router = router
        self._forward = forward
        self._original = forward.original
        self._thread = thread

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._original, "encoding", "utf-8"))

    @property
    def name(self) -> str:
        return str(getattr(self._original, "name", "<stdout>"))

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        # The router keeps a write only from the request's thread or a thread it started (streams.py); another
        # thread's write (a subshell's cell) is the kernel's alone, and goes on unbounded.
        self._router.write(text)
        if threading.get_ident() == self._thread:
            self._forward.write(text)
        else:
            self._original.write(text)
        return len(text)

    def flush(self) -> None:
        self._original.flush()

    def close(self) -> None:
        """Closes nothing: the kernel's stream is the kernel's, and an agent's ``sys.stdout.close()`` leaves it open.

        io's finalizer calls ``close``, and io's own ``close`` flushes. A _Tee can end up in a reference cycle (IPython
        9's ``run_cell`` patches ``sys.stdout.write`` with a closure over the stream, and a subshell's cell that starts
        while the agent's request runs patches this one), so the cycle collector finalizes it later, on whatever
        thread it runs, inside whatever lock that thread holds. A flush from there waited on ipykernel's IOPub thread
        while holding the buffer lock that thread needed: the agent's cell and the person's hung for the kernel's
        flush timeout, again and again, past the call's deadline.
        """

    def fileno(self) -> int:
        return int(self._original.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class _TeePublisher:
    """The kernel's display publisher, with each payload also handed to the running request's display policy."""

    def __init__(self, original: Any, policy: Any, thread: int) -> None:
        self._original = original
        self._policy = policy
        self._thread = thread

    def publish(self, data: dict[str, Any], metadata: dict[str, Any] | None = None, *args: Any, **kwargs: Any) -> None:
        policy: DisplayPolicy | None = self._policy() if threading.get_ident() == self._thread else None
        if policy is not None:
            policy(data, metadata or {})
        self._original.publish(data, metadata, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class KernelShellOwner(ShellOwner):
    """Serves requests on a kernel's existing shell, capturing into each request while it runs."""

    def __init__(self, shell: InteractiveShell, limits: Limits) -> None:  # noqa: D107 - no super().__init__: no shell of its own
        self.limits = limits
        self.operation: Operation | None = None
        self.spills = None
        self.shell = shell
        self._stdout_router = StreamRouter("stdout", lambda: self._sink(1))
        self._stderr_router = StreamRouter("stderr", lambda: self._sink(2))
        self.fd_capture = kernel_fd_capture()  # type: ignore[assignment]
        # What the kernel had before the running request took over; None between requests.
        self._saved: tuple[Any, Any, Any, Any, Any] | None = None
        self._forwards: tuple[_Forward, _Forward] | None = None
        # Cells the running agent cell runs itself (run_cell inside it), on its thread: their values are theirs.
        self.nested = 0
        # The agent cell's own value, as its displayhook call gave it (a 1-tuple), or None while it gave none.
        self.cell_value: tuple[Any] | None = None

    def _fd_sink(self, target: int) -> Writer | None:
        """Where fd-level output of the running request goes: its sink, and (bounded) the kernel's clients."""
        sink = self._sink(target)
        forwards = self._forwards
        if sink is None or forwards is None:
            return sink
        return _Both(sink, forwards[target - 1])

    def begin(self, stream: Any, *, spill: bool = False) -> Operation:
        operation = super().begin(stream, spill=spill)
        self.nested = 0
        self.cell_value = None
        if self._saved is None:
            # The kernel's shell (ipykernel's ZMQInteractiveShell: ask_exit, its display hook) is typed as IPython's.
            shell: Any = self.shell
            thread = threading.get_ident()
            # ask_exit is a method of the shell's class: saved is the instance's own override, if it had one.
            self._saved = (sys.stdout, sys.stderr, shell.display_pub, shell._showtraceback, shell.__dict__.get("ask_exit"))
            head = self.limits.max_text_chars // 4
            tail = self.limits.max_text_chars - head
            self._forwards = (_Forward(self._saved[0], head, tail), _Forward(self._saved[1], head, tail))
            sys.stdout = _Tee(self._stdout_router, self._forwards[0], thread)
            sys.stderr = _Tee(self._stderr_router, self._forwards[1], thread)
            shell.display_pub = _TeePublisher(self._saved[2], self._display_policy, thread)
            kernel_traceback = self._saved[3]
            kernel_exit = shell.ask_exit

            def show_traceback(etype: Any, evalue: Any, stb: list[str]) -> None:
                if threading.get_ident() == thread:
                    self._record_traceback(etype, evalue, stb)
                kernel_traceback(etype, evalue, stb)

            def ask_exit() -> None:
                if threading.get_ident() != thread:
                    kernel_exit()
                    return
                raise SystemExit("exit() and quit() do not end a kernel the agent shares; the kernel goes on")

            displayhook = shell.displayhook
            kernel_fill = displayhook.fill_exec_result

            def fill_exec_result(value: Any) -> None:
                # IPython keeps one "running cell's result" per shell; a subshell's cell running at the same time (on
                # its own thread) replaces it. The agent cell's value is kept here, and given to its own result.
                if threading.get_ident() == thread and self.nested == 0:
                    self.cell_value = (value,)
                    return
                kernel_fill(value)

            shell._showtraceback = show_traceback
            shell.ask_exit = ask_exit
            displayhook.fill_exec_result = fill_exec_result
            self.fd_capture.enter(self._fd_sink)  # type: ignore[attr-defined]
        return operation

    def end(self) -> None:
        saved = self._saved
        try:
            self.fd_capture.settle()
            forwards, self._forwards = self._forwards, None
            for forward in forwards or ():
                try:
                    forward.finish()
                except Exception:  # noqa: BLE001 - the kernel's stream may be closed; the result is what matters
                    pass
            if saved is not None:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except Exception:  # noqa: BLE001
                        pass
        finally:
            if saved is not None:
                self._saved = None
                shell: Any = self.shell
                sys.stdout, sys.stderr = saved[0], saved[1]
                shell.display_pub = saved[2]
                shell._showtraceback = saved[3]
                shell.displayhook.__dict__.pop("fill_exec_result", None)
                if saved[4] is None:
                    shell.__dict__.pop("ask_exit", None)
                else:
                    shell.ask_exit = saved[4]
            self.close_operation()
