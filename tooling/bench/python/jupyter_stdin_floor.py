"""The floor of a Code Mode nested call on a Jupyter kernel: a bare stdin-channel round trip on the same kernel.

Usage: jupyter_stdin_floor.py URL KERNEL_ID CONNECTION_FILE (the token in JUPYTER_TOKEN). Reads commands on stdin, one
a line, and answers each with one JSON line on stdout:

  ws N W    one cell that calls input() W times untimed, then N times timed inside the kernel (perf_counter), each
            answered at once by this client with the prompt's own text: input_request -> input_reply over the
            server's WebSocket, jupyter_client's Session building the messages. The path a nested call of ours takes
            (kernel -> server -> WebSocket client -> kernel), with nothing of ours on it: the floor of the goal ratio.
  zmq N W   the same with jupyter_client's BlockingKernelClient on the connection file over ZeroMQ (skips the server;
            a reference).
  quit      exits.

The answer is {"per_call_ms": x}, or {"error": "..."}.
"""

from __future__ import annotations

import json
import os
import queue
import sys
from typing import Any

from jupyter_client import BlockingKernelClient
from jupyter_client.jsonutil import json_default
from jupyter_floor import WebSocketClient


def cell(count: int, warmup: int) -> str:
    return "\n".join([
        "import time as _bench_time",
        f"for _bench_i in range({warmup}):",
        "    input(str(_bench_i))",
        "_bench_started = _bench_time.perf_counter()",
        f"for _bench_i in range({count}):",
        "    assert input(str(_bench_i)) == str(_bench_i)",
        "print('elapsed', _bench_time.perf_counter() - _bench_started)",
    ])


def elapsed(text: str) -> float:
    for line in text.splitlines():
        if line.startswith("elapsed "):
            return float(line.split()[1])
    raise RuntimeError(f"no elapsed line in the cell's output: {text[-300:]!r}")


def over_websocket(client: WebSocketClient, code: str) -> float:
    message = client.session.msg("execute_request", {"code": code, "silent": False, "store_history": False,
                                                     "user_expressions": {}, "allow_stdin": True, "stop_on_error": True})
    message["channel"] = "shell"
    client.socket.send(json.dumps(message, default=json_default))
    msg_id = message["header"]["msg_id"]
    output, replied, idle = "", False, False
    while not (replied and idle):
        answer: dict[str, Any] = json.loads(client.socket.recv())
        if answer.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = answer["header"]["msg_type"]
        if kind == "input_request":
            reply = client.session.msg("input_reply", {"value": answer["content"]["prompt"]}, parent=answer["header"])
            reply["channel"] = "stdin"
            client.socket.send(json.dumps(reply, default=json_default))
        elif kind == "stream":
            output += answer["content"]["text"]
        elif kind == "execute_reply":
            if answer["content"].get("status") != "ok":
                raise RuntimeError(f"execute_reply {answer['content'].get('status')}: {answer['content'].get('evalue')}")
            replied = True
        elif kind == "status" and answer["content"].get("execution_state") == "idle":
            idle = True
    return elapsed(output)


def over_zmq(client: BlockingKernelClient, code: str) -> float:
    msg_id = client.execute(code, store_history=False, allow_stdin=True)
    output = ""
    while True:
        try:
            request = client.get_stdin_msg(timeout=0.001)
            client.input(request["content"]["prompt"])
            continue
        except queue.Empty:
            pass
        try:
            message = client.get_iopub_msg(timeout=0)
        except queue.Empty:
            continue
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        if message["header"]["msg_type"] == "stream":
            output += message["content"]["text"]
        elif message["header"]["msg_type"] == "status" and message["content"].get("execution_state") == "idle":
            return elapsed(output)


def main() -> int:
    url, kernel_id, connection_file = sys.argv[1:4]
    token = os.environ.get("JUPYTER_TOKEN", "")
    websocket: WebSocketClient | None = None
    zmq: BlockingKernelClient | None = None
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        try:
            kind, count, warmup = words[0], int(words[1]), int(words[2])
            code = cell(count, warmup)
            if kind == "ws":
                websocket = websocket or WebSocketClient(url, kernel_id, token)
                seconds = over_websocket(websocket, code)
            else:
                if zmq is None:
                    zmq = BlockingKernelClient(connection_file=connection_file)
                    zmq.load_connection_file()
                    zmq.start_channels()
                    zmq.wait_for_ready(timeout=60)
                seconds = over_zmq(zmq, code)
            answer: dict[str, Any] = {"per_call_ms": seconds * 1000 / count}
        except Exception as error:  # reported to the bench, which records it as the section's failure
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    if websocket is not None:
        websocket.close()
    if zmq is not None:
        zmq.stop_channels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
