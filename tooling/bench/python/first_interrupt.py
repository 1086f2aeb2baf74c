"""How long a worker takes to answer its first and second interrupt, optionally with CPU hogs running.

    .venv/bin/python tooling/bench/python/first_interrupt.py [--hogs N] [--idle SECONDS] [--workers K]

Each of K fresh workers runs one cell, idles for SECONDS (the worker warms its error path when it first idles), then
has two sleeping cells interrupted; the time is from the interrupt frame being written to the response being read.
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
    args = parser.parse_args()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        for _ in range(args.workers):
            worker = WorkerProcess()
            worker.execute("first = 1")
            time.sleep(args.idle)
            first, second = interrupt_ms(worker), interrupt_ms(worker)
            print(f"hogs {args.hogs}, idle {args.idle} s: first interrupt {first:.1f} ms, second {second:.1f} ms",
                  flush=True)
            worker.close()
    finally:
        for hog in hogs:
            hog.kill()


if __name__ == "__main__":
    main()
