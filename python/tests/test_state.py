"""--state FILE in a real worker process: save at shutdown, restore before ready, damaged files, caps, the magic."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from worker_process import WorkerProcess

from ipython_mcp_worker.state.snapshot_file import MAGIC, StateFileError, StateWriter, read_records

pytest.importorskip("dill")


def _worker(path: Path, restore: bool, **caps: Any) -> WorkerProcess:
    return WorkerProcess(extra={"state": {"path": str(path), "restore": restore, **caps}})


def _shutdown(worker: WorkerProcess) -> dict[str, Any]:
    """A graceful end: ``shutdown``, then the worker's save report, then its exit."""
    worker.send({"type": "shutdown"})
    report = worker.read()
    worker.close()
    assert report["type"] == "state_report", report
    return dict(report["report"])


def _value(worker: WorkerProcess, expression: str) -> Any:
    result = worker.execute(expression)
    return result["result"]["value"]


def test_names_survive_a_graceful_end_and_the_unpicklable_is_named(tmp_path: Path) -> None:
    path = tmp_path / "ns.state"
    first = _worker(path, restore=True)
    assert first.ready.get("state", {}).get("error") is None
    first.execute("x = 41\ndef f(a): return a + 1\nimport json as j\ndata = list(range(10**5))\n"
                  "g = (i for i in range(3))\nh = lambda v: v * 2\n"
                  "def tool(a: int) -> int:\n    return a * 3\n")
    assert first.request("register_tool", {"name": "tool"})["ok"]
    saved = _shutdown(first)
    assert saved["ok"] and {"x", "f", "j", "data", "h", "tool"} <= set(saved["names"]), saved
    assert [item["name"] for item in saved["skipped"]] == ["g"]
    assert "generator" in saved["skipped"][0]["reason"]
    assert saved["tools"] == ["tool"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600

    second = _worker(path, restore=True)
    try:
        restored = second.ready["state"]
        assert restored["ok"] and restored["names_count"] == 6 and restored["tools"] == ["tool"], restored
        assert restored["skipped"] == saved["skipped"]  # the save's skipped names, named again by the restore
        assert _value(second, "[f(x), j.dumps([1]), len(data), h(21)]") == [42, "[1]", 10**5, 42]
        fingerprint = second.request("discover", {})["result"]["tools"][0]["fingerprint"]
        called = second.request("call_tool", {"tool_name": "tool", "arguments": {"a": 2}, "fingerprint": fingerprint})
        assert called["ok"] and called["result"]["value"] == 6, called
    finally:
        second.close()


def test_a_worker_told_not_to_restore_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "ns.state"
    first = _worker(path, restore=True)
    first.execute("x = 1")
    _shutdown(first)
    replacement = _worker(path, restore=False)
    try:
        assert "state" not in replacement.ready
        assert replacement.request("inspect", {"name": "x"})["ok"] is False
    finally:
        replacement.close()


@pytest.mark.parametrize("damage", ["truncated", "random", "flipped"])
def test_a_damaged_file_starts_empty_with_the_reason(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "ns.state"
    first = _worker(path, restore=True)
    first.execute("x = 41\nblob = bytes(100000)")
    _shutdown(first)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "random":
        path.write_bytes(os.urandom(4096))
    else:
        path.write_bytes(data[:-200] + bytes([data[-200] ^ 0xFF]) + data[-199:])
    worker = _worker(path, restore=True)
    try:
        report = worker.ready["state"]
        assert report["ok"] is False and report["names_count"] == 0
        word = {"truncated": "truncated", "random": "not an ipython-mcp state file", "flipped": "corrupt"}[damage]
        assert word in report["error"], report
        assert worker.request("inspect", {"name": "x"})["ok"] is False
        assert path.read_bytes()[:4] == (data if damage != "random" else path.read_bytes())[:4]
    finally:
        worker.close()


def test_the_size_cap_keeps_the_small_names_and_reports_the_large(tmp_path: Path) -> None:
    path = tmp_path / "ns.state"
    worker = _worker(path, restore=True, max_bytes=1 << 20)
    worker.execute("small = 'abc'\nalso = [1, 2, 3]\nbig = bytes(3 << 20)")
    saved = _shutdown(worker)
    assert set(saved["names"]) == {"small", "also"}
    assert saved["skipped"] == [{"name": "big", "reason": "not saved: over the 1 MiB size cap"}]
    assert saved["bytes"] < 1 << 20


def test_the_magic_saves_now_and_a_failed_save_keeps_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "ns.state"
    worker = _worker(path, restore=True)
    try:
        result = worker.execute("x = 5\n%ipython_mcp_save")
        assert "saved 1 name(s) to ns.state (x)" in result["stdout"], result
        before = path.read_bytes()
        # The next save cannot create its temporary file (a directory is in the way; chmod does not stop root).
        (tmp_path / f".ns.state.{worker.process.pid}.tmp").mkdir()
        result = worker.execute("y = 6\n%ipython_mcp_save")
        assert "the snapshot was not written" in result["stdout"], result
        assert path.read_bytes() == before
    finally:
        worker.close()


def test_no_state_is_no_change(tmp_path: Path) -> None:
    worker = WorkerProcess()
    try:
        assert "state" not in worker.ready
        result = worker.request("execute", {"code": "%ipython_mcp_save"})
        assert result["result"].get("error") is not None  # no such magic without --state
    finally:
        worker.close()
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"M", b"P", b"T"]), st.text(max_size=20), st.binary(max_size=300)),
                max_size=8), st.integers(min_value=0, max_value=4000))
def test_records_round_trip_and_every_cut_is_refused(tmp_path_factory: Any, records: list[tuple[bytes, str, bytes]],
                                                      cut: int) -> None:
    path = tmp_path_factory.mktemp("records") / "f.state"
    writer = StateWriter(str(path))
    for kind, name, payload in records:
        writer.record(kind, name, payload)
    writer.commit()
    assert [(kind, name, source.read()) for kind, name, source in read_records(str(path))] == records
    data = path.read_bytes()
    if cut < len(data):
        path.write_bytes(data[:cut])
        with pytest.raises(StateFileError):
            for _kind, _name, source in read_records(str(path)):
                source.read()
    assert data.startswith(MAGIC)


def test_the_time_cap_stops_the_save_and_names_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "ns.state"
    worker = _worker(path, restore=True, save_seconds=1e-6)
    worker.execute("a = list(range(1000))\nb = 'x' * 1000\nimport json")
    saved = _shutdown(worker)
    assert saved["ok"] and saved["names"] == ["json"]  # a module is an import line, written before any value
    assert {item["name"] for item in saved["skipped"]} == {"a", "b"}
    assert all("time cap was reached" in item["reason"] for item in saved["skipped"])
    again = _worker(path, restore=True)
    try:
        assert again.ready["state"]["ok"] and again.ready["state"]["names"] == ["json"]
    finally:
        again.close()


def test_a_restore_that_hangs_is_cut_at_the_time_cap_and_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "ns.state"
    first = _worker(path, restore=True, save_seconds=2)
    first.execute("class Slow:\n    def __setstate__(self, state):\n        __import__('time').sleep(60)\n"
                  "slow = Slow()\nslow.x = 1\nkept = 5")
    saved = _shutdown(first)
    assert "slow" in saved["names"], saved
    again = _worker(path, restore=True, save_seconds=2)
    try:
        report = again.ready["state"]
        assert report["ok"] is False and "longer than the 2 s time cap" in (report["error"] or ""), report
        assert again.request("inspect", {"name": "kept"})["ok"] is False  # all or nothing
        assert again.execute("1 + 1")["result"]["value"] == 2
    finally:
        again.close()
