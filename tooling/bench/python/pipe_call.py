"""The transport floor in the nested call's own direction: Python calls, Node answers.

A Code Mode nested call starts in Python: the kernel writes a frame, sleeps until Node answers, and reads the
answer. pipe_echo.py times the other direction, from Node. Here the loop runs in Python, as a nested call's does:
for each control frame ``c<count> <warmup>`` from Node, it makes warmup + count round trips of a 64-byte frame
(``e`` + 63 bytes) that Node writes straight back, timing each of the last ``count`` with perf_counter, then
answers ``r`` + the samples in ms as JSON.

With ``--calls`` each round trip is instead the least a tool call can be: a Python function with a keyword
argument packs ``{"type", "call_id", "name", "arguments"}`` with msgpack (as the worker does), Node unpacks it,
awaits a trivial async tool, and packs ``{"type", "call_id", "ok", "value_json"}`` back, and Python unpacks it and
parses the value's JSON text (``m`` + msgpack frames; no schema, no validation, no bookkeeping).
"""

from __future__ import annotations

import json
import os
import sys
import time

from pipe_echo import read_exact

_FRAME = (64).to_bytes(4, "big") + b"e" + b"x" * 63


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def _tool_call(call_id: int, **arguments: object) -> object:
    import msgpack

    body = b"m" + msgpack.packb({"type": "tool_call", "call_id": call_id, "name": "echo", "arguments": arguments})
    os.write(1, _frame(body))
    reply = msgpack.unpackb(read_exact(0, int.from_bytes(read_exact(0, 4), "big"))[1:])
    return json.loads(reply["value_json"])


def _echo_once() -> None:
    os.write(1, _FRAME)
    read_exact(0, len(_FRAME))


def main() -> int:
    calls = "--calls" in sys.argv[1:]
    clock = time.perf_counter
    while True:
        try:
            control = read_exact(0, int.from_bytes(read_exact(0, 4), "big"))
        except EOFError:
            return 0
        count, warmup = (int(part) for part in control[1:].split())
        samples = []
        for index in range(warmup + count):
            started = clock()
            if calls:
                assert _tool_call(index, x=index)["x"] == index
            else:
                _echo_once()
            if index >= warmup:
                samples.append((clock() - started) * 1000)
        os.write(1, _frame(b"r" + json.dumps(samples).encode()))


if __name__ == "__main__":
    raise SystemExit(main())
