"""A worker's first interrupt and first error cost what every later one does, and read like a cell's own.

An interrupt's response waits for its traceback, and the parent gives it a bounded grace period before it replaces
the worker. The first traceback a shell renders used to cost 50-100 ms of one-time work (about 200 ms with the CPUs
busy), part of it parsing the worker's own SIGINT handler module, whose frame also showed under every interrupted
cell. The worker now warms the error path before it says ready (once it did so only after idling 50 ms, and a
standby promoted sooner was cold), keeps its handler out of tracebacks, and no longer renders every traceback a
second time for a history nobody reads."""

from __future__ import annotations

import sys
import time

import pytest
from worker_process import WorkerProcess

from ipython_mcp_worker.shell.owner import build_shell
from ipython_mcp_worker.shell.warmup import warm_error_path

SLEEP = "import time\ntime.sleep(100)"


def interrupt(worker: WorkerProcess, code: str, after: float = 0.3) -> dict:
    request_id = worker.start("execute", {"code": code})
    time.sleep(after)
    worker.send({"type": "interrupt", "id": request_id})
    response = worker.response_to(request_id)
    assert response["ok"], response
    return response["result"]


@pytest.fixture(scope="module")
def worker():
    process = WorkerProcess(codec="json")
    yield process
    process.close()


@pytest.mark.parametrize("code, innermost", [
    (SLEEP, "time.sleep(100)"),
    ("import time\ndef wait():\n    time.sleep(100)\nwait()", "time.sleep(100)"),
    ("while True:\n    pass", "while True:"),
])
def test_an_interrupted_cell_shows_its_own_frames_only(worker, code, innermost):
    result = interrupt(worker, code)
    error = result["error"]
    assert error["kind"] == "interrupted"
    assert error["type"] == "KeyboardInterrupt"
    assert "ipython_mcp_worker" not in error["traceback"], error["traceback"]
    assert "Interrupter" not in error["traceback"]
    body = error["traceback"].rstrip().splitlines()
    assert body[-1].startswith("KeyboardInterrupt")
    assert innermost in [line for line in body if line.startswith("---->")][-1]


def test_an_exception_raised_while_handling_an_interrupt_hides_the_handler_too(worker):
    code = ("import time\ntry:\n    time.sleep(100)\nexcept KeyboardInterrupt as stop:\n"
            "    raise ValueError('after the interrupt') from stop")
    error = interrupt(worker, code)["error"]
    assert error["type"] == "ValueError"
    assert "KeyboardInterrupt" in error["traceback"]  # the cause is still shown, without the handler's frame
    assert "ipython_mcp_worker" not in error["traceback"], error["traceback"]


def test_the_interrupted_state_is_kept_and_the_next_interrupt_still_lands(worker):
    worker.execute("kept_before = 41")
    interrupt(worker, "kept_after = kept_before + 1\n" + SLEEP)
    assert worker.execute("kept_after")["result"]["value"] == 42
    assert interrupt(worker, SLEEP)["error"]["kind"] == "interrupted"


# -- a fresh worker's first failure does no first-time work --------------------------------------------------------
# One-time work on the way out of a failed operation shows as modules imported there (stack_data, executing, pygments'
# formatters: the bulk of a cold traceback). A fresh worker's very first operation, interrupted or failing, must
# import none: that holds only if the worker warmed before it said ready (it used to warm only after idling 50 ms).

_FIRST_FAILURES = {
    "interrupted while sleeping": (SLEEP, "interrupted"),
    "interrupted in a busy loop": ("while True:\n    pass", "interrupted"),
    "interrupted in a nested call": ("import time\ndef wait():\n    time.sleep(100)\nwait()", "interrupted"),
    "raising": ("1 / 0", "exception"),
    "raising from a function, chained": ("def f():\n    try:\n        {}['k']\n    except KeyError as e:\n"
                                         "        raise ValueError('v') from e\nf()", "exception"),
    "a name error": ("undefined_name_for_the_probe", "exception"),
    "a syntax error": ("def broken(:\n    pass", "syntax"),
}
_SNAPSHOT = "import sys as _probe_sys\n_probe_before = set(_probe_sys.modules)"


@pytest.mark.parametrize("code, kind", _FIRST_FAILURES.values(), ids=_FIRST_FAILURES.keys())
def test_a_fresh_workers_first_failure_imports_nothing(code, kind):
    process = WorkerProcess(codec="json")
    try:
        if kind == "interrupted":
            # The snapshot is taken inside the worker's very first operation, the one interrupted.
            assert interrupt(process, f"{_SNAPSHOT}\n{code}")["error"]["kind"] == "interrupted"
        else:
            # A cell that does not compile runs nothing: its snapshot is the cell before (no idle time between).
            if kind == "syntax":
                process.execute(_SNAPSHOT)
            else:
                code = f"{_SNAPSHOT}\n{code}"
            assert process.execute(code)["error"]["kind"] == kind
        imported = process.execute("sorted(set(_probe_sys.modules) - _probe_before)")["result"]["value"]
        assert imported == [], f"the first failure imported {imported}"
    finally:
        process.close()


def test_a_failing_cell_keeps_no_history_record():
    process = WorkerProcess(codec="json")
    try:
        for _ in range(3):
            assert process.execute("1 / 0")["error"]["type"] == "ZeroDivisionError"
        kept = process.execute("len(getattr(get_ipython().history_manager, 'exceptions', {}))")
        assert kept["result"]["value"] == 0
    finally:
        process.close()


def test_a_worker_is_warm_when_it_says_ready_and_leaves_no_trace():
    process = WorkerProcess(codec="json")
    try:
        # No idle time: this is the worker's first operation, and the warm-up has already run.
        probe = ("import sys, linecache\n"
                 "shell = get_ipython()\n"
                 "(sorted(n for n in shell.user_ns if n not in shell.user_ns_hidden and not n.startswith('_') "
                 "and n not in ('sys', 'linecache', 'shell')), "
                 "[n for n in ('last_type', 'last_value', 'last_traceback', 'last_exc') if hasattr(sys, n)], "
                 "[f for f in linecache.cache if 'warm-up' in f], len(Out), "
                 "'ipython_mcp_worker.shell.warmup' in sys.modules)")
        result = process.execute(probe)
        assert result["execution_count"] == 1
        assert result["result"]["value"] == [[], [], [], 0, True]
        # The first interrupt after it is an ordinary one.
        assert interrupt(process, SLEEP)["error"]["kind"] == "interrupted"
        assert process.execute("1 + 1")["result"]["value"] == 2
    finally:
        process.close()


# -- the warm-up alone, in process ------------------------------------------------------------------------------


@pytest.fixture()
def shell():
    shell = build_shell()
    yield shell
    shell.custom_exceptions = ()
    shell.call_pdb = False


def test_the_warm_up_runs_no_user_exception_handler(shell):
    seen = []
    shell.set_custom_exc((Exception,), lambda *args, **kwargs: seen.append(args))
    warm_error_path(shell)
    assert seen == []


def test_the_warm_up_never_starts_the_debugger(shell, monkeypatch):
    shell.call_pdb = True
    started = []
    monkeypatch.setattr(shell, "debugger", lambda *args, **kwargs: started.append(args))
    warm_error_path(shell)
    assert started == []


def test_the_warm_up_restores_the_last_exception(shell):
    try:
        raise LookupError("the user's last error")
    except LookupError as error:
        sys.last_value = error
    warm_error_path(shell)
    assert isinstance(sys.last_value, LookupError)
    del sys.last_value
    warm_error_path(shell)
    assert not hasattr(sys, "last_value")
