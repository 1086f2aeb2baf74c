"""What the worker adds to run_cell, in process and without I/O: the bench's "layers" section.

Usage: python worker_layers.py ROUNDS CALLS CELL  ->  one JSON line on the real stdout.

Each round times CALLS executes of CELL three ways, in rotating order so drift hits all of them: the worker's own
path (ShellOwner.begin + execute + end, what Worker.handle runs around a request), the same plus encoding the
response frame with msgpack, and bare InteractiveShell.run_cell on the same shell. The differences are the
worker's own work per execute (capture set-up and settle, the result's value contract, the frame).
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    rounds, calls, cell = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    # The owner captures fd 1 and 2; keep a copy of the real stdout for the answer.
    answer_fd = os.dup(1)
    from ipython_mcp_worker.ipc.codec import CODEC_MSGPACK, encode_frame
    from ipython_mcp_worker.protocol.limits import Limits
    from ipython_mcp_worker.shell.owner import ShellOwner

    owner = ShellOwner(Limits())
    shell = owner.shell
    request_id = 0

    def owned() -> None:
        operation = owner.begin(None)
        owner.execute({"code": cell}, operation)
        owner.end()

    def owned_and_encoded() -> None:
        nonlocal request_id
        request_id += 1
        operation = owner.begin(None)
        result = owner.execute({"code": cell}, operation)
        owner.end()
        encode_frame({"type": "response", "id": request_id, "ok": True, "result": result}, CODEC_MSGPACK, 1 << 24)

    def bare() -> None:
        shell.run_cell(cell, store_history=True)

    loops = {"owner": owned, "owner_and_frame": owned_and_encoded, "run_cell": bare}
    for fn in loops.values():
        for _ in range(max(20, calls // 5)):
            fn()
    per_round: dict[str, list[float]] = {name: [] for name in loops}
    names = list(loops)
    for index in range(rounds):
        order = names[index % len(names):] + names[:index % len(names)]
        for name in order:
            fn = loops[name]
            started = time.perf_counter_ns()
            for _ in range(calls):
                fn()
            per_round[name].append((time.perf_counter_ns() - started) / calls / 1000)
    os.write(answer_fd, (json.dumps({"per_round_us": per_round}) + "\n").encode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
