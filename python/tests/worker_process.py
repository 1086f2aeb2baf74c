"""A real worker subprocess driven over its fd 3 / fd 4 frames, for the worker's own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ipython_mcp_worker.ipc.codec import CODEC_NAMES, FrameReader, encode_frame

PYTHON_ROOT = Path(__file__).resolve().parents[1]


class _CodecRecordingReader(FrameReader):
    """A FrameReader that remembers the codec byte of the last frame it returned."""

    last_codec: int | None = None
    _latest: bytes | None = None

    def _read_exact(self, count: int) -> bytes | None:
        self._latest = super()._read_exact(count)
        return self._latest

    def read(self) -> Any:
        message = super().read()
        if message is not None and self._latest:
            self.last_codec = self._latest[0]  # a returned message's body is the last thing read
        return message


class WorkerProcess:
    """``codec=None`` negotiates like the parent: the first codec the worker's hello offers (msgpack where the
    worker's Python has it, else json). A named codec must be offered by the worker, and the worker must then
    write in it: a test that needs msgpack fails with a clear message where msgpack is missing."""

    def __init__(self, codec: str | None = None, limits: dict[str, int] | None = None,
                 extra: dict[str, Any] | None = None, env: dict[str, str] | None = None,
                 python_args: list[str] | None = None, python: str | None = None) -> None:
        to_worker_r, self._to_worker_w = os.pipe()
        self._from_worker_r, from_worker_w = os.pipe()

        def place_fds() -> None:
            os.dup2(to_worker_r, 3)
            os.dup2(from_worker_w, 4)

        self.process = subprocess.Popen(
            [python or sys.executable, *(python_args or ["-m", "ipython_mcp_worker"])],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=place_fds, pass_fds=(3, 4), cwd=str(PYTHON_ROOT), env={**os.environ, **(env or {})},
        )
        os.close(to_worker_r)
        os.close(from_worker_w)
        self.limit = (limits or {}).get("max_ipc_message_bytes", 4 * 1024 * 1024)
        self.reader = _CodecRecordingReader(self._from_worker_r, self.limit)
        self.next_id = 1
        self.hello = self.read()
        offered = self.hello.get("codecs", [])
        if codec is None:
            codec = offered[0]
        elif codec not in offered:
            self.close()
            raise AssertionError(f"this test needs the {codec} codec; the worker offers only {offered}")
        self.codec_name = codec
        self.codec = CODEC_NAMES[codec]
        self.send({"type": "configure", "protocol": 1, "codec": codec, "limits": limits or {},
                   "library_paths": [], "preload_modules": [], "module_aliases": {},
                   "reserved_tool_names": [], **(extra or {})})
        self.ready = self.read()
        if self.reader.last_codec != self.codec:
            self.close()
            raise AssertionError(f"negotiated {codec}, but the worker answered with codec byte {self.reader.last_codec}")

    def send(self, message: dict[str, Any]) -> None:
        os.write(self._to_worker_w, encode_frame(message, self.codec, 1 << 30))

    def read(self) -> dict[str, Any]:
        message = self.reader.read()
        assert message is not None, "worker closed its channel"
        return message

    def start(self, op: str, params: dict[str, Any] | None = None, stream: bool = False) -> int:
        """Send one request without waiting for it; returns its id."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"type": "request", "id": request_id, "op": op, "params": params or {}, "stream": stream})
        return request_id

    def response_to(self, request_id: int) -> dict[str, Any]:
        """Read until the response to ``request_id``, dropping the frames before it."""
        while True:
            message = self.read()
            if message["type"] == "response" and message["id"] == request_id:
                return message

    def request(self, op: str, params: dict[str, Any] | None = None, stream: bool = False,
                events: list[dict[str, Any]] | None = None,
                tool_handler: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> dict[str, Any]:
        """Send one request and read until its response. ``tool_handler`` answers ``tool_call`` messages:
        it returns the ``tool_result`` fields (``ok`` and ``value`` or ``message``), or None to leave the call
        unanswered."""
        request_id = self.start(op, params, stream)
        while True:
            message = self.read()
            if message["type"] == "response" and message["id"] == request_id:
                return message
            if events is not None:
                events.append(message)
            if message["type"] == "tool_call" and tool_handler is not None:
                answer = tool_handler(message)
                if answer is not None:
                    if "value" in answer:  # the parent sends a value as JSON text (docs/protocol.md)
                        answer = {**answer, "value_json": json.dumps(answer.pop("value"))}
                    self.send({"type": "tool_result", "call_id": message["call_id"], **answer})

    def execute(self, code: str) -> dict[str, Any]:
        response = self.request("execute", {"code": code})
        assert response["ok"], response
        return response["result"]

    def close(self) -> None:
        try:
            os.close(self._to_worker_w)
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        os.close(self._from_worker_r)
