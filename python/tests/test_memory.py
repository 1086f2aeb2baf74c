"""The worker's half of the memory guard, in a real worker process: the RLIMIT_DATA backstop turns one huge
allocation into memory_limit with the namespace intact, and an interrupt for memory frees what the stopped cell
left behind before the worker answers. Every allocation here is bounded (at most ~600 MiB resident)."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from worker_process import WorkerProcess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA and /proc are Linux's")

MIB = 2**20
BACKSTOP = 1400 * MIB


def _rss_mib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def guarded():
    process = WorkerProcess(extra={"data_limit_bytes": BACKSTOP})
    yield process
    process.close()


def test_backstop_sets_the_soft_data_limit_only(guarded):
    soft, hard = guarded.execute("import resource\nresource.getrlimit(resource.RLIMIT_DATA)")["result"]["value"]
    assert soft == BACKSTOP
    import resource

    assert hard == resource.getrlimit(resource.RLIMIT_DATA)[1]


def test_one_huge_allocation_is_memory_limit_and_keeps_the_namespace(guarded):
    guarded.execute("keep = 41")
    response = guarded.request("execute", {"code": "big = b'x' * 2**31"})
    assert response["ok"] is False
    assert response["error"]["code"] == "memory_limit"
    assert response["error"]["details"] == {"trigger": "allocation"}
    assert guarded.execute("keep + 1")["result"]["value"] == 42
    assert guarded.execute("'big' in globals()")["result"]["value"] is False


def test_a_numpy_style_memory_error_subclass_counts_too(guarded):
    code = "class ArrayMemoryError(MemoryError):\n    pass\nraise ArrayMemoryError('Unable to allocate 3 GiB')"
    assert guarded.request("execute", {"code": code})["error"]["code"] == "memory_limit"


def test_a_call_that_runs_out_of_memory_is_memory_limit(guarded):
    guarded.execute("def grab():\n    return bytearray(2**31)")
    response = guarded.request("call_function", {"name": "grab", "arguments": {}})
    assert response["ok"] is False and response["error"]["code"] == "memory_limit"


def test_without_the_guard_memory_error_stays_an_ordinary_exception():
    process = WorkerProcess()
    try:
        result = process.execute("raise MemoryError('explicit')")
        assert result["status"] == "error" and result["error"]["type"] == "MemoryError"
    finally:
        process.close()


def test_threads_and_ordinary_arrays_still_work_under_the_backstop(guarded):
    # Thread stacks (8 MiB each) and allocations count against RLIMIT_DATA: the backstop leaves room for both.
    code = (
        "import threading\n"
        "done = threading.Event()\n"
        "threads = [threading.Thread(target=done.wait) for _ in range(64)]\n"
        "[t.start() for t in threads]\n"
        "block = bytearray(300 * 2**20)\n"
        "done.set()\n"
        "[t.join() for t in threads]\n"
        "del block\n"
        "len(threads)"
    )
    assert guarded.execute(code)["result"]["value"] == 64


def test_a_memory_interrupt_frees_the_stopped_cells_frames_before_answering(guarded):
    # The chunks are a local of grow(): only the traceback of the stopped cell keeps them alive.
    pid = guarded.hello["pid"]
    guarded.execute("keep = 41")
    code = (
        "def grow():\n"
        "    chunks = []\n"
        "    while len(chunks) < 64:\n"
        "        chunks.append(b'x' * 2**23)\n"
        "    import time\n"
        "    time.sleep(60)\n"
        "grow()"
    )
    request_id = guarded.next_id
    peak: list[int] = []

    def interrupt_when_grown() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _rss_mib(pid) < 500:
            time.sleep(0.02)
        peak.append(_rss_mib(pid))
        guarded.send({"type": "interrupt", "id": request_id, "reason": "memory_limit"})

    thread = threading.Thread(target=interrupt_when_grown)
    thread.start()
    response = guarded.request("execute", {"code": code})
    thread.join()
    assert peak and peak[0] >= 500
    assert response["ok"] is False
    assert response["error"] == {"code": "memory_limit", "message": "the operation was stopped by the memory guard",
                                 "details": {"trigger": "watch"}}
    assert _rss_mib(pid) < 200
    assert guarded.execute("keep")["result"]["value"] == 41


def test_a_plain_interrupt_still_keeps_its_traceback(guarded):
    request_id = guarded.next_id
    timer = threading.Timer(0.3, lambda: guarded.send({"type": "interrupt", "id": request_id}))
    timer.start()
    response = guarded.request("execute", {"code": "import time\ntime.sleep(60)"})
    timer.join()
    assert response["ok"] and response["result"]["error"]["kind"] == "interrupted"
    assert guarded.execute("import sys\nsys.last_traceback is not None")["result"]["value"] is True


def test_a_memory_interrupt_for_a_finished_request_is_ignored(guarded):
    finished = guarded.request("execute", {"code": "1"})
    guarded.send({"type": "interrupt", "id": finished["id"], "reason": "memory_limit"})
    result = guarded.execute("import time\ntime.sleep(0.3)\n'completed'")
    assert result["status"] == "ok" and result["result"]["value"] == "completed"
