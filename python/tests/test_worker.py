"""The worker as a real subprocess: handshake, execute over both codecs, interruption, bad frames, exit."""

from __future__ import annotations

import os
import signal
import struct
import time

import pytest
from worker_process import WorkerProcess

from ipython_mcp_worker.ipc.codec import CODEC_JSON, encode_frame


@pytest.fixture(params=["msgpack", "json"])
def worker(request):
    process = WorkerProcess(codec=request.param)
    yield process
    process.close()


def test_handshake_names_protocol_codecs_and_runtime(worker):
    assert worker.hello["type"] == "hello" and worker.hello["protocol"] == 1
    assert "json" in worker.hello["codecs"]
    assert worker.ready == {"type": "ready", "execution_count": 0, "protected_names": worker.ready["protected_names"]}
    assert {"In", "Out", "get_ipython", "exit", "quit", "open"} <= set(worker.ready["protected_names"])


def test_execute_keeps_state_and_counts(worker):
    first = worker.execute("x = 41")
    second = worker.execute("x + 1")
    assert second["result"] == {"kind": "json", "value": 42}
    assert second["execution_count"] == first["execution_count"] + 1
    assert worker.request("health")["result"]["execution_count"] == second["execution_count"]


def test_execute_reports_failures_structurally(worker):
    raised = worker.execute("raise ValueError('bad value')")
    assert raised["status"] == "error"
    assert raised["error"]["kind"] == "exception" and raised["error"]["type"] == "ValueError"
    assert raised["error"]["message"] == "bad value" and "ValueError" in raised["error"]["traceback"]
    syntax = worker.execute("for x in")
    assert syntax["error"]["kind"] == "syntax" and syntax["error"]["lineno"] == 1


def test_fd_level_output_is_captured_in_the_result(worker):
    result = worker.execute("import os, subprocess\nos.write(1, b'raw\\n')\nsubprocess.run(['echo', 'child'])\nos.write(2, b'e\\n')")
    assert result["stdout"] == "raw\nchild\n"
    assert result["stderr"] == "e\n"


def test_head_tail_sink_counts_omitted_characters_exactly():
    process = WorkerProcess(limits={"max_text_chars": 100})
    try:
        result = process.execute("print('é' * 1000)")
        assert len(result["stdout"]) == 100
        assert result["stdout_omitted_chars"] == 1001 - 100
        assert result["truncated"]["stdout"] is True
    finally:
        process.close()


def _interrupt_after(worker, request_id, delay):
    time.sleep(delay)
    worker.send({"type": "interrupt", "id": request_id})


@pytest.mark.parametrize("code", [
    "while True:\n    pass",
    "import time\ntime.sleep(10**6)",
    "import queue\nqueue.Queue().get()",
])
def test_interrupt_stops_loops_and_blocking_calls(worker, code):
    import threading

    request_id = worker.next_id
    thread = threading.Thread(target=_interrupt_after, args=(worker, request_id, 0.3))
    thread.start()
    started = time.monotonic()
    response = worker.request("execute", {"code": code})
    thread.join()
    assert time.monotonic() - started < 5
    assert response["ok"] and response["result"]["error"]["kind"] == "interrupted"
    assert worker.execute("1 + 1")["result"]["value"] == 2


def test_stale_interrupt_does_not_hit_the_next_request(worker):
    finished = worker.request("execute", {"code": "1"})
    worker.send({"type": "interrupt", "id": finished["id"]})
    result = worker.execute("import time\ntime.sleep(0.3)\n'completed'")
    assert result["status"] == "ok" and result["result"]["value"] == "completed"


def test_oversized_frame_is_skipped_with_a_structured_error():
    process = WorkerProcess(codec="json", limits={"max_ipc_message_bytes": 4096})
    try:
        payload = b"\x01" + b" " * 9000
        os.write(process._to_worker_w, struct.pack(">I", len(payload)) + payload)
        error = process.read()
        assert error["type"] == "protocol_error" and error["code"] == "message_too_large"
        assert process.execute("2 * 21")["result"]["value"] == 42
    finally:
        process.close()


def test_oversized_result_becomes_message_too_large():
    process = WorkerProcess(codec="json", limits={"max_ipc_message_bytes": 20000, "max_text_chars": 100000})
    try:
        response = process.request("execute", {"code": "print('x' * 50000)"})
        assert response["ok"] is False and response["error"]["code"] == "message_too_large"
        assert process.execute("'fine'")["result"]["value"] == "fine"
    finally:
        process.close()


def test_malformed_request_gets_a_protocol_error(worker):
    worker.send({"type": "request", "id": "seven", "op": "execute", "params": {}})
    error = worker.read()
    assert error["type"] == "protocol_error" and error["code"] == "invalid_request"
    unknown = worker.request("no_such_op")
    assert unknown["ok"] is False and unknown["error"]["code"] == "invalid_request"


def test_worker_exits_when_its_channel_closes(worker):
    os.close(worker._to_worker_w)
    assert worker.process.wait(timeout=5) == 0


def test_worker_ignores_sigint_between_requests(worker):
    os.kill(worker.process.pid, signal.SIGINT)
    time.sleep(0.2)
    assert worker.execute("'alive'")["result"]["value"] == "alive"


def test_protocol_mismatch_fails_startup():
    import subprocess
    import sys

    from worker_process import PYTHON_ROOT

    from ipython_mcp_worker.ipc.codec import FrameReader

    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()

    def place() -> None:
        os.dup2(to_r, 3)
        os.dup2(from_w, 4)

    child = subprocess.Popen([sys.executable, "-m", "ipython_mcp_worker"], preexec_fn=place, pass_fds=(3, 4),
                             cwd=str(PYTHON_ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_r)
    os.close(from_w)
    reader = FrameReader(from_r, 1 << 20)
    assert reader.read()["type"] == "hello"
    os.write(to_w, encode_frame({"type": "configure", "protocol": 99, "codec": "json"}, CODEC_JSON, 1 << 20))
    failed = reader.read()
    assert failed["type"] == "startup_failed" and "protocol" in failed["error"]["message"]
    assert child.wait(timeout=5) == 3
    os.close(to_w)
    os.close(from_r)


def test_a_repr_raising_system_exit_falls_back_to_a_safe_repr(worker):
    result = worker.execute("class Exits:\n    def __repr__(self):\n        raise SystemExit(3)\nExits()")
    assert result["status"] == "ok"
    assert result["result"]["kind"] == "repr" and "repr raised SystemExit" in result["result"]["repr"]
    assert worker.execute("'still alive'")["result"]["value"] == "still alive"


def test_printed_output_is_not_retained_after_the_cell(worker):
    """IPython 9 tees stdout into history_manager.outputs; the worker must not keep what it already bounded."""
    worker.execute("for _ in range(64):\n    print('x' * 65535)")
    held = worker.execute(
        "_h = get_ipython().history_manager\n"
        "sum(len(part) for outputs in getattr(_h, 'outputs', {}).values() for o in outputs "
        "for part in o.bundle.get('stream', []))"
    )
    assert held["result"]["value"] == 0


def test_fd_output_of_a_non_execute_operation_does_not_leak_into_the_next_cell(worker):
    worker.execute("import os\ndef noisy():\n    os.write(1, b'from call_function\\n')\n    return 1")
    called = worker.request("call_function", {"name": "noisy", "arguments": {}})
    assert called["ok"] and called["result"]["value"] == 1
    assert worker.execute("'next'")["stdout"] == ""
