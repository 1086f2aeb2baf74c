"""The floor: InteractiveShell.run_cell of the same cell, in process, configured like the worker's shell.

Usage: python floor.py N WARMUP CELL  ->  one JSON line {"samples_ms": [...], "ipython": "..."} on stdout.
History is off (as in the worker); the displayhook's "Out[n]" text goes to an in-memory sink, so terminal I/O is
not part of the figure.
"""

from __future__ import annotations

import io
import json
import sys
import time


def main() -> int:
    count, warmup, cell = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    import IPython
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    real_stdout = sys.stdout
    sink = io.StringIO()
    sys.stdout = sink
    samples = []
    try:
        for index in range(warmup + count):
            started = time.perf_counter_ns()
            result = shell.run_cell(cell, store_history=True)
            elapsed = time.perf_counter_ns() - started
            if not result.success:
                raise SystemExit(f"floor cell failed: {result.error_in_exec or result.error_before_exec!r}")
            if index >= warmup:
                samples.append(elapsed / 1e6)
            if sink.tell() > 1 << 20:
                sink.seek(0)
                sink.truncate()
    finally:
        sys.stdout = real_stdout
    print(json.dumps({"samples_ms": samples, "ipython": IPython.__version__, "python": sys.version.split()[0]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
