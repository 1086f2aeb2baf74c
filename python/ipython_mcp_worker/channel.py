"""The IPC channel: a reader thread on fd 3, serialized writes on fd 4, and interrupt arming."""

from __future__ import annotations

import os
import queue
import select
import signal
import threading
import time
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .codec import CODEC_JSON, FrameError, FrameReader, FrameTooLarge, encode_frame


class Interrupter:
    """SIGINT armed only while a named request runs; an interrupt for any other request is ignored."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: int | None = None
        # Interrupts that arrived before their request was armed, with their reasons.
        self._requested: dict[int, str | None] = {}
        self._reason: str | None = None
        # Why the last disarmed request was interrupted (``"memory_limit"``, ``"interrupt"``), or None.
        self.stop_reason: str | None = None
        self._main_ident: int = typing.cast(int, threading.main_thread().ident)  # set: the main thread runs
        # Set by the main thread while it reads one frame itself (Channel.read_tool_result): an interrupt then
        # is held until the frame is read whole, so the stream stays in sync. Main thread only.
        self.defer = False
        self.deferred = False
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self._armed is not None:
            if self.defer:
                self.deferred = True
                return
            raise KeyboardInterrupt

    @staticmethod
    def hide_handler_frames(error: BaseException | None) -> None:
        """Drop this handler's own frame from the tracebacks of ``error`` and the exceptions it was raised from or
        during, in place. Raising KeyboardInterrupt from a Python handler puts its frame innermost in the traceback:
        the user would read the worker's internals under every interrupted cell, and rendering it costs a parse of
        this file the first time (stack_data, tens of milliseconds, inside the interrupt's grace period)."""
        seen: set[int] = set()
        while error is not None and id(error) not in seen and len(seen) < 64:
            seen.add(id(error))
            entry = error.__traceback__
            previous = None
            while entry is not None and entry.tb_next is not None:
                previous, entry = entry, entry.tb_next
            if previous is not None and entry is not None and entry.tb_frame.f_code is _HANDLER_CODE:
                previous.tb_next = None
            error = error.__cause__ or error.__context__

    def arm(self, request_id: int) -> None:
        with self._lock:
            self._armed = request_id
            self._reason = None
            self.stop_reason = None
            if request_id in self._requested:
                self._reason = self._requested.pop(request_id) or "interrupt"
                signal.pthread_kill(self._main_ident, signal.SIGINT)

    def disarm(self) -> None:
        with self._lock:
            if self._armed is not None:
                self.stop_reason = self._reason
            self._armed = None
            self._reason = None
            self._requested.clear()

    def request(self, request_id: int, reason: str | None = None) -> None:
        with self._lock:
            if self._armed == request_id:
                # A memory stop wins over a plain one: the worker then releases memory before it answers.
                if self._reason != "memory_limit":
                    self._reason = reason or "interrupt"
                signal.pthread_kill(self._main_ident, signal.SIGINT)
            elif self._armed is None:
                # The request may still be on its way to the main thread; remember it until it is armed.
                self._requested[request_id] = reason


_HANDLER_CODE = Interrupter._handle.__code__


class Channel:
    """Frames in on ``fd_in`` (read by a daemon thread), frames out on ``fd_out`` (serialized by a lock)."""

    def __init__(self, fd_in: int, fd_out: int, limit: int) -> None:
        self.fd_out = fd_out
        self.limit = limit
        self.codec = CODEC_JSON
        self.reader = FrameReader(fd_in, limit)
        self._write_lock = threading.Lock()
        # Held by whoever reads fd_in: the reader thread while it reads one frame, or the main thread for as long
        # as it waits for its own tool result (see ``reading``), so the answer wakes the main thread directly.
        self._read_lock = threading.Lock()
        self._main_poll = select.poll()
        self._main_poll.register(fd_in, select.POLLIN)
        # While the main thread makes nested calls, the reader thread parks instead of polling fd_in: two threads
        # waiting on one pipe would both be woken by every answer. It takes fd_in back once the main thread has
        # been out of a call for _HANDBACK_S (user code between calls), or at once when run_code ends.
        self._nested = False
        self._in_call = False
        self._left_call_at = 0.0
        self._resume = threading.Event()
        self.requests: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self.interrupter: Interrupter | None = None

    def send(self, message: dict[str, Any]) -> None:
        """Send one message. Nothing a message holds can end the worker: a part that cannot be encoded is
        repaired (repair.py), a response that is too large or still fails becomes a structured error, and any
        other message that cannot be sent is dropped."""
        try:
            frame = encode_frame(message, self.codec, self.limit)
        except FrameTooLarge as error:
            if message.get("type") != "response":
                return  # stream events and the like are dropped rather than sent oversized
            frame = self._failure_frame(message, "message_too_large",
                                        f"the result is {error.size} bytes, over the {error.limit}-byte IPC message limit",
                                        {"size": error.size, "limit": error.limit})
        except Exception:  # noqa: BLE001 - UnicodeEncodeError, OverflowError, TypeError, ValueError, RecursionError
            repaired = self._repaired_frame(message)
            if repaired is None:
                return
            frame = repaired
        self.write_frame(frame)

    def _repaired_frame(self, message: dict[str, Any]) -> bytes | None:
        from .repair import repair

        try:
            repaired, _ = repair(message)
            return encode_frame(repaired, self.codec, self.limit)
        except Exception as error:  # noqa: BLE001 - even the repaired copy failed (or is too large)
            if message.get("type") != "response":
                return None
            return self._failure_frame(message, "internal_error",
                                       f"the result could not be encoded for the parent ({type(error).__name__})", None)

    def _failure_frame(self, message: dict[str, Any], code: str, text: str, details: dict[str, Any] | None) -> bytes:
        request_id = message.get("id")
        error: dict[str, Any] = {"code": code, "message": text}
        if details:
            error["details"] = details
        return encode_frame(
            {"type": "response", "id": request_id if type(request_id) is int else None, "ok": False, "error": error},
            self.codec, self.limit)

    def write_frame(self, frame: bytes) -> None:
        """Write one already-encoded frame, whole, under the write lock."""
        with self._write_lock:
            view = memoryview(frame)
            while view:
                written = os.write(self.fd_out, view)
                view = view[written:]

    def read_one(self) -> dict[str, Any] | None:
        """Blocking read used during the handshake, before the reader thread starts."""
        message: dict[str, Any] | None = self.reader.read()
        return message

    def start_reader(self) -> None:
        thread = threading.Thread(target=self._read_forever, name="ipython-mcp-ipc-reader", daemon=True)
        thread.start()

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Make the calling (main) thread the reader of fd_in for the block; the reader thread waits meanwhile.

        Used around a nested tool call: the main thread sends its ``tool_call`` inside the block and reads frames
        itself with ``read_tool_result``, saving the hand-off from the reader thread (one cross-CPU wake-up)."""
        self._nested = True
        self._in_call = True
        try:
            with self._read_lock:
                yield
        finally:
            self._in_call = False
            self._left_call_at = time.monotonic()

    def nested_calls_done(self) -> None:
        """The main thread makes no more nested calls for now (run_code ended): hand fd_in back at once."""
        if self._nested:
            self._left_call_at = float("-inf")
            self._resume.set()

    def read_tool_result(self, call_id: int) -> dict[str, Any]:
        """Read frames until the ``tool_result`` for ``call_id``; main thread, inside ``reading``.

        Every other frame is dispatched exactly as the reader thread would (an interrupt for the running request
        raises KeyboardInterrupt here, a request is queued, a stale tool result is dropped). An interrupt that
        comes while one frame is being read is held until that frame is read whole and handled (so the stream
        stays in sync and nothing read is lost), then raised; the wait itself (poll) stays interruptible."""
        interrupter = self.interrupter
        if interrupter is None:
            raise RuntimeError("read_tool_result needs the interrupter")
        while True:
            self._main_poll.poll()
            interrupter.defer = True
            try:
                message = self._read_message()
                answer = None
                if message is not None and message.get("type") == "tool_result":
                    if message.get("call_id") == call_id:
                        answer = message
                    # else: the answer to a call that an earlier interrupt abandoned
                elif message is not None:
                    self._dispatch(message)
            finally:
                interrupter.defer = False
            if interrupter.deferred:
                interrupter.deferred = False
                raise KeyboardInterrupt
            if answer is not None:
                return answer

    def _read_message(self) -> dict[str, Any] | None:
        """One frame from fd_in (under the read lock); None for a bad frame, which is answered with a
        protocol_error. At EOF the parent is gone: nobody can receive results any more, so exit now, without
        cleanup that could block on user state."""
        message: dict[str, Any] | None
        try:
            message = self.reader.read()
        except FrameTooLarge as error:
            self.send({"type": "protocol_error", "code": "message_too_large", "message": str(error)})
            return None
        except FrameError as error:
            self.send({"type": "protocol_error", "code": "protocol_error", "message": str(error)})
            return None
        except OSError:
            message = None
        if message is None:
            os._exit(0)
        return message

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "interrupt":
            if self.interrupter is not None and isinstance(message.get("id"), int):
                reason = message.get("reason")
                self.interrupter.request(message["id"], reason if reason == "memory_limit" else None)
        elif kind == "tool_result":
            pass  # no call is waiting (the main thread reads its own answers): one an interrupt abandoned
        elif kind in ("request", "shutdown"):
            self.requests.put(message)
        else:
            self.send({"type": "protocol_error", "code": "protocol_error",
                       "message": f"unexpected message type {str(kind)[:64]!r}"})

    def _read_forever(self) -> None:
        poller = select.poll()
        poller.register(self.reader.fd, select.POLLIN)
        while True:
            if self._nested:
                if self._in_call or time.monotonic() - self._left_call_at < _HANDBACK_S:
                    self._resume.wait(_PARK_S)
                    self._resume.clear()
                    continue
                self._nested = False
            poller.poll()  # until a frame starts (or the pipe closes), without taking it
            if self._nested and self._in_call:
                continue  # woken by the answer the main thread is reading itself
            with self._read_lock:
                # The main thread may have taken that frame while it waited for its own tool result.
                if not poller.poll(0):
                    continue
                message = self._read_message()
                # Dispatched under the lock, so frames are handled in the order they arrived.
                if message is not None:
                    self._dispatch(message)


# How long the main thread may run code between nested calls before the reader thread takes fd_in back, and how
# often a parked reader thread looks: an interrupt sent while code runs between calls waits at most their sum.
_HANDBACK_S = 0.001
_PARK_S = 0.002
