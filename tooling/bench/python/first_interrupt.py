"""How long a worker takes to answer its first and second interrupt, optionally with CPU hogs running.

    .venv/bin/python tooling/bench/python/first_interrupt.py [--hogs N] [--idle SECONDS] [--workers K] [--no-first-cell]

Each of K fresh workers runs one cell (none with --no-first-cell: the interrupted cell is then the worker's very first
operation), idles for SECONDS, then has two sleeping cells interrupted; the time is from the interrupt frame being
written to the response being read. Every worker warms its error path before it says ready, so the first interrupt
should cost what the second does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[3] / "python"
sys.path.insert(0, str(PYTHON / "tests"))

from worker_process import WorkerProcess


def interrupt_ms(worker: WorkerProcess) -> float:
    request_id = worker.start("execute", {"code": "import time\ntime.sleep(100)"})
    time.sleep(0.3)
    started = time.perf_counter()
    worker.send({"type": "interrupt", "id": request_id})
    worker.response_to(request_id)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hogs", type=int, default=0)
    parser.add_argument("--idle", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--no-first-cell", action="store_true")
    args = parser.parse_args()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        for _ in range(args.workers):
            worker = WorkerProcess()
            if not args.no_first_cell:
                worker.execute("first = 1")
            time.sleep(args.idle)
            first, second = interrupt_ms(worker), interrupt_ms(worker)
            label = "no cell before" if args.no_first_cell else "one cell before"
            print(f"hogs {args.hogs}, idle {args.idle} s, {label}: first interrupt {first:.1f} ms, second {second:.1f} ms",
                  flush=True)
            worker.close()
    finally:
        for hog in hogs:
            hog.kill()


if __name__ == "__main__":
    main()
