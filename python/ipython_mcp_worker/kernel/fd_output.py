"""fd-level output of the agent's request in a kernel: what C code or a subprocess writes to fd 1 and 2.

The local worker owns fd 1 and 2 for good (capture/streams.py). In a kernel they are the kernel's (ipykernel
forwards them to its clients), so the capture is worn only while an agent's request runs: ``enter`` points fd 1
and 2 at pipes of this side's own, a drain thread reads the pipes into the request's sinks and on to the kernel's
clients, and ``settle`` puts the kernel's own fd 1 and 2 back and reads what is left.

fd 1 and 2 are the process's, so there is one capture per kernel process (``kernel_fd_capture``), whichever agent's
request wears it: agents come and go on a long-lived kernel without leaving a thread or a pipe each (a worker of
another version booted into the same kernel has its own). Output written
to the pipes between requests (a process an agent started that outlived its cell) has no request to go to and is
dropped, as on the local worker, and the pipes never fill under such a process. Like there, an fd write carries no
thread, so what another thread (a subshell's cell) writes to fd 1 or 2 while the agent's request runs is counted as
the agent's.
"""

from __future__ import annotations

import codecs
import ctypes
import os
import threading
from collections.abc import Callable

from ..capture.sinks import Writer, release_held
from ..capture.streams import drain_forever, dup2_retrying, read_pipe, write_decoder_tail

_libc: ctypes.CDLL | None = None


def _flush_c_stdio() -> None:
    """Flush C's stdio buffers (printf from an extension), so what was written before a switch goes to its owner."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None)
        _libc.fflush(None)
    except (OSError, AttributeError):
        pass


def _nowhere(target: int) -> Writer | None:
    return None


class KernelFdCapture:
    """Points fd 1 and 2 at pipes while an agent's request runs; what they get goes where ``enter`` said."""

    def __init__(self) -> None:
        self._current: Callable[[int], Writer | None] = _nowhere
        self._lock = threading.Lock()
        self._pipes: dict[int, tuple[int, int]] = {}
        self._decoders = {target: codecs.getincrementaldecoder("utf-8")(errors="replace") for target in (1, 2)}
        # The kernel's own fd 1 and 2 (duplicates) while a request wears the capture.
        self._saved: dict[int, int] = {}

    def _start(self) -> None:
        if self._pipes:
            return
        for target in (1, 2):
            read_end, write_end = os.pipe()
            os.set_blocking(read_end, False)
            self._pipes[target] = (read_end, write_end)
        read_ends = {read_end: target for target, (read_end, _) in self._pipes.items()}
        threading.Thread(
            target=drain_forever, args=(read_ends, self._lock, self._read_available),
            name="ipython-mcp-kernel-fd-drain", daemon=True,
        ).start()

    def enter(self, current: Callable[[int], Writer | None]) -> None:
        """Point fd 1 and 2 at the pipes (a target closed now is left alone); ``current(target)`` receives the text
        until ``settle``."""
        try:
            self._start()
        except OSError:
            return
        _flush_c_stdio()
        with self._lock:
            self._current = current
        for target in (1, 2):
            try:
                saved = os.dup(target)
            except OSError:
                continue
            try:
                dup2_retrying(self._pipes[target][1], target)
            except OSError:
                os.close(saved)
                continue
            self._saved[target] = saved

    def settle(self) -> None:
        """Put the kernel's fd 1 and 2 back (repairing one the request closed) and read what the pipes hold."""
        if not self._saved:
            return
        _flush_c_stdio()
        for target, saved in list(self._saved.items()):
            try:
                dup2_retrying(saved, target)
            except OSError:
                pass  # the kernel's fd stays as the request left it; the result is still the request's
            finally:
                os.close(saved)
        self._saved.clear()
        with self._lock:
            for target in (1, 2):
                self._read_available(target)
                sink = self._current(target)
                write_decoder_tail(self._decoders[target], sink)
                release_held(sink)
            self._current = _nowhere

    def _read_available(self, target: int) -> None:
        read_pipe(self._pipes[target][0], self._decoders[target], lambda: self._current(target))


_capture: KernelFdCapture | None = None


def kernel_fd_capture() -> KernelFdCapture:
    """The kernel process's one capture, made on first use."""
    global _capture
    if _capture is None:
        _capture = KernelFdCapture()
    return _capture
