"""Floors for execute("1+1") on a kernel that a Jupyter server runs: a bare execute_request round trip, no MCP.

Usage: jupyter_floor.py URL KERNEL_ID CONNECTION_FILE CELL (the token in JUPYTER_TOKEN). Reads commands on stdin, one
a line, and answers each with one JSON line on stdout:

  ws N W    W untimed, then N timed round trips over the server's WebSocket (/api/kernels/ID/channels): the message
            is built and signed by jupyter_client's Session, sent as the server's JSON wire format, and the round
            trip ends at the execute_reply and the IOPub status idle of that request, as jupyter_client's own
            execute does. This is the path ipython-mcp takes to the kernel, so it is the floor of the goal ratio.
  zmq N W   the same over ZeroMQ with jupyter_client's BlockingKernelClient on the kernel's connection file: the
            path a client on the kernel's own machine can take, bypassing the server (a reference, not the floor).
  quit      closes both clients and exits.

The answer is {"samples_ms": [...]}, or {"error": "..."}.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from typing import Any

from jupyter_client import BlockingKernelClient
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session
from websocket import create_connection


class WebSocketClient:
    """A minimal kernel client over the Jupyter server's WebSocket, JSON wire format (no subprotocol)."""

    def __init__(self, url: str, kernel_id: str, token: str) -> None:
        self.session = Session(key=b"", username="bench")
        ws_url = url.replace("http://", "ws://").replace("https://", "wss://").rstrip("/")
        self.socket = create_connection(
            f"{ws_url}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4().hex}",
            header=[f"Authorization: token {token}"],
            timeout=60,
        )

    def execute(self, code: str) -> None:
        message = self.session.msg(
            "execute_request",
            {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False, "stop_on_error": False},
        )
        message["channel"] = "shell"
        self.socket.send(json.dumps(message, default=json_default))
        msg_id = message["header"]["msg_id"]
        replied = idle = False
        while not (replied and idle):
            answer: dict[str, Any] = json.loads(self.socket.recv())
            if answer.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = answer["header"]["msg_type"]
            if kind == "execute_reply":
                if answer["content"].get("status") != "ok":
                    raise RuntimeError(f"execute_reply {answer['content'].get('status')}")
                replied = True
            elif kind == "status" and answer["content"].get("execution_state") == "idle":
                idle = True

    def close(self) -> None:
        self.socket.close()


class ZmqClient:
    """jupyter_client's BlockingKernelClient on the kernel's connection file."""

    def __init__(self, connection_file: str) -> None:
        self.client = BlockingKernelClient(connection_file=connection_file)
        self.client.load_connection_file()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def execute(self, code: str) -> None:
        msg_id = self.client.execute(code, store_history=True)
        reply = self.client.get_shell_msg(timeout=60)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=60)
        if reply["content"].get("status") != "ok":
            raise RuntimeError(f"execute_reply {reply['content'].get('status')}")
        while True:
            message = self.client.get_iopub_msg(timeout=60)
            if (
                message["parent_header"].get("msg_id") == msg_id
                and message["header"]["msg_type"] == "status"
                and message["content"].get("execution_state") == "idle"
            ):
                return

    def close(self) -> None:
        self.client.stop_channels()


def timed(client: WebSocketClient | ZmqClient, code: str, count: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        client.execute(code)
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        client.execute(code)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> int:
    url, kernel_id, connection_file, code = sys.argv[1:5]
    token = os.environ.get("JUPYTER_TOKEN", "")
    clients: dict[str, WebSocketClient | ZmqClient] = {}
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        try:
            kind, count, warmup = words[0], int(words[1]), int(words[2])
            if kind not in clients:
                clients[kind] = WebSocketClient(url, kernel_id, token) if kind == "ws" else ZmqClient(connection_file)
            answer: dict[str, Any] = {"samples_ms": timed(clients[kind], code, count, warmup)}
        except Exception as error:  # reported to the bench, which records it as the section's failure
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    for client in clients.values():
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
