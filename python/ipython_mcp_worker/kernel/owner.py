"""The shell owner of a Jupyter kernel's own shell: the worker's capture, worn only while an agent's request runs.

A local worker builds its shell and routes its streams and displays for good (shell/owner.py). A kernel's shell
belongs to the kernel and to the people using it: between the agent's requests it is left exactly as ipykernel
made it. While a request runs, its stdout, stderr, displays and tracebacks go to the request's capture AND on to
the kernel's own streams and publisher, so every client of the kernel (a JupyterLab console, ``jupyter console
--existing``) sees the agent's output as it sees its own.

What a kernel has no room for is left out: fd-level capture (the kernel owns fd 1 and 2), the history and cache
changes, the package magics and the terminal text hooks a local worker installs.
"""

from __future__ import annotations

import io
import sys
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from ..capture.displays import DisplayPolicy
from ..capture.streams import StreamRouter
from ..protocol.limits import Limits
from ..shell.owner import Operation, ShellOwner


class _NoFdCapture:
    """fd 1 and 2 belong to the kernel: there is nothing to drain."""

    def settle(self) -> None:
        return None


class _Tee(io.TextIOBase):
    """Writes go to the request's router and on to the kernel's own stream; everything else is the kernel's."""

    def __init__(self, router: StreamRouter, original: Any) -> None:
        super().__init__()
        self._router = router
        self._original = original

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
        self._router.write(text)
        return int(self._original.write(text) or len(text))

    def flush(self) -> None:
        self._original.flush()

    def fileno(self) -> int:
        return int(self._original.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class _TeePublisher:
    """The kernel's display publisher, with each payload also handed to the running request's display policy."""

    def __init__(self, original: Any, policy: Any) -> None:
        self._original = original
        self._policy = policy

    def publish(self, data: dict[str, Any], metadata: dict[str, Any] | None = None, *args: Any, **kwargs: Any) -> None:
        policy: DisplayPolicy | None = self._policy()
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
        self.fd_capture = _NoFdCapture()  # type: ignore[assignment]
        # What the kernel had before the running request took over; None between requests.
        self._saved: tuple[Any, Any, Any, Any] | None = None

    def begin(self, stream: Any, *, spill: bool = False) -> Operation:
        operation = super().begin(stream, spill=spill)
        if self._saved is None:
            shell = self.shell
            self._saved = (sys.stdout, sys.stderr, shell.display_pub, shell._showtraceback)
            sys.stdout = _Tee(self._stdout_router, self._saved[0])
            sys.stderr = _Tee(self._stderr_router, self._saved[1])
            shell.display_pub = _TeePublisher(self._saved[2], self._display_policy)  # type: ignore[assignment]
            kernel_traceback = self._saved[3]

            def show_traceback(etype: Any, evalue: Any, stb: list[str]) -> None:
                self._record_traceback(etype, evalue, stb)
                kernel_traceback(etype, evalue, stb)

            shell._showtraceback = show_traceback  # type: ignore[method-assign]
        return operation

    def end(self) -> None:
        saved = self._saved
        try:
            if saved is not None:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except Exception:  # noqa: BLE001
                        pass
        finally:
            if saved is not None:
                self._saved = None
                sys.stdout, sys.stderr = saved[0], saved[1]
                self.shell.display_pub = saved[2]
                self.shell._showtraceback = saved[3]  # type: ignore[method-assign]
            self.close_operation()
