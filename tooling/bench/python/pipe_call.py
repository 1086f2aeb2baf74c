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

from pipe_echo import read_exact, read_frame, write_frame

_FRAME = (64).to_bytes(4, "big") + b"e" + b"x" * 63


def _echo_once() -> None:
    os.write(1, _FRAME)
    read_exact(0, len(_FRAME))


def _tool_calls():
    """The minimal tool call: msgpack packs the call and unpacks the answer (imported once, as the worker does)."""
    import msgpack

    pack, unpack = msgpack.packb, msgpack.unpackb

    def tool_call(call_id: int, **arguments: object) -> object:
        write_frame(1, b"m" + pack({"type": "tool_call", "call_id": call_id, "name": "echo", "arguments": arguments}))
        return json.loads(unpack(read_frame(0)[1:])["value_json"])

    return tool_call


def main() -> int:
    tool_call = _tool_calls() if "--calls" in sys.argv[1:] else None
    clock = time.perf_counter
    while True:
        try:
            control = read_frame(0)
        except EOFError:
            return 0
        count, warmup = (int(part) for part in control[1:].split())
        samples = []
        for index in range(warmup + count):
            started = clock()
            if tool_call is not None:
                assert tool_call(index, x=index)["x"] == index
            else:
                _echo_once()
            if index >= warmup:
                samples.append((clock() - started) * 1000)
        write_frame(1, b"r" + json.dumps(samples).encode())


if __name__ == "__main__":
    raise SystemExit(main())
