"""The IPC channel: a reader thread on fd 3, serialized writes on fd 4, and interrupt arming."""

from __future__ import annotations

import os
import queue
import signal
import threading
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
        self._main_ident = threading.main_thread().ident
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self._armed is not None:
            raise KeyboardInterrupt

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


class Channel:
    """Frames in on ``fd_in`` (read by a daemon thread), frames out on ``fd_out`` (serialized by a lock)."""

    def __init__(self, fd_in: int, fd_out: int, limit: int) -> None:
        self.fd_out = fd_out
        self.limit = limit
        self.codec = CODEC_JSON
        self.reader = FrameReader(fd_in, limit)
        self._write_lock = threading.Lock()
        self.requests: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self.tool_results: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
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
            frame = self._repaired_frame(message)
            if frame is None:
                return
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
        return self.reader.read()

    def start_reader(self) -> None:
        thread = threading.Thread(target=self._read_forever, name="ipython-mcp-ipc-reader", daemon=True)
        thread.start()

    def _read_forever(self) -> None:
        while True:
            try:
                message = self.reader.read()
            except FrameTooLarge as error:
                self.send({"type": "protocol_error", "code": "message_too_large", "message": str(error)})
                continue
            except FrameError as error:
                self.send({"type": "protocol_error", "code": "protocol_error", "message": str(error)})
                continue
            except OSError:
                message = None
            if message is None:
                # The parent is gone: nobody can receive results any more. Exit now, without cleanup that
                # could block on user state.
                os._exit(0)
            kind = message.get("type")
            if kind == "interrupt":
                if self.interrupter is not None and isinstance(message.get("id"), int):
                    reason = message.get("reason")
                    self.interrupter.request(message["id"], reason if reason == "memory_limit" else None)
            elif kind == "tool_result":
                self.tool_results.put(message)
            elif kind in ("request", "shutdown"):
                self.requests.put(message)
            else:
                self.send({"type": "protocol_error", "code": "protocol_error",
                           "message": f"unexpected message type {str(kind)[:64]!r}"})
