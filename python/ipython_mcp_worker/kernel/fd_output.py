"""fd-level output of the agent's request in a kernel: what C code or a subprocess writes to fd 1 and 2.

The local worker owns fd 1 and 2 for good (capture/streams.py). In a kernel they are the kernel's (ipykernel
forwards them to its clients), so the capture is worn only while the agent's request runs: ``enter`` points fd 1
and 2 at pipes of this side's own, a drain thread reads the pipes into the request's sinks and on to the kernel's
clients, and ``settle`` puts the kernel's own fd 1 and 2 back and reads what is left. Output written to the pipes
between requests (a process the agent started that outlived its cell) has no request to go to and is dropped, as
on the local worker; like there, an fd write carries no thread, so what another thread (a subshell's cell) writes to
fd 1 or 2 while the agent's request runs is counted as the agent's.
"""

from __future__ import annotations

import codecs
import ctypes
import os
import select
import threading
from collections.abc import Callable

from ..capture.sinks import Writer, fd_writer, release_held
from ..capture.streams import dup2_retrying, read_pipe


def _flush_c_stdio() -> None:
    """Flush C's stdio buffers (printf from an extension), so what was written before a switch goes to its owner."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


class KernelFdCapture:
    """Points fd 1 and 2 at pipes while an agent's request runs; ``current(target)`` is where the text goes."""

    def __init__(self, current: Callable[[int], Writer | None]) -> None:
        self._current = current
        self._lock = threading.Lock()
        self._pipes: dict[int, tuple[int, int]] = {}
        self._decoders = {target: codecs.getincrementaldecoder("utf-8")(errors="replace") for target in (1, 2)}
        # The kernel's own fd 1 and 2 (duplicates) while a request wears the capture.
        self._saved: dict[int, int] = {}
        self._thread: threading.Thread | None = None

    def _start(self) -> None:
        if self._pipes:
            return
        for target in (1, 2):
            read_end, write_end = os.pipe()
            os.set_blocking(read_end, False)
            self._pipes[target] = (read_end, write_end)
        self._thread = threading.Thread(target=self._drain_forever, name="ipython-mcp-kernel-fd-drain", daemon=True)
        self._thread.start()

    def enter(self) -> None:
        """Point fd 1 and 2 at the pipes (a target closed now is left alone)."""
        try:
            self._start()
        except OSError:
            return
        _flush_c_stdio()
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
                tail = self._decoders[target].decode(b"", final=True)
                sink = self._current(target)
                if tail and sink is not None:
                    fd_writer(sink).write(tail)
                release_held(sink)

    def _read_available(self, target: int) -> None:
        read_pipe(self._pipes[target][0], self._decoders[target], lambda: self._current(target))

    def _drain_forever(self) -> None:
        read_ends = {self._pipes[target][0]: target for target in self._pipes}
        while True:
            try:
                ready, _, _ = select.select(list(read_ends), [], [])
            except (OSError, ValueError):
                return
            with self._lock:
                for read_end in ready:
                    self._read_available(read_ends[read_end])
