"""Output capture: streaming head-and-tail sinks, a sys.stdout/sys.stderr router, and file-descriptor capture.

Python-level writes go straight into the active operation's sink. Writes to fd 1 and fd 2 (C code,
subprocesses, ``os.write``) land in pipes that a drain thread reads into the same sinks, so nothing user code
writes can reach the parent's stdout. Output that arrives while no operation is active is dropped.

Python-level writes from other threads belong to the operation during which the thread was started (or, for a
``ThreadPoolExecutor``, during which the work was submitted). A thread that outlives its cell and keeps printing
is therefore dropped instead of leaking into a later operation's result. File-descriptor writes carry no thread
identity: fd-level output of such a thread can still land in whichever operation is active when it is drained.
"""

from __future__ import annotations

import codecs
import errno
import functools
import io
import os
import select
import threading
import time
from collections.abc import Callable
from typing import Any

from .sinks import HeadTailSink, PrefixSink, TextSink, Writer, fd_writer, release_held

__all__ = ["FdCapture", "HeadTailSink", "PrefixSink", "StreamRouter", "TextSink", "Throttle", "Writer"]


_MAIN_THREAD_IDENT = threading.main_thread().ident
_ORIGIN_ATTRIBUTE = "_ipython_mcp_output_origin"
_routers: list[StreamRouter] = []
_work_origin = threading.local()
_hooks_installed = False


def _current_origin() -> dict[StreamRouter, Any] | None:
    """The operation that a thread started now, or work submitted now, belongs to.

    On the main thread (the shell owner) that is the active operation, named by the sinks each router writes to
    now. Another thread passes on the operation it belongs to itself.
    """
    if threading.get_ident() == _MAIN_THREAD_IDENT:
        return {router: router._current() for router in _routers}
    return _thread_origin()


def _thread_origin() -> dict[StreamRouter, Any] | None:
    origin: dict[StreamRouter, Any] | None = getattr(_work_origin, "origin", None)
    if origin is None:
        origin = getattr(threading.current_thread(), _ORIGIN_ATTRIBUTE, None)
    return origin


def _install_thread_hooks() -> None:
    """Stamp every thread started (and every ThreadPoolExecutor work item submitted) with its operation."""
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    original_start = threading.Thread.start

    @functools.wraps(original_start)
    def start(self: threading.Thread) -> None:
        try:
            setattr(self, _ORIGIN_ATTRIBUTE, _current_origin())
        except Exception:  # noqa: BLE001 - a thread subclass may forbid attributes; it then writes nowhere
            pass
        original_start(self)

    threading.Thread.start = start  # type: ignore[method-assign]

    from concurrent.futures import ThreadPoolExecutor

    # Typed loosely: the generic signature of submit cannot be restated for a wrapper that forwards everything.
    original_submit: Callable[..., Any] = ThreadPoolExecutor.submit

    @functools.wraps(original_submit)
    def submit(self: ThreadPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        origin = _current_origin()

        def run_for_origin(*call_args: Any, **call_kwargs: Any) -> Any:
            previous = getattr(_work_origin, "origin", None)
            _work_origin.origin = origin
            try:
                return fn(*call_args, **call_kwargs)
            finally:
                _work_origin.origin = previous

        return original_submit(self, run_for_origin, *args, **kwargs)

    # Monkeypatching a stdlib method: the checker sees a plain function replacing a generic one.
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign, assignment]


def dup2_retrying(fd: int, target: int) -> None:
    """``os.dup2``, tried again while Linux answers EBUSY: a free ``target`` (user code closed fd 1 or 2) that another
    thread's open() or dup() is taking at this moment. That lasts microseconds; after about 50 ms the error stands."""
    deadline = time.monotonic() + 0.05
    while True:
        try:
            os.dup2(fd, target)
            return
        except OSError as error:
            if error.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.0005)


def read_pipe(read_end: int, decoder: codecs.IncrementalDecoder, sink: Callable[[], Writer | None]) -> bool:
    """Reads all a non-blocking pipe holds, decoded, into the fd side of ``sink()`` (asked per chunk: it may change
    between requests); True when anything was read."""
    read_any = False
    while True:
        try:
            chunk = os.read(read_end, 1 << 16)
        except OSError:  # BlockingIOError included: the pipe is empty
            return read_any
        if not chunk:
            return read_any
        read_any = True
        text = decoder.decode(chunk)
        target = sink()
        if target is not None and text:
            fd_writer(target).write(text)


def drain_forever(
    read_ends: dict[int, int], lock: threading.Lock, read_available: Callable[[int], object], stop_read: int | None = None
) -> None:
    """A drain thread's loop: waits on the pipes' read ends (``read_ends`` maps each to its target) and, under
    ``lock``, reads those that hold something; returns once ``stop_read`` (when given) becomes readable."""
    watched = [*read_ends] if stop_read is None else [*read_ends, stop_read]
    while True:
        try:
            ready, _, _ = select.select(watched, [], [])
        except (OSError, ValueError):
            return
        if stop_read is not None and stop_read in ready:
            return
        with lock:
            for read_end in ready:
                read_available(read_ends[read_end])


def write_decoder_tail(decoder: codecs.IncrementalDecoder, sink: Writer | None) -> None:
    """Writes what ``decoder`` still holds (an incomplete character, replaced) into the fd side of ``sink``."""
    tail = decoder.decode(b"", final=True)
    if tail and sink is not None:
        fd_writer(sink).write(tail)


class StreamRouter(io.TextIOBase):
    """Replacement for sys.stdout / sys.stderr that writes into the active operation's sink, if any.

    Writes from the main thread go to the active operation. Writes from any other thread go there only when
    that thread belongs to the active operation (see the module docstring); otherwise they are dropped.
    """

    def __init__(self, name: str, current: Callable[[], Writer | None]) -> None:
        super().__init__()
        self._name = name
        self._current = current
        _routers.append(self)
        _install_thread_hooks()

    @property
    def name(self) -> str:
        return f"<{self._name}>"

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        sink = self._current()
        if sink is None:
            return len(text)
        if threading.get_ident() != _MAIN_THREAD_IDENT and not self._from_this_operation(sink):
            return len(text)  # a thread of an earlier operation (or of none): not this operation's output
        sink.write(text)
        return len(text)

    def _from_this_operation(self, sink: Writer) -> bool:
        origin = _thread_origin()
        return origin is not None and origin.get(self) is sink

    def flush(self) -> None:
        return None


class FdCapture:
    """Redirects fd 1 and fd 2 into pipes and drains them into the active sinks.

    ``settle()`` is called by the owner at the end of each operation: under the drain lock it reads whatever
    is already in the pipes, so output written before the operation ended is attributed to it. It also
    repairs fd 1 / fd 2 if user code closed or replaced them.
    """

    def __init__(self, current: Callable[[int], Writer | None]) -> None:
        self._current = current
        self._lock = threading.Lock()
        self._pipes: dict[int, tuple[int, int]] = {}
        self._decoders: dict[int, codecs.IncrementalDecoder] = {}
        for target in (1, 2):
            read_end, write_end = os.pipe()
            os.set_blocking(read_end, False)
            os.dup2(write_end, target)
            self._pipes[target] = (read_end, write_end)
            self._decoders[target] = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # Per execute, settle() asks once which pipes hold anything instead of trying a read on each, and repair()
        # compares fd 1/2 with the pipes' identities taken once here (the write ends never change).
        self._ready = select.poll()
        for read_end, _ in self._pipes.values():
            self._ready.register(read_end, select.POLLIN)
        self._targets = tuple((target, read_end) for target, (read_end, _) in self._pipes.items())
        self._expected = tuple(
            (target, write_end, _identity(write_end)) for target, (_, write_end) in self._pipes.items()
        )
        # Targets read since the last settle (under the lock): only their decoders can hold an incomplete
        # character, so settle() flushes only theirs.
        self._undecoded: set[int] = set()
        self._stop_read, self._stop_write = os.pipe()
        self._thread = threading.Thread(target=self._drain_forever, name="ipython-mcp-fd-drain", daemon=True)
        self._thread.start()

    def _read_available(self, target: int) -> None:
        """Reads what the pipe of ``target`` holds into the active sink; called with the lock held."""
        if read_pipe(self._pipes[target][0], self._decoders[target], lambda: self._current(target)):
            self._undecoded.add(target)

    def _drain_forever(self) -> None:
        read_ends = {self._pipes[target][0]: target for target in self._pipes}
        drain_forever(read_ends, self._lock, self._read_available, self._stop_read)

    def settle(self) -> None:
        with self._lock:
            try:
                polled = self._ready.poll(0)
                ready = {fd for fd, _ in polled} if polled else None
            except OSError:
                polled, ready = None, None
            # The common case, nothing written to fd 1/2 since the drain thread last read: no work per pipe.
            if polled is None or polled or self._undecoded:
                for target, read_end in self._targets:
                    if polled is None or (ready is not None and read_end in ready):
                        self._read_available(target)
                    if target in self._undecoded:
                        write_decoder_tail(self._decoders[target], self._current(target))
                self._undecoded.clear()
            # What one side held back for the other's line to end goes in now: the operation is ending.
            for target in (1, 2):
                release_held(self._current(target))
        self.repair()

    def repair(self) -> None:
        """Point fd 1 and fd 2 back at the capture pipes if user code closed or redirected them."""
        for target, write_end, expected in self._expected:
            try:
                status = os.fstat(target)
                if (status.st_dev, status.st_ino) == expected:
                    continue
            except OSError:
                pass
            try:
                dup2_retrying(write_end, target)
            except OSError:
                pass

    def close(self) -> None:
        try:
            os.write(self._stop_write, b"x")
        except OSError:
            pass
        self._thread.join(timeout=1)


def _identity(fd: int) -> tuple[int, int]:
    status = os.fstat(fd)
    return status.st_dev, status.st_ino


class Throttle:
    """Coalesces streamed text and hands it on at most once per ``interval`` seconds.

    Text that arrives inside the interval is handed on when the interval ends, by a timer, even if nothing more is
    written: the last line of a burst (often just its newline) must not wait for the next write or the end of the
    operation. Emitting happens under the lock, so chunks keep their order and nothing follows ``flush``.
    """

    def __init__(self, emit: Callable[[str], None], interval: float = 0.1, max_chunk: int = 16384) -> None:
        self._emit = emit
        self._interval = interval
        self._max_chunk = max_chunk
        self._buffer: list[str] = []
        self._size = 0
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._closed = False

    def add(self, text: str) -> None:
        with self._lock:
            if self._closed:
                return
            if self._size < self._max_chunk:
                piece = text[: self._max_chunk - self._size]
                self._buffer.append(piece)
                self._size += len(piece)
            now = time.monotonic()
            if now - self._last < self._interval:
                if self._timer is None:
                    self._timer = threading.Timer(self._interval - (now - self._last), self._late)
                    self._timer.daemon = True
                    self._timer.start()
                return
            self._last = now
            self._deliver()

    def _late(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed:
                return
            self._last = time.monotonic()
            self._deliver()

    def _deliver(self) -> None:
        """Hands the buffer on; called with the lock held."""
        pending = "".join(self._buffer)
        self._buffer.clear()
        self._size = 0
        if pending:
            self._emit(pending)

    def flush(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._closed = True
            self._deliver()
