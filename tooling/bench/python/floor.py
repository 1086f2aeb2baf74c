"""The floor: InteractiveShell.run_cell of the same cell, in process, configured like the worker's shell.

Usage: python floor.py N WARMUP CELL  ->  one JSON line {"samples_ms": [...], "ipython": "..."} on stdout.
       python floor.py --serve WARMUP CELL  ->  warms up, prints one JSON line {"ready": true, "ipython": ...}, then
       for every line "N [W]" read from stdin runs W untimed and N timed cells and answers one JSON line
       {"samples_ms": [...]}; exits at EOF. The bench's interleaved rounds keep one warm floor process this way.
       python floor.py --frames  ->  the composed floor's child: for every length-prefixed JSON frame {"code"} on
       stdin, runs the cell and writes one frame {"execution_count", "value", "repr"} on stdout; exits at EOF. Its
       shell records values without formatting or printing them (recording_hook).
History is off (as in the worker); the displayhook's "Out[n]" text goes to an in-memory sink, so terminal I/O is
not part of the figure.
"""

from __future__ import annotations

import io
import json
import sys
import time


def make_shell():
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.HistoryManager.hist_file = ":memory:"
    return InteractiveShell.instance(config=config)


def trim(sink: io.StringIO) -> None:
    """Empties the displayhook's sink past 1 MiB, so a long loop does not grow it."""
    if sink.tell() > 1 << 20:
        sink.seek(0)
        sink.truncate()


def timed_cells(shell, cell: str, count: int, warmup: int, sink: io.StringIO) -> list[float]:
    samples = []
    for index in range(warmup + count):
        started = time.perf_counter_ns()
        result = shell.run_cell(cell, store_history=True)
        elapsed = time.perf_counter_ns() - started
        if not result.success:
            raise SystemExit(f"floor cell failed: {result.error_in_exec or result.error_before_exec!r}")
        if index >= warmup:
            samples.append(elapsed / 1e6)
        trim(sink)
    return samples


def facts() -> dict:
    import IPython

    return {"ipython": IPython.__version__, "python": sys.version.split()[0]}


def serve(warmup: int, cell: str) -> int:
    shell = make_shell()
    real_stdout = sys.stdout
    sink = io.StringIO()

    def answer(payload: dict) -> None:
        real_stdout.write(json.dumps(payload) + "\n")
        real_stdout.flush()

    sys.stdout = sink
    try:
        timed_cells(shell, cell, 0, warmup, sink)
        answer({"ready": True, **facts()})
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            count = int(words[0])
            block_warmup = int(words[1]) if len(words) > 1 else 0
            answer({"samples_ms": timed_cells(shell, cell, count, block_warmup, sink)})
    finally:
        sys.stdout = real_stdout
    return 0


def recording_hook(shell):
    """A display hook that records the cell's value (``_``, ``Out``, ExecutionResult.result) as IPython's does,
    without formatting or printing it: the least an embedding that returns values instead of printing them does.
    IPython's default hook computes every display format of the value and prints ``Out[n]``, which costs about
    300 µs per cell here and which no worker returning values needs."""
    from IPython.core.displayhook import DisplayHook

    class RecordingHook(DisplayHook):
        def __call__(self, result=None):
            self.check_for_underscore()
            if result is not None and not self.quiet():
                self.update_user_ns(result)
                self.fill_exec_result(result)

    hook = RecordingHook(shell=shell, cache_size=shell.cache_size)
    shell.displayhook = hook
    shell.display_trap.hook = hook


def frames() -> int:
    """The least worker: a frame in, run_cell, a frame out; no capture, no value contract beyond JSON or repr. The
    value is recorded by a hook that does not format or print it (recording_hook), as a worker returning values does."""
    from pipe_echo import read_frame, write_frame

    shell = make_shell()
    recording_hook(shell)
    sink = io.StringIO()
    sys.stdout = sink
    while True:
        try:
            code = json.loads(read_frame(0))["code"]
        except EOFError:
            return 0
        result = shell.run_cell(code, store_history=True)
        value = result.result
        reply = {"execution_count": result.execution_count, "value": value, "repr": repr(value)}
        write_frame(1, json.dumps(reply, default=repr).encode())
        trim(sink)


def main() -> int:
    if sys.argv[1] == "--frames":
        return frames()
    if sys.argv[1] == "--serve":
        return serve(int(sys.argv[2]), sys.argv[3])
    count, warmup, cell = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    shell = make_shell()
    real_stdout = sys.stdout
    sink = io.StringIO()
    sys.stdout = sink
    try:
        samples = timed_cells(shell, cell, count, warmup, sink)
    finally:
        sys.stdout = real_stdout
    print(json.dumps({"samples_ms": samples, **facts()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
