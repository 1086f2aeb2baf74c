"""--state save and restore against dill.dump / dill.load of the same objects, in one process, same run.

Usage: state_bench.py DIRECTORY [--gib N] [--small N] [--reps R]. Prints one JSON object: per case, the medians
(ms) of our save and restore (StateStore, the worker's own code) and of dill.dump / dill.load of one dict holding
the same names, and their ratios. Both sides write to a file in DIRECTORY; ours also fsyncs and renames (its
atomicity), dill.dump does not, so a dill.dump followed by fsync is measured too (``save_ratio_fsync``). Cases: numpy arrays totalling N GiB (8 names), N small objects in one list, and
N small objects as N/10 separate names (the per-name cost of one record each).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))


def _shell() -> Any:
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance()


def _store(shell: Any, path: str) -> Any:
    from ipython_mcp_worker.state.snapshot import StateConfig, StateStore

    class _NoTools:
        def snapshot(self) -> list[dict[str, Any]]:
            return []

    def user_names() -> list[str]:
        hidden = shell.user_ns_hidden
        return sorted(name for name, value in shell.user_ns.items()
                      if not name.startswith("_") and not (name in hidden and hidden[name] is value))

    config = StateConfig({"path": path, "restore": True, "max_bytes": 1 << 40, "save_seconds": 3600})
    return StateStore(config, shell, user_names, lambda name: False, _NoTools())


def _timed(action: Any) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def _case(shell: Any, directory: Path, label: str, values: dict[str, Any], reps: int) -> dict[str, Any]:
    import dill  # type: ignore[import-untyped,unused-ignore]

    namespace = shell.user_ns
    for name in [name for name in list(namespace) if name.startswith("bench_")]:
        del namespace[name]
    namespace.update(values)
    ours_path = str(directory / f"{label}.state")
    dill_path = directory / f"{label}.dill"
    store = _store(shell, ours_path)
    times: dict[str, list[float]] = {"save": [], "restore": [], "dill_dump": [], "dill_dump_fsync": [], "dill_load": []}
    for _ in range(reps):
        # Interleaved, so load drift touches both sides alike.
        report: dict[str, Any] = {}
        times["save"].append(_timed(lambda: report.update(store.save())))
        if report.get("error") or report.get("skipped_count"):
            raise SystemExit(f"save failed: {report}")

        def dump() -> None:
            with open(dill_path, "wb") as file:
                dill.dump(values, file, protocol=5)

        times["dill_dump"].append(_timed(dump))

        def durable_dump() -> None:
            # The same write made durable, as a save is (fsync before the rename): the disk's share of a save.
            with open(dill_path, "wb") as file:
                dill.dump(values, file, protocol=5)
                file.flush()
                os.fsync(file.fileno())

        times["dill_dump_fsync"].append(_timed(durable_dump))
        for name in values:
            del namespace[name]
        times["restore"].append(_timed(lambda: report.update(store.restore())))
        if report.get("names_count") != len(values):
            raise SystemExit(f"restore failed: {report}")

        def load() -> None:
            with open(dill_path, "rb") as file:
                dill.load(file)

        times["dill_load"].append(_timed(load))
    medians = {key: statistics.median(samples) for key, samples in times.items()}
    result = {
        "label": label,
        "names": len(values),
        "bytes": os.path.getsize(ours_path),
        "dill_bytes": os.path.getsize(dill_path),
        "median_ms": medians,
        "save_ratio": medians["save"] / medians["dill_dump"],
        "save_ratio_fsync": medians["save"] / medians["dill_dump_fsync"],
        "restore_ratio": medians["restore"] / medians["dill_load"],
    }
    for name in values:
        namespace.pop(name, None)
    os.unlink(ours_path)
    os.unlink(dill_path)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()
    import numpy

    shell = _shell()
    directory = Path(options.directory)
    cases = []
    per_array = int(options.gib * (1 << 30) / 8 / 8)
    arrays = {f"bench_array_{index}": numpy.full(per_array, float(index)) for index in range(8)}
    cases.append(_case(shell, directory, "numpy", arrays, options.reps))
    del arrays
    small = [{"id": index, "name": f"item-{index}", "tags": (index % 7, "x")} for index in range(options.small)]
    cases.append(_case(shell, directory, "small_list", {"bench_small": small}, options.reps))
    chunk = 10
    names = {f"bench_small_{index}": small[index * chunk:(index + 1) * chunk] for index in range(options.small // chunk)}
    cases.append(_case(shell, directory, "small_names", names, options.reps))
    print(json.dumps({"cases": cases}))


if __name__ == "__main__":
    main()
