"""A real worker subprocess driven over its fd 3 / fd 4 frames, for the worker's own tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ipython_mcp_worker.codec import CODEC_JSON, CODEC_MSGPACK, FrameReader, encode_frame

PYTHON_ROOT = Path(__file__).resolve().parents[1]


class WorkerProcess:
    def __init__(self, codec: str = "msgpack", limits: dict[str, int] | None = None,
                 extra: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> None:
        to_worker_r, self._to_worker_w = os.pipe()
        self._from_worker_r, from_worker_w = os.pipe()

        def place_fds() -> None:
            os.dup2(to_worker_r, 3)
            os.dup2(from_worker_w, 4)

        self.process = subprocess.Popen(
            [sys.executable, "-m", "ipython_mcp_worker"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=place_fds, pass_fds=(3, 4), cwd=str(PYTHON_ROOT), env={**os.environ, **(env or {})},
        )
        os.close(to_worker_r)
        os.close(from_worker_w)
        self.limit = (limits or {}).get("max_ipc_message_bytes", 4 * 1024 * 1024)
        self.reader = FrameReader(self._from_worker_r, self.limit)
        self.codec = CODEC_MSGPACK if codec == "msgpack" else CODEC_JSON
        self.next_id = 1
        self.hello = self.read()
        self.send({"type": "configure", "protocol": 1, "codec": codec, "limits": limits or {},
                   "library_paths": [], "preload_modules": [], "module_aliases": {},
                   "reserved_tool_names": [], **(extra or {})})
        self.ready = self.read()

    def send(self, message: dict[str, Any]) -> None:
        os.write(self._to_worker_w, encode_frame(message, self.codec, 1 << 30))

    def read(self) -> dict[str, Any]:
        message = self.reader.read()
        assert message is not None, "worker closed its channel"
        return message

    def request(self, op: str, params: dict[str, Any] | None = None, stream: bool = False,
                events: list[dict[str, Any]] | None = None,
                tool_handler: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> dict[str, Any]:
        """Send one request and read until its response. ``tool_handler`` answers ``tool_call`` messages:
        it returns the ``tool_result`` fields (``ok`` and ``value`` or ``message``), or None to leave the call
        unanswered."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"type": "request", "id": request_id, "op": op, "params": params or {}, "stream": stream})
        while True:
            message = self.read()
            if message["type"] == "response" and message["id"] == request_id:
                return message
            if events is not None:
                events.append(message)
            if message["type"] == "tool_call" and tool_handler is not None:
                answer = tool_handler(message)
                if answer is not None:
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
