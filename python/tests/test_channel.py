"""Who reads fd 3 when: the main thread between requests and during a nested call, the reader thread while an
operation runs user code (channel.py, gate.py). Every test runs with both gates: epoll (Linux) and the wake-up
pipe used where there is no epoll."""

from __future__ import annotations

import json
import os
import random
import struct
import threading
import time

import pytest
from worker_process import WorkerProcess

# The worker as usual, but without select.epoll: the channel then falls back to its wake-up-pipe gate.
_WITHOUT_EPOLL = ["-c", "import select, runpy; del select.epoll; "
                  "runpy.run_module('ipython_mcp_worker', run_name='__main__', alter_sys=True)"]
ANYTHING = {"python_name": "anything", "tool_name": "anything", "doc": None, "parameters": None}


@pytest.fixture(params=["epoll", "pipe"])
def worker(request):
    process = WorkerProcess(python_args=_WITHOUT_EPOLL if request.param == "pipe" else None)
    try:
        gate = process.execute("import gc\nfrom ipython_mcp_worker.ipc.channel import Channel\n"
                               "[type(o._gate).__name__ for o in gc.get_objects() if isinstance(o, Channel)]")
        assert gate["result"]["value"] == ["EpollGate" if request.param == "epoll" else "PipeGate"]
        yield process
    finally:
        process.close()


def _context_switches(pid: int) -> int:
    """Voluntary and involuntary context switches of every thread of the process: each wake-up counts."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                total += sum(int(line.split()[1]) for line in status if "ctxt_switches" in line)
        except FileNotFoundError:
            pass  # a thread that ended meanwhile
    return total


def test_requests_sent_back_to_back_are_all_answered_in_order(worker):
    # Some arrive while the main thread waits for the next one, some while the reader thread owns fd 3 (they are
    # queued): either way they run one after the other, in the order sent.
    ids = [worker.start("execute", {"code": f"import time\ntime.sleep(0.002)\n{n} * 2"}) for n in range(40)]
    for n, request_id in enumerate(ids):
        response = worker.read()
        assert response["type"] == "response" and response["id"] == request_id, response
        assert response["result"]["result"]["value"] == n * 2


def test_a_queued_request_still_hears_its_interrupt(worker):
    # The second request comes while the first runs, so the reader thread queues it; the worker must still be
    # listening for interrupts while it runs it.
    watchdog = threading.Timer(20, worker.process.kill)  # a deaf worker fails the test instead of hanging it
    watchdog.start()
    try:
        first = worker.start("execute", {"code": "import time\ntime.sleep(0.3)\n'first'"})
        second = worker.start("execute", {"code": "while True:\n    pass"})
        response = worker.read()
        assert response["id"] == first and response["result"]["result"]["value"] == "first"
        time.sleep(0.2)
        worker.send({"type": "interrupt", "id": second})
        response = worker.read()
        assert response["id"] == second and response["result"]["error"]["kind"] == "interrupted", response
    finally:
        watchdog.cancel()
    assert worker.execute("'after'")["result"]["value"] == "after"


def test_interrupts_at_any_moment_of_a_request_never_reach_the_next_one(worker):
    # An interrupt lands before its request is armed, while it runs, or after it ended (stale): the request is
    # completed or interrupted, and the next one is never hit.
    rng = random.Random(18)
    for n in range(60):
        request_id = worker.start("execute", {"code": f"import time\ntime.sleep(0.003)\n{n}"})
        timer = threading.Timer(rng.uniform(0, 0.006), worker.send, args=({"type": "interrupt", "id": request_id},))
        timer.start()
        response = worker.read()
        timer.join()
        assert response["id"] == request_id, response
        if not response["ok"]:  # interrupted before or after the cell itself ran
            assert response["error"]["code"] == "operation_cancelled", response
            continue
        result = response["result"]
        assert result["status"] == "ok" and result["result"]["value"] == n or \
            result["error"]["kind"] == "interrupted", result
    assert worker.execute("'untouched'")["result"]["value"] == "untouched"


def test_an_interrupt_read_while_idle_stops_its_request_when_it_comes(worker):
    # The main thread reads the interrupt itself while it waits; it is kept for its request, as the reader thread
    # would keep it (Interrupter.request), and stops that request once armed.
    request_id = worker.next_id
    worker.send({"type": "interrupt", "id": request_id})
    time.sleep(0.1)
    started = time.monotonic()
    assert worker.start("execute", {"code": "while True:\n    pass"}) == request_id
    response = worker.read()
    assert time.monotonic() - started < 5
    assert response["id"] == request_id
    # Armed with its interrupt already there, it stops before its cell starts (or, at the latest, inside it).
    assert response["ok"] is False and response["error"]["code"] == "operation_cancelled" or \
        response["result"]["error"]["kind"] == "interrupted", response
    assert worker.execute("1 + 1")["result"]["value"] == 2


def test_frames_between_requests_are_handled_like_during_one(worker):
    worker.send({"type": "tool_result", "call_id": 99, "ok": True, "value_json": "1"})  # stale: dropped
    worker.send({"type": "interrupt", "id": 10_000})  # for no request that comes: forgotten
    worker.send({"type": "no_such_frame"})
    error = worker.read()
    assert error["type"] == "protocol_error" and "no_such_frame" in error["message"]
    os.write(worker._to_worker_w, struct.pack(">I", 3) + b"\x09{}")  # an unknown codec byte
    error = worker.read()
    assert error["type"] == "protocol_error" and error["code"] == "protocol_error"
    oversized = b"\x01" + b" " * (worker.limit + 10)
    os.write(worker._to_worker_w, struct.pack(">I", len(oversized)) + oversized)
    error = worker.read()
    assert error["type"] == "protocol_error" and error["code"] == "message_too_large"
    assert worker.execute("'still here'")["result"]["value"] == "still here"


def test_a_request_right_after_a_nested_call_run_and_an_interrupt_between_calls(worker):
    assert worker.request("define_tools", {"tools": [ANYTHING]})["ok"]

    def answer(message):
        return {"ok": True, "value": message["arguments"]["n"]}

    response = worker.request("run_code", {"code": "sum(anything(n=n) for n in range(50))"}, tool_handler=answer)
    assert response["result"]["result"]["value"] == sum(range(50))
    assert worker.execute("'next'")["result"]["value"] == "next"
    # Between calls the reader thread owns fd 3 again: an interrupt stops busy code at once.
    request_id = worker.start("run_code", {"code": "anything(n=1)\nwhile True:\n    pass"})
    call = worker.read()
    assert call["type"] == "tool_call"
    worker.send({"type": "tool_result", "call_id": call["call_id"], "ok": True, "value_json": "1"})
    time.sleep(0.2)
    started = time.monotonic()
    worker.send({"type": "interrupt", "id": request_id})
    response = worker.read()
    assert time.monotonic() - started < 2
    assert response["id"] == request_id and response["result"]["error"]["type"] == "KeyboardInterrupt"


def test_interrupts_at_any_moment_of_a_loop_of_nested_calls_always_stop_it(worker):
    # Interrupts land while the main thread takes fd 3 over, reads an answer, hands fd 3 back or runs code
    # between calls: each run stops (nothing is left holding fd 3) and the worker goes on hearing interrupts.
    assert worker.request("define_tools", {"tools": [ANYTHING], "max_tool_calls": 10**7})["ok"]
    rng = random.Random(18)
    watchdog = threading.Timer(60, worker.process.kill)  # a stuck worker fails the test instead of hanging it
    watchdog.start()
    try:
        for _ in range(25):
            request_id = worker.next_id
            timer = threading.Timer(rng.uniform(0.001, 0.02), worker.send, args=({"type": "interrupt", "id": request_id},))
            timer.start()
            response = worker.request("run_code", {"code": "while True:\n    anything(n=1)"},
                                      tool_handler=lambda message: {"ok": True, "value": 1})
            timer.join()
            assert response["id"] == request_id
            assert response["ok"] is False and response["error"]["code"] == "operation_cancelled" or \
                response["result"]["error"]["type"] == "KeyboardInterrupt", response
    finally:
        watchdog.cancel()
    response = worker.request("run_code", {"code": "sum(anything(n=n) for n in range(5))"},
                              tool_handler=lambda message: {"ok": True, "value": message["arguments"]["n"]})
    assert response["result"]["result"]["value"] == 10


def test_no_periodic_wake_ups_while_idle_or_waiting_for_a_tool_result(worker):
    pid = worker.process.pid
    before = _context_switches(pid)
    time.sleep(0.5)
    assert _context_switches(pid) - before < 25  # idle: nothing wakes

    assert worker.request("define_tools", {"tools": [ANYTHING]})["ok"]
    # The first answer comes at once (the reader thread has woken for a frame during a call, as in any loop of
    # calls), the second one late.
    request_id = worker.start("run_code", {"code": "anything(n=0)\nanything(n=1)"})
    call = worker.read()
    worker.send({"type": "tool_result", "call_id": call["call_id"], "ok": True, "value_json": "0"})
    call = worker.read()
    assert call["type"] == "tool_call" and call["arguments"] == {"n": 1}
    before = _context_switches(pid)
    time.sleep(0.5)  # a slow tool: the reader thread stays parked, it does not look every few ms
    waited = _context_switches(pid) - before
    worker.send({"type": "tool_result", "call_id": call["call_id"], "ok": True, "value_json": json.dumps(7)})
    response = worker.read()
    assert response["id"] == request_id and response["result"]["result"]["value"] == 7
    assert waited < 25


@pytest.mark.parametrize("moment", ["idle", "after nested calls", "while an operation runs", "in a tool call"])
def test_end_of_file_ends_the_worker_quietly(worker, moment):
    if moment != "idle":
        assert worker.request("define_tools", {"tools": [ANYTHING]})["ok"]
    if moment == "after nested calls":
        assert worker.request("run_code", {"code": "anything(n=1)"},
                              tool_handler=lambda message: {"ok": True, "value": 1})["ok"]
    elif moment == "while an operation runs":
        worker.start("execute", {"code": "import time\ntime.sleep(60)"})
        time.sleep(0.2)
    elif moment == "in a tool call":
        worker.start("run_code", {"code": "anything(n=1)"})
        assert worker.read()["type"] == "tool_call"
    os.close(worker._to_worker_w)
    assert worker.process.wait(timeout=5) == 0


def test_a_cell_that_closes_fd_3_ends_the_worker_quietly(worker):
    # The parent can no longer reach it: it exits 0, as at end of file, at the latest when the cell ends.
    worker.send({"type": "request", "id": worker.next_id, "op": "execute", "params": {"code": "import os\nos.close(3)"},
                 "stream": False})
    assert worker.process.wait(timeout=5) == 0
