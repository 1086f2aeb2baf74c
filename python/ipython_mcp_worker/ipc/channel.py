"""The IPC channel: a reader thread on fd 3, serialized writes on fd 4, and interrupt arming."""

from __future__ import annotations

import os
import queue
import select
import threading
from contextlib import AbstractContextManager
from typing import Any

from .codec import CODEC_JSON, FrameError, FrameReader, FrameTooLarge, encode_frame
from .gate import make_gate
from .interrupter import Interrupter

__all__ = ["Channel", "Interrupter"]


class Channel:
    """Frames in on ``fd_in``, frames out on ``fd_out`` (serialized by a lock).

    fd_in has one reader at a time, under ``_read_lock``. Between operations it is the main thread, which waits
    for the next request itself (``next_request``), and during a nested call it is the main thread too (it reads
    its own ``tool_result``, see ``reading``): a frame then wakes the one thread that needs it, with no hand-off.
    While an operation runs user code it is the reader thread, so interrupts, stale tool results and protocol
    errors are handled at once, in arrival order. The reader thread waits on a gate (gate.py) that the
    main thread closes and opens without waking it: a parked reader thread costs nothing, idle or between calls.
    """

    def __init__(self, fd_in: int, fd_out: int, limit: int) -> None:
        self.fd_out = fd_out
        self.limit = limit
        self.codec = CODEC_JSON
        self.reader = FrameReader(fd_in, limit)
        self._write_lock = threading.Lock()
        # Held by whoever reads fd_in, for as long as it is the reader (see the class docstring).
        self._read_lock = threading.Lock()
        self._main_poll = select.poll()
        self._main_poll.register(fd_in, select.POLLIN)
        self._gate = make_gate(fd_in)
        self._reading = _MainReads(self)
        # Requests the reader thread read while an operation ran; they come before anything still on fd_in.
        self.requests: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self._interrupter: Interrupter | None = None
        # A process forked by user code shares fd_in and the gate with this one; it must touch neither.
        self._forked = False
        os.register_at_fork(after_in_child=self._in_forked_child)

    def _in_forked_child(self) -> None:
        self._forked = True

    @property
    def interrupter(self) -> Interrupter | None:
        return self._interrupter

    @interrupter.setter
    def interrupter(self, interrupter: Interrupter | None) -> None:
        self._interrupter = interrupter
        if interrupter is not None:
            interrupter.before_raise = self._open_gate

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
        from ..values.repair import repair

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
            written = os.write(self.fd_out, frame)  # the usual case: the whole frame in one write
            if written < len(frame):
                view = memoryview(frame)[written:]
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

    def next_request(self) -> dict[str, Any] | None:
        """The next ``request`` or ``shutdown``; main thread, between operations.

        One the reader thread read during the last operation comes first. Otherwise the main thread reads fd_in
        itself until a request comes, handling every other frame as the reader thread would (an interrupt is
        remembered for its request, a stale tool result dropped, a bad frame answered), and opens the gate again
        before it returns, so the request's own interrupts reach the reader thread."""
        if self._forked:
            return self.requests.get()  # a forked child that came back here waits forever, as it always did
        # Only the main thread takes from the queue: not empty means get_nowait succeeds (and no queue.Empty is
        # raised on the usual path, an empty queue).
        queued = self.requests
        message: dict[str, Any] | None = None
        try:
            if not queued.empty():
                message = queued.get_nowait()  # (the gate is opened for it all the same: finally)
                return message
            self._close_gate()  # a no-op after operation_done
            with self._read_lock:
                # The reader thread dispatches under this lock: what it read before the gate closed is queued.
                if not queued.empty():
                    message = queued.get_nowait()
                    return message
                while True:
                    message = self._read_message()  # no request is armed: SIGINT cannot raise in here
                    if message is None:
                        continue
                    if message.get("type") in ("request", "shutdown"):
                        return message
                    self._dispatch(message)
        finally:
            # After a shutdown the gate stays closed: the reader thread would meet the parent's end of file and
            # exit the process, cutting short what a graceful end still does (saving the state, worker.py).
            if message is None or message.get("type") != "shutdown":
                self._open_gate()

    def reading(self) -> AbstractContextManager[None]:
        """Make the calling (main) thread the reader of fd_in for the block; the reader thread waits meanwhile.

        Used around a nested tool call: the main thread sends its ``tool_call`` inside the block and reads frames
        itself with ``read_tool_result``, saving the hand-off from the reader thread (one cross-CPU wake-up)."""
        return self._reading

    def operation_done(self) -> None:
        """The operation is over and disarmed, its response about to be sent: close the gate now, so the next
        request, which the parent may send as soon as it reads that response, wakes the main thread alone. What
        comes meanwhile waits for ``next_request``; it can stop nothing (no request is armed)."""
        self._close_gate()

    def _close_gate(self) -> None:
        if not self._forked:
            self._gate.close()

    def _open_gate(self) -> None:
        if not self._forked:
            self._gate.open()

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
        ready = select.poll()
        ready.register(self.reader.fd, select.POLLIN)
        while True:
            self._gate.wait()  # until a frame starts (or the pipe closes) while the gate is open
            with self._read_lock:
                # The main thread may have been the reader since: the frame may be gone, or the one it wants.
                if not ready.poll(0):
                    continue
                message = self._read_message()
                # Dispatched under the lock, so frames are handled in the order they arrived.
                if message is not None:
                    self._dispatch(message)


class _MainReads:
    """``Channel.reading``: a plain class, one instance per channel (a generator context manager costs more per
    nested call); the block does not nest (one call at a time, on the main thread)."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    def __enter__(self) -> None:
        channel = self._channel
        interrupter = channel.interrupter
        if interrupter is None:
            channel._close_gate()
            channel._read_lock.acquire()
            return
        # An interrupt is held while the gate and the lock change hands (it could otherwise land between the
        # lock's acquire and the block, leaving the lock taken by nobody), then raised with both handed back.
        interrupter.defer = True
        try:
            channel._close_gate()
            channel._read_lock.acquire()  # waits at most for the reader thread to finish one frame
        finally:
            interrupter.defer = False
        if interrupter.deferred:
            interrupter.deferred = False
            self.__exit__()
            raise KeyboardInterrupt

    def __exit__(self, *exc_info: object) -> None:
        channel = self._channel
        try:
            channel._read_lock.release()
        finally:
            channel._open_gate()
