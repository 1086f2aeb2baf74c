"""Start-up a parent abandons is not an error, and nothing a cell starts outlives the worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from worker_process import PYTHON_ROOT, WorkerProcess

from ipython_mcp_worker.ipc.codec import CODEC_JSON, FrameReader, encode_frame

# Starts three `sleep 1000` children three ways (Popen, a `!` escape in the background, a double fork that stays in
# the group) and returns their pids plus every other member of the worker's process group (the watchdog among them).
START_CHILDREN = r'''
import os, subprocess
def _group_members():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if os.getpgid(int(entry)) == os.getpgrp():
                    found.append(int(entry))
            except OSError:
                pass
    return found
_kids = [subprocess.Popen(["sleep", "1000"]).pid]
_background = !sleep 1000 > /dev/null 2>&1 & echo $!
_kids.append(int(_background[-1]))
_read, _write = os.pipe()
_first = os.fork()
if _first == 0:
    _second = os.fork()
    if _second == 0:
        os.execvp("sleep", ["sleep", "1000"])
    os.write(_write, str(_second).encode())
    os._exit(0)
os.close(_write)
os.waitpid(_first, 0)
_kids.append(int(os.read(_read, 64)))
os.close(_read)
sorted(set(_kids + _group_members()))
'''


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _survivors(pids: list[int], timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = [pid for pid in pids if _alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pid for pid in alive if _alive(pid)]
    return alive


def _start_children(worker: WorkerProcess) -> list[int]:
    result = worker.execute(START_CHILDREN)
    assert result["status"] == "ok", result
    pids = [int(pid) for pid in result["result"]["value"]]
    assert len(pids) >= 4  # three sleeps and the watchdog
    assert all(_alive(pid) for pid in pids)
    return pids


class RawWorker:
    """A worker subprocess whose handshake the test drives itself."""

    def __init__(self) -> None:
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def place() -> None:
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)

        self.process = subprocess.Popen([sys.executable, "-m", "ipython_mcp_worker"], preexec_fn=place,
                                        pass_fds=(3, 4), cwd=str(PYTHON_ROOT), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_r)
        os.close(from_w)
        self.reader = FrameReader(self.from_r, 1 << 20)

    def close_channel(self) -> None:
        if self.to_w >= 0:
            os.close(self.to_w)
            self.to_w = -1

    def finish(self) -> tuple[int, str]:
        """Exit code and stderr, once the worker has exited."""
        self.close_channel()
        code = self.process.wait(timeout=10)
        stderr = self.process.stderr.read().decode() if self.process.stderr else ""
        if self.process.stderr:
            self.process.stderr.close()
        os.close(self.from_r)
        return code, stderr


@pytest.fixture
def raw():
    worker = RawWorker()
    yield worker
    if worker.process.poll() is None:
        worker.process.kill()
        worker.finish()


# ---- the handshake: a parent that went away is not a protocol mismatch ----

def test_channel_closed_before_the_hello_exits_quietly(raw):
    raw.close_channel()
    code, stderr = raw.finish()
    assert (code, stderr) == (0, "")


def test_channel_closed_after_the_hello_exits_quietly_without_startup_failed(raw):
    assert raw.reader.read()["type"] == "hello"
    raw.close_channel()
    assert raw.reader.read() is None  # no startup_failed frame: nothing went wrong
    code, stderr = raw.finish()
    assert (code, stderr) == (0, "")


def test_shutdown_during_the_handshake_exits_quietly(raw):
    assert raw.reader.read()["type"] == "hello"
    os.write(raw.to_w, encode_frame({"type": "shutdown"}, CODEC_JSON, 1 << 20))
    assert raw.reader.read() is None
    code, stderr = raw.finish()
    assert (code, stderr) == (0, "")


def test_a_request_instead_of_configure_fails_startup_by_name(raw):
    assert raw.reader.read()["type"] == "hello"
    os.write(raw.to_w, encode_frame({"type": "request", "id": 1, "op": "health", "params": {}}, CODEC_JSON, 1 << 20))
    failed = raw.reader.read()
    assert failed["type"] == "startup_failed"
    assert failed["error"]["message"] == "expected a configure message, got 'request'"
    assert raw.finish()[0] == 3


def test_a_wrong_protocol_version_is_still_a_mismatch(raw):
    assert raw.reader.read()["type"] == "hello"
    os.write(raw.to_w, encode_frame({"type": "configure", "protocol": 99, "codec": "json"}, CODEC_JSON, 1 << 20))
    failed = raw.reader.read()
    assert failed["type"] == "startup_failed"
    assert failed["error"]["message"] == "protocol mismatch: worker speaks 1, parent sent 99"
    assert raw.finish()[0] == 3


@pytest.mark.parametrize("frame", [b"\x00\x00\x00\x05\x00not json", encode_frame([1, 2], CODEC_JSON, 1 << 20)])
def test_an_unreadable_configure_frame_fails_startup(raw, frame):
    assert raw.reader.read()["type"] == "hello"
    os.write(raw.to_w, frame)
    failed = raw.reader.read()
    assert failed["type"] == "startup_failed" and failed["error"]["message"].startswith("unreadable configure message")
    assert raw.finish()[0] == 3


# ---- the process group: whatever a cell starts ends with the worker ----

def test_the_worker_leads_its_group_and_the_watchdog_is_not_its_child():
    worker = WorkerProcess()
    try:
        result = worker.execute("import os\nos.getpgrp() == os.getpid()")
        assert result["result"]["value"] is True
        # os.wait() in user code must not block on the watchdog: the worker has no child of its own.
        waited = worker.execute("import os\ntry:\n    os.wait()\nexcept ChildProcessError:\n    waited = 'no child'\nwaited")
        assert waited["result"]["value"] == "no child"
    finally:
        worker.close()


@pytest.mark.parametrize("ending", ["channel closed", "SIGKILL", "os._exit in a cell"])
def test_children_of_a_cell_die_with_the_worker(ending):
    worker = WorkerProcess()
    try:
        pids = _start_children(worker)
        started = time.monotonic()
        if ending == "channel closed":
            os.close(worker._to_worker_w)
            worker._to_worker_w = os.open(os.devnull, os.O_WRONLY)  # close() closes something harmless
        elif ending == "SIGKILL":
            os.kill(worker.process.pid, signal.SIGKILL)
        else:
            worker.send({"type": "request", "id": 99, "op": "execute", "params": {"code": "import os\nos._exit(1)"}})
        worker.process.wait(timeout=10)
        assert _survivors(pids) == []
        assert time.monotonic() - started < 5
    finally:
        worker.close()
