"""An interrupt the parent sends is heard, wherever in the cell it lands, and raises once (ipc/interrupter.py).

CPython runs a signal's Python handler only at its next check; a SIGINT that lands after the last check and before a
blocking call starts is not heard by that call. Before the nudger, such an interrupt was lost: the cell slept on and
the parent replaced a worker whose cell was cooperative (issue 51: the README test whose cancel came just as the cell
reached its ``time.sleep``)."""

from __future__ import annotations

import random
import threading
import time

import pytest
from worker_process import WorkerProcess

# sum() is one long C call that never checks for signals, and time.sleep starts right after it returns: an interrupt
# sent while sum() runs is pending when the sleep begins, every time.
SLEEP_AFTER_C_CALL = "import time\ntime.sleep(sum(range(3 * 10**7)) * 0 + 10**6)"


@pytest.fixture(scope="module")
def worker():
    process = WorkerProcess(codec="json")
    yield process
    process.close()


def interrupted_within(worker: WorkerProcess, code: str, after: float, bound: float) -> dict:
    """Runs ``code``, interrupts it ``after`` seconds in, and returns its response; fails if none comes within
    ``bound`` seconds of the interrupt (a watchdog kills a deaf worker, so the test fails instead of hanging)."""
    request_id = worker.start("execute", {"code": code})
    time.sleep(after)
    worker.send({"type": "interrupt", "id": request_id})
    sent = time.monotonic()
    response = response_or_kill(worker, request_id, bound + 5)
    assert time.monotonic() - sent < bound, "the interrupt was not heard: the cell ran on"
    return response


def response_or_kill(worker: WorkerProcess, request_id: int, seconds: float) -> dict:
    """The response to ``request_id``; a watchdog kills a worker that gives none within ``seconds``, so the test
    fails instead of hanging."""
    watchdog = threading.Timer(seconds, worker.process.kill)
    watchdog.start()
    try:
        return worker.response_to(request_id)
    finally:
        watchdog.cancel()


def test_an_interrupt_that_lands_just_before_a_blocking_call_still_stops_it(worker):
    # The interrupt can be heard only once sum() returns: the bound is that C call's own time on this machine now
    # (measured in the worker just before; a busy machine stretches it, 3.4 s once beside a CPU hog and the whole
    # test run), plus the 2 s the nudge has to stop the sleep that follows it.
    timed = "import time\n_t = time.monotonic()\nsum(range(3 * 10**7))\ntime.monotonic() - _t"
    c_call = worker.execute(timed)["result"]["value"]
    response = interrupted_within(worker, SLEEP_AFTER_C_CALL, after=0.05, bound=2 + 2 * c_call)
    assert response["ok"], response
    error = response["result"]["error"]
    assert error["kind"] == "interrupted" and error["type"] == "KeyboardInterrupt", error
    # The namespace is intact and the next cell is not interrupted by a late nudge.
    assert worker.execute("import time\ntime.sleep(0.3)\n'next'")["result"]["value"] == "next"


def test_one_interrupt_raises_once_even_when_a_cell_handles_it_slowly(worker):
    # The handler of the first KeyboardInterrupt runs C code for a while (no signal checks) and then sleeps: a nudge
    # sent then would raise a second KeyboardInterrupt inside the handler. One interrupt, one KeyboardInterrupt.
    code = ("import time\ncaught = 0\ntry:\n    time.sleep(10**6)\nexcept KeyboardInterrupt:\n    caught += 1\n"
            "    sum(range(10**7))\n    time.sleep(0.3)\n'handled'")
    response = interrupted_within(worker, code, after=0.1, bound=3)
    assert response["ok"] and response["result"]["status"] == "ok", response
    assert response["result"]["result"]["value"] == "handled"
    assert worker.execute("caught")["result"]["value"] == 1


def test_interrupts_at_random_moments_of_a_sleeping_cell_are_all_heard(worker):
    # The moment the signal lands sweeps the cell's start: before it is armed, while `import time` and the call are
    # set up, and in the sleep itself. Each is heard within the bound, and the namespace stays.
    rng = random.Random(51)
    worker.execute("kept = 'before'")
    for _ in range(150):
        response = interrupted_within(worker, "import time\ntime.sleep(10**6)", after=rng.uniform(0, 0.004), bound=2)
        if not response["ok"]:  # interrupted before the cell itself ran
            assert response["error"]["code"] == "operation_cancelled", response
            continue
        assert response["result"]["error"]["kind"] == "interrupted", response
    assert worker.execute("kept")["result"]["value"] == "before"


def test_a_stray_sigint_while_armed_still_stops_the_cell(worker):
    # A SIGINT the parent did not send (user code signalling its own main thread) interrupts as it always has.
    code = ("import signal, threading, time\nmain = threading.main_thread().ident\n"
            "threading.Timer(0.1, signal.pthread_kill, args=(main, signal.SIGINT)).start()\ntime.sleep(10**6)")
    request_id = worker.start("execute", {"code": code})
    response = response_or_kill(worker, request_id, 10)
    assert response["result"]["error"]["kind"] == "interrupted", response


def test_a_memory_stop_noted_after_a_plain_interrupt_raises_nothing_more_and_answers_memory_limit(worker):
    # The parent interrupted the cell (its deadline) and then its memory guard tripped during the grace: the second
    # interrupt, with reason memory_limit, must not raise a second KeyboardInterrupt inside the cell's clean-up; the
    # stop becomes a memory stop (the worker releases memory and answers memory_limit).
    code = ("import time\ncaught = 0\ntry:\n    time.sleep(10**6)\nexcept KeyboardInterrupt:\n    caught += 1\n"
            "    time.sleep(0.4)\n    caught += 10\n    raise")
    request_id = worker.start("execute", {"code": code})
    time.sleep(0.1)
    worker.send({"type": "interrupt", "id": request_id})
    time.sleep(0.1)
    worker.send({"type": "interrupt", "id": request_id, "reason": "memory_limit"})
    response = response_or_kill(worker, request_id, 10)
    assert not response["ok"] and response["error"]["code"] == "memory_limit", response
    assert response["error"]["details"]["trigger"] == "watch"
    assert worker.execute("caught")["result"]["value"] == 11
