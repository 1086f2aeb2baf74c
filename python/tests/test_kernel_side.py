"""The worker inside a real ipykernel, driven as the Node side drives it: boot cell, comm, agent cells.

A kernel of this test's Python is started with jupyter_client (the same client a human's `jupyter console` uses),
the worker is booted into it from its sources (kernel/boot.py), and every check goes over the kernel's own
channels: comm messages for operations, execute_requests with the ipython_mcp metadata for the agent's cells.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import queue
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ipython_mcp_worker.kernel import AGENT_CELL_TYPE
from ipython_mcp_worker.protocol.constants import PROTOCOL_VERSION

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

SOURCE = Path(__file__).resolve().parent.parent
TARGET = "_ipython_mcp_worker"


def boot_code(sources: dict[str, str] | None = None) -> str:
    if sources is None:
        sources = {p.relative_to(SOURCE).as_posix(): p.read_text()
                   for p in sorted((SOURCE / "ipython_mcp_worker").rglob("*.py")) if "__pycache__" not in p.parts}
    digest = hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()
    payload = base64.b64encode(zlib.compress(json.dumps({"digest": digest, "sources": sources}).encode())).decode()
    boot = (SOURCE / "ipython_mcp_worker" / "kernel" / "boot.py").read_text()
    return (f'exec(compile({json.dumps(boot)}, "<ipython-mcp boot>", "exec"), '
            f'{{"__name__": "_ipython_mcp_boot", "PAYLOAD": {json.dumps(payload)}}})')


class Kernel:
    """A kernel and one client of it, with the comm helpers the Node side's messages need."""

    def __init__(self, tmp: Path) -> None:
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager

        spec = tmp / "kernels" / "worker-test"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "worker test", "language": "python"}))
        self.manager = KernelManager(kernel_name="worker-test",
                                     kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp / "kernels")]))
        self.manager.start_kernel(env={**__import__("os").environ, "PYTHONPATH": str(SOURCE)})
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.iopub: list[dict[str, Any]] = []
        self.comms = 0

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    def run(self, code: str, **options: Any) -> dict[str, Any]:
        reply: dict[str, Any] = self.client.execute_interactive(
            code, timeout=60, output_hook=self.iopub.append, **options)
        return reply

    def probe_comm(self) -> str:
        """A comm of its own for asking the kernel side things (opened once)."""
        if getattr(self, "_probe", None) is None:
            self._probe = self.open_comm()
            assert self.ready(self._probe)["type"] == "ready"
        return str(self._probe)

    def open_comm(self, configure: dict[str, Any] | None = None) -> str:
        self.comms += 1
        comm_id = f"comm-{self.comms}"
        data = {"type": "configure", "protocol": PROTOCOL_VERSION, "codec": "json"} if configure is None else configure
        self.client.shell_channel.send(self.client.session.msg(
            "comm_open", {"comm_id": comm_id, "target_name": TARGET, "data": data}))
        return comm_id

    def request(self, comm_id: str, request_id: int, op: str, params: dict[str, Any], **extra: Any) -> str:
        return self.send(comm_id, {"type": "request", "id": request_id, "op": op, "params": params, **extra})

    def send(self, comm_id: str, data: Any) -> str:
        message = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(message)
        return str(message["header"]["msg_id"])

    def agent_cell(self, comm_id: str, request_id: int, code: str, stream: bool = False,
                   message_type: str = "execute_request") -> str:
        marker: dict[str, Any] = {"id": request_id, "params": {"code": code}, "comm": comm_id}
        if stream:
            marker["stream"] = True
        message = self.client.session.msg(
            message_type,
            {"code": code, "silent": False, "store_history": True, "allow_stdin": False, "stop_on_error": False,
             "user_expressions": {}},
            metadata={"ipython_mcp": marker})
        self.client.shell_channel.send(message)
        return str(message["header"]["msg_id"])

    def messages(self, comm_id: str, until: Any, timeout: float = 30) -> list[dict[str, Any]]:
        """The comm's messages (decoded) up to and including the first for which ``until`` is true."""
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = self.client.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            self.iopub.append(message)
            content = message["content"]
            if message["msg_type"] == "comm_close" and content.get("comm_id") == comm_id:
                got.append({"type": "comm_close"})
                if until(got[-1]):
                    return got
            if message["msg_type"] == "comm_msg" and content.get("comm_id") == comm_id:
                got.append(json.loads(content["data"]["m"]))
                if until(got[-1]):
                    return got
        raise AssertionError(f"no awaited message within {timeout} s; got {got}")

    def response(self, comm_id: str, request_id: int) -> dict[str, Any]:
        return self.messages(comm_id, lambda m: m.get("type") == "response" and m.get("id") == request_id)[-1]

    def ready(self, comm_id: str) -> dict[str, Any]:
        return self.messages(comm_id, lambda m: m.get("type") in ("ready", "startup_failed"))[-1]


def booted_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A real kernel with the kernel side booted in it, closed afterwards (each test module's ``kernel`` fixture)."""
    started = Kernel(tmp_path_factory.mktemp("kernel"))
    try:
        reply = started.run(boot_code(), silent=True, store_history=False)
        assert reply["content"]["status"] == "ok", reply["content"]
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    yield from booted_kernel(tmp_path_factory)


@pytest.fixture
def comm(kernel: Kernel) -> str:
    comm_id = kernel.open_comm()
    assert kernel.ready(comm_id)["type"] == "ready"
    return comm_id


def printed_by(kernel: Kernel, reply: dict[str, Any]) -> str:
    """The whole stdout of the cell `reply` answers: ipykernel may send one print as several stream messages (a flush
    between its text and its newline; seen on a loaded machine, where the last message was "\\n" alone)."""
    msg_id = reply["parent_header"]["msg_id"]
    return "".join(m["content"]["text"] for m in kernel.iopub
                   if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id)


def test_boot_defines_no_user_name_and_ready_describes_the_kernel(kernel: Kernel) -> None:
    before = kernel.run("print(sorted(k for k in globals() if not k.startswith('_')))")
    comm_id = kernel.open_comm()
    ready = kernel.ready(comm_id)
    assert ready["type"] == "ready" and ready["protocol"] == PROTOCOL_VERSION
    assert ready["kernel"]["implementation"] == "ipykernel"
    assert {"In", "Out", "get_ipython", "exit", "quit"} <= set(ready["protected_names"])
    assert before["content"]["status"] == "ok"
    names = printed_by(kernel, before)
    assert "[" in names and "ipython_mcp" not in names and "PAYLOAD" not in names


def test_the_human_and_the_agent_share_one_namespace(kernel: Kernel, comm: str) -> None:
    kernel.run("df = {'rows': 3}")
    kernel.agent_cell(comm, 1, "def helper(n):\n    return n * 2\ndf['rows'] + 39")
    result = kernel.response(comm, 1)["result"]
    assert result["status"] == "ok" and result["result"] == {"kind": "json", "value": 42}
    reply = kernel.run("print(helper(21), In[-2].splitlines()[0])")
    assert reply["content"]["status"] == "ok"
    assert printed_by(kernel, reply) == "42 def helper(n):\n"
    inspected = (kernel.request(comm, 2, "inspect", {"name": "df"}), kernel.response(comm, 2))[1]
    assert inspected["ok"] and inspected["result"]["representation"] == "{'rows': 3}"


def test_an_agent_cell_is_the_kernels_own_cell_and_its_output_still_reaches_every_client(kernel: Kernel, comm: str) -> None:
    count = kernel.run("pass")["content"]["execution_count"]
    msg_id = kernel.agent_cell(comm, 3, "print('to everyone'); import sys; print('warn', file=sys.stderr)\n"
                                  "from IPython.display import display; display({'d': 1}, raw=False)\n7 * 6")
    result = kernel.response(comm, 3)["result"]
    assert result["execution_count"] == count + 1
    assert (result["stdout"], result["stderr"]) == ("to everyone\n", "warn\n")
    assert [d["data"]["text/plain"] for d in result["displays"]] == ["{'d': 1}"]
    seen = [m for m in kernel.iopub if m["parent_header"].get("msg_id") == msg_id]
    kinds = [m["msg_type"] for m in seen]
    assert "execute_input" in kinds and "execute_result" in kinds and "display_data" in kinds
    assert any(m["msg_type"] == "stream" and m["content"]["text"] == "to everyone\n" for m in seen)


def test_a_failing_agent_cell_is_a_structured_error_and_the_human_still_sees_it(kernel: Kernel, comm: str) -> None:
    msg_id = kernel.agent_cell(comm, 4, "1 / 0")
    error = kernel.response(comm, 4)["result"]["error"]
    assert error["kind"] == "exception" and error["type"] == "ZeroDivisionError"
    assert "\x1b[" not in error["traceback"]
    assert any(m["msg_type"] == "error" for m in kernel.iopub if m["parent_header"].get("msg_id") == msg_id)


def test_an_agent_cell_sent_as_the_sides_own_type_runs_as_the_execute_request_it_is(kernel: Kernel) -> None:
    comm_id = kernel.open_comm()
    assert kernel.ready(comm_id)["agent_cell_type"] == AGENT_CELL_TYPE
    count = kernel.run("pass")["content"]["execution_count"]
    msg_id = kernel.agent_cell(comm_id, 8, "print('typed')\n6 * 7", message_type=AGENT_CELL_TYPE)
    result = kernel.response(comm_id, 8)["result"]
    assert (result["status"], result["stdout"], result["result"]) == ("ok", "typed\n", {"kind": "json", "value": 42})
    assert result["execution_count"] == count + 1
    # What every client sees names an execute_request: its input, result and reply.
    seen = [m for m in kernel.iopub if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] != "status"]
    assert {m["msg_type"] for m in seen} >= {"execute_input", "execute_result"}
    assert {m["parent_header"]["msg_type"] for m in seen} == {"execute_request"}
    reply = kernel.client.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.client.get_shell_msg(timeout=30)
    assert (reply["msg_type"], reply["content"]["status"]) == ("execute_reply", "ok")


def test_a_persons_failing_cell_does_not_abort_the_agent_cell_queued_behind_it(kernel: Kernel) -> None:
    comm_id = kernel.open_comm()
    assert kernel.ready(comm_id)["type"] == "ready"
    # Both queued before the person's cell fails: ipykernel aborts the execute_requests queued behind a failure.
    person = kernel.client.execute("import time\ntime.sleep(0.3)\n1 / 0", stop_on_error=True)
    typed = kernel.agent_cell(comm_id, 11, "'typed ran'", message_type=AGENT_CELL_TYPE)
    plain = kernel.agent_cell(comm_id, 12, "'plain ran'")
    assert kernel.response(comm_id, 11)["result"]["result"] == {"kind": "json", "value": "typed ran"}
    replies: dict[str, str] = {}
    while not {person, typed, plain} <= replies.keys():  # earlier tests' replies were never read: passed over
        reply = kernel.client.get_shell_msg(timeout=30)
        replies[reply["parent_header"].get("msg_id")] = reply["content"]["status"]
    assert (replies[person], replies[typed], replies[plain]) == ("error", "ok", "aborted")


def test_a_kernel_without_the_side_runs_nothing_sent_as_the_agent_cell_type(tmp_path: Path) -> None:
    # A kernel restarted under ipython-mcp has none of the side: a cell sent as the side's type must not run there.
    bare = Kernel(tmp_path)
    try:
        mark = tmp_path / "ran"
        msg_id = bare.agent_cell("comm-x", 1, f"open({str(mark)!r}, 'w').write('ran')", message_type=AGENT_CELL_TYPE)
        deadline = time.monotonic() + 30
        idle = False
        while not idle and time.monotonic() < deadline:
            try:
                message = bare.client.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            idle = (message["msg_type"] == "status" and message["content"]["execution_state"] == "idle"
                    and message["parent_header"].get("msg_id") == msg_id)
        assert idle, "the kernel never went idle after the message"
        assert bare.run("1 + 1")["content"]["status"] == "ok"
        assert not mark.exists()
    finally:
        bare.close()


def test_human_cells_are_left_alone(kernel: Kernel, comm: str) -> None:
    reply = kernel.run("import sys; print(type(sys.stdout).__module__); 5")
    assert reply["content"]["status"] == "ok"
    assert printed_by(kernel, reply).startswith("ipykernel")


def test_streamed_output_arrives_as_events_before_the_response(kernel: Kernel, comm: str) -> None:
    kernel.agent_cell(comm, 5, "for i in range(3):\n    print('line', i, flush=True)", stream=True)
    got = kernel.messages(comm, lambda m: m.get("type") == "response" and m.get("id") == 5)
    events = "".join(m["text"] for m in got if m.get("type") == "event" and m.get("id") == 5)
    assert events == "line 0\nline 1\nline 2\n"
    assert got[-1]["result"]["stdout"] == events


def test_big_output_keeps_head_and_tail_and_names_no_spill_file(kernel: Kernel, comm: str) -> None:
    kernel.agent_cell(comm, 6, "print('x' * 300_000)")
    result = kernel.response(comm, 6)["result"]
    assert result["truncated"]["stdout"] and result["stdout_omitted_chars"] > 0
    assert "stdout_spill" not in result


def _spill_folders(kernel: Kernel) -> int:
    """How many ipython-mcp-spill-* folders the kernel's temporary directory holds now."""
    # This kernel's own (their names carry its pid): other kernels on the machine come and go meanwhile.
    kernel.agent_cell(kernel.probe_comm(), 90_000 + kernel.comms,
                      "import glob, os, tempfile\nlen(glob.glob(f'{tempfile.gettempdir()}/ipython-mcp-spill-{os.getpid()}-*'))")
    return int(kernel.response(kernel.probe_comm(), 90_000 + kernel.comms)["result"]["result"]["value"])


# A parent whose spill directory the kernel cannot see (a kernel on another machine): its files are pulled.
_REMOTE_SPILL = {"type": "configure", "protocol": PROTOCOL_VERSION, "codec": "json",
                 "output_spill": {"dir": "/nonexistent/parent/side", "max_bytes": 10_000_000}}


def _pull(kernel: Kernel, comm_id: str, name: str) -> tuple[bytes, list[dict[str, Any]]]:
    """Pulls spill file ``name`` as the Node side does: spill_read from offset 0 until the size is reached."""
    data = b""
    chunks: list[dict[str, Any]] = []
    while True:
        kernel.send(comm_id, {"type": "spill_read", "name": name, "offset": len(data)})
        chunk = kernel.messages(comm_id, lambda m: m.get("type") == "spill_chunk")[-1]
        assert "error" not in chunk, chunk
        assert chunk["offset"] == len(data)
        piece = chunk["text"].encode("utf-8")
        assert len(piece) == chunk["bytes"]
        data += piece
        chunks.append(chunk)
        if len(data) >= chunk["size"]:
            return data, chunks


def test_spill_files_of_a_remote_kernel_are_pulled_piece_by_piece_and_leave_no_folder(kernel: Kernel) -> None:
    folders = _spill_folders(kernel)
    comm_id = kernel.open_comm(_REMOTE_SPILL)
    ready = kernel.ready(comm_id)
    assert ready["type"] == "ready" and ready["spill"] == "transfer"
    # Configuring made no folder: a folder comes with the first spill file.
    assert _spill_folders(kernel) == folders
    kernel.agent_cell(comm_id, 20, "import sys\nfor i in range(60_000):\n    print(f'row {i:06d} é ' + 'y' * 20)\n"
                          "print('é\\udcff', file=sys.stderr)")
    result = kernel.response(comm_id, 20)["result"]
    name = result["stdout_spill"]
    assert "/" not in name and name.endswith("-stdout.txt")
    expected = "".join(f"row {i:06d} é " + "y" * 20 + "\n" for i in range(60_000)).encode("utf-8")
    assert result["stdout_spill_bytes"] == len(expected) > (1 << 20)
    data, chunks = _pull(kernel, comm_id, name)
    assert data == expected
    # Pieces of at most 1 MiB, cut at a character boundary (the data decoded piece by piece above).
    assert len(chunks) >= 2 and all(chunk["bytes"] <= 1 << 20 for chunk in chunks)
    assert "stderr_spill" not in result
    assert _spill_folders(kernel) == folders + 1
    kernel.send(comm_id, {"type": "spill_done", "name": name})
    assert _spill_folders(kernel) == folders
    # A name that is not a spill file here, or a path, is refused and reads nothing.
    for bad in ("../etc/passwd", "/etc/passwd", name):
        kernel.send(comm_id, {"type": "spill_read", "name": bad, "offset": 0})
        assert "error" in kernel.messages(comm_id, lambda m: m.get("type") == "spill_chunk")[-1]
    kernel.send(comm_id, {"type": "shutdown"})
    kernel.messages(comm_id, lambda m: m.get("type") == "comm_close")


def test_a_closed_connection_removes_its_spill_folder_with_the_files_never_pulled(kernel: Kernel) -> None:
    folders = _spill_folders(kernel)
    comm_id = kernel.open_comm(_REMOTE_SPILL)
    assert kernel.ready(comm_id)["type"] == "ready"
    kernel.agent_cell(comm_id, 21, "print('z' * 300_000)")
    assert kernel.response(comm_id, 21)["result"]["stdout_spill"]
    assert _spill_folders(kernel) == folders + 1
    kernel.send(comm_id, {"type": "shutdown"})
    kernel.messages(comm_id, lambda m: m.get("type") == "comm_close")
    assert _spill_folders(kernel) == folders


def test_a_folder_left_by_a_killed_kernel_is_removed_by_the_next_spill(kernel: Kernel) -> None:
    import subprocess
    import tempfile

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    leftover = Path(tempfile.gettempdir()) / f"ipython-mcp-spill-{gone.pid}-left"
    leftover.mkdir()
    (leftover / "00000000000000000001-cell1-stdout.txt").write_text("half")
    comm_id = kernel.open_comm(_REMOTE_SPILL)
    assert kernel.ready(comm_id)["type"] == "ready"
    kernel.agent_cell(comm_id, 23, "print('w' * 300_000)")
    assert kernel.response(comm_id, 23)["result"]["stdout_spill"]
    assert not leftover.exists()
    kernel.send(comm_id, {"type": "shutdown"})
    kernel.messages(comm_id, lambda m: m.get("type") == "comm_close")


def test_a_kernel_that_sees_the_parents_spill_directory_writes_into_it(kernel: Kernel, tmp_path: Path) -> None:
    folders = _spill_folders(kernel)
    directory = tmp_path / "parent-spills"
    directory.mkdir(mode=0o700)
    token = "t" * 8 + os.urandom(16).hex()
    (directory / ".kernel-probe").write_text(token)
    configure = {"type": "configure", "protocol": PROTOCOL_VERSION, "codec": "json",
                 "output_spill": {"dir": str(directory), "max_bytes": 10_000_000},
                 "kernel_spill": {"probe": ".kernel-probe", "token": token}}
    comm_id = kernel.open_comm(configure)
    assert kernel.ready(comm_id)["spill"] == "direct"
    kernel.agent_cell(comm_id, 22, "print('d' * 300_000)")
    result = kernel.response(comm_id, 22)["result"]
    path = Path(result["stdout_spill"])
    assert path.parent == directory and path.read_text() == "d" * 300_000 + "\n"
    assert "stdout_spill_bytes" not in result
    assert _spill_folders(kernel) == folders
    kernel.send(comm_id, {"type": "shutdown"})
    kernel.messages(comm_id, lambda m: m.get("type") == "comm_close")
    # A wrong token (a kernel elsewhere that happens to have a directory of that name) pulls instead.
    configure["kernel_spill"] = {"probe": ".kernel-probe", "token": "u" * 40}
    comm_id = kernel.open_comm(configure)
    assert kernel.ready(comm_id)["spill"] == "transfer"
    kernel.send(comm_id, {"type": "shutdown"})
    kernel.messages(comm_id, lambda m: m.get("type") == "comm_close")


def test_an_answer_the_server_dropped_is_sent_again_when_asked(kernel: Kernel, comm: str) -> None:
    # The Jupyter server drops IOPub messages past its rate limits; the parent asks again after the request's idle.
    kernel.agent_cell(comm, 30, "'kept answer'")
    first = kernel.response(comm, 30)
    kernel.send(comm, {"type": "resend", "id": 30})
    assert kernel.response(comm, 30) == first
    kernel.request(comm, 31, "list", {})
    listed = kernel.response(comm, 31)
    kernel.send(comm, {"type": "resend", "id": 31})
    assert kernel.response(comm, 31) == listed
    # One never given (or no longer kept: the latest two are) is said to be unknown.
    kernel.send(comm, {"type": "resend", "id": 999})
    assert kernel.messages(comm, lambda m: m.get("type") in ("resent", "response"))[-1] == {
        "type": "resent", "id": 999, "found": False}


def test_run_code_over_the_comm_is_refused_it_runs_as_a_cell(kernel: Kernel, comm: str) -> None:
    # Its tool calls need an execute_request's stdin channel (test_kernel_code_mode.py).
    kernel.request(comm, 7, "run_code", {"code": "1"})
    error = kernel.response(comm, 7)["error"]
    assert error["code"] == "invalid_request" and "kernel's own cell" in error["message"]


def test_malformed_messages_get_protocol_errors_and_the_comm_goes_on(kernel: Kernel, comm: str) -> None:
    kernel.send(comm, ["not", "an", "object"])
    kernel.send(comm, {"type": "nonsense"})
    kernel.request(comm, 8, "no_such_op", {})
    got = kernel.messages(comm, lambda m: m.get("id") == 8)
    assert [m["type"] for m in got[:2]] == ["protocol_error", "protocol_error"]
    assert got[-1]["error"]["code"] == "invalid_request"
    kernel.request(comm, 9, "list", {})
    assert kernel.response(comm, 9)["ok"]


def test_an_interrupted_operation_is_cancelled_and_the_namespace_kept(kernel: Kernel, comm: str) -> None:
    kernel.run("kept = 'still here'\nimport time\ndef slow():\n    time.sleep(60)")
    kernel.request(comm, 10, "call_function", {"name": "slow"})
    time.sleep(1.5)
    kernel.manager.interrupt_kernel()
    response = kernel.response(comm, 10)
    assert not response["ok"] and response["error"]["code"] in ("operation_cancelled", "call_raised")
    kernel.agent_cell(comm, 11, "import time\ntime.sleep(60)")
    time.sleep(1.5)
    kernel.manager.interrupt_kernel()
    interrupted = kernel.response(comm, 11)["result"]
    assert interrupted["error"]["kind"] == "interrupted"
    kernel.agent_cell(comm, 12, "kept")
    assert kernel.response(comm, 12)["result"]["result"]["value"] == "still here"


def test_a_probe_lists_the_requests_that_began_in_order_with_them(kernel: Kernel, comm: str) -> None:
    kernel.request(comm, 30, "list", {})
    kernel.agent_cell(comm, 31, "31")
    kernel.send(comm, {"type": "probe", "token": 7})
    probe = kernel.messages(comm, lambda m: m.get("type") == "probe")[-1]
    assert probe["token"] == 7
    assert {30, 31} <= set(probe["seen"]) and 32 not in probe["seen"]


def test_a_bad_configure_fails_the_start_up_clearly(kernel: Kernel) -> None:
    comm_id = kernel.open_comm({"type": "configure", "protocol": -1})
    failed = kernel.ready(comm_id)
    assert failed["type"] == "startup_failed" and "protocol mismatch" in failed["error"]["message"]
    comm_id = kernel.open_comm({"type": "configure", "protocol": PROTOCOL_VERSION, "state": {"path": "/tmp/x"}})
    assert "--state" in kernel.ready(comm_id)["error"]["message"]


def test_every_comm_is_served_at_once_each_answer_on_its_own_comm(kernel: Kernel) -> None:
    first = kernel.open_comm()
    first_ready = kernel.ready(first)
    second = kernel.open_comm()
    second_ready = kernel.ready(second)
    assert first_ready["kernel_session"] == second_ready["kernel_session"]
    # The same request id from two ipython-mcp: each cell answers on the comm that sent it.
    kernel.agent_cell(first, 40, "'first'")
    kernel.agent_cell(second, 40, "'second'")
    kernel.request(first, 41, "list", {})
    assert kernel.response(first, 40)["result"]["result"]["value"] == "first"
    assert kernel.response(second, 40)["result"]["result"]["value"] == "second"
    assert kernel.response(first, 41)["ok"]
    kernel.run("survivor = 1")
    kernel.send(second, {"type": "shutdown"})
    kernel.messages(second, lambda m: m.get("type") == "comm_close")
    reply = kernel.run("print(survivor)")
    assert reply["content"]["status"] == "ok"
    # The first comm goes on; a cell naming the closed comm runs as a plain cell, answered nowhere.
    kernel.agent_cell(second, 42, "survivor + 1")
    kernel.agent_cell(first, 43, "survivor + 2")
    assert kernel.response(first, 43)["result"]["result"]["value"] == 3
    third = kernel.open_comm()
    assert kernel.ready(third)["type"] == "ready"
    kernel.send(first, {"type": "shutdown"})
    kernel.send(third, {"type": "shutdown"})


def test_a_cell_naming_no_comm_is_not_taken_for_an_agents(kernel: Kernel, comm: str) -> None:
    message = kernel.client.session.msg(
        "execute_request",
        {"code": "'plain'", "silent": False, "store_history": True, "allow_stdin": False, "stop_on_error": False,
         "user_expressions": {}},
        metadata={"ipython_mcp": {"id": 50, "params": {"code": "'plain'"}}})
    kernel.client.shell_channel.send(message)
    kernel.agent_cell(comm, 51, "'mine'")
    got = kernel.messages(comm, lambda m: m.get("type") == "response" and m.get("id") == 51)
    assert [m["id"] for m in got if m.get("type") == "response"] == [51]
    assert got[-1]["result"]["result"]["value"] == "mine"


@pytest.mark.parametrize("code", ["exit()", "quit()", "import sys\nsys.exit(3)", "raise SystemExit"])
def test_exit_in_an_agent_cell_is_an_error_and_the_kernel_goes_on(kernel: Kernel, comm: str, code: str) -> None:
    kernel.run("still = 'here'")
    kernel.agent_cell(comm, 60, code)
    result = kernel.response(comm, 60)["result"]
    assert result["error"]["type"] == "SystemExit"
    kernel.agent_cell(comm, 61, "still")
    assert kernel.response(comm, 61)["result"]["result"]["value"] == "here"
    check = "(get_ipython().exit_now, type(get_ipython()).ask_exit is get_ipython().ask_exit.__func__)"
    reply = kernel.run("pass", user_expressions={"check": check})
    assert reply["content"]["user_expressions"]["check"]["data"]["text/plain"] == "(False, True)"


def test_booting_again_with_other_sources_replaces_the_loaded_worker(kernel: Kernel) -> None:
    sources = {p.relative_to(SOURCE).as_posix(): p.read_text()
               for p in sorted((SOURCE / "ipython_mcp_worker").rglob("*.py")) if "__pycache__" not in p.parts}
    sources["ipython_mcp_worker/__init__.py"] += "\nBOOT_MARK = 'second'\n"
    assert kernel.run(boot_code(sources), silent=True, store_history=False)["content"]["status"] == "ok"
    comm_id = kernel.open_comm()
    assert kernel.ready(comm_id)["type"] == "ready"
    kernel.agent_cell(comm_id, 14, "import sys\nsys.modules['ipython_mcp_worker'].BOOT_MARK")
    assert kernel.response(comm_id, 14)["result"]["result"]["value"] == "second"
    hooks = kernel.run("print(sum(type(getattr(c, '__self__', None)).__name__ == 'KernelSide'"
                       " for c in get_ipython().events.callbacks['post_run_cell']))")
    assert hooks["content"]["status"] == "ok"
    assert printed_by(kernel, hooks).strip() == "1"


def test_a_flood_reaches_the_kernels_clients_bounded_with_the_omitted_count(kernel: Kernel, comm: str) -> None:
    total = 20_000_000
    msg_id = kernel.agent_cell(comm, 70, f"import sys\nfor _ in range({total} // 100_000):\n    sys.stdout.write('z' * 99_999 + '\\n')\n"
                                         "import os\nos.write(2, b'fd two\\n')\n'done'")
    result = kernel.response(comm, 70)["result"]
    assert result["result"]["value"] == "done"
    kept = len(result["stdout"])
    assert result["stdout_omitted_chars"] == total - kept
    time.sleep(0.5)
    kernel.run("pass")
    forwarded = "".join(m["content"]["text"] for m in kernel.iopub
                        if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id
                        and m["content"]["name"] == "stdout")
    assert len(forwarded) < 8192 + 300
    omitted = int(forwarded.split("[ipython-mcp: ")[1].split(" ")[0])
    assert len(forwarded.replace(forwarded[forwarded.index("\n[ipython-mcp:"):forwarded.index("spill file]\n") + 12], "")) + omitted == total


def test_a_later_cell_after_os_close_1_works(kernel: Kernel, comm: str) -> None:
    kernel.agent_cell(comm, 80, "import os\nos.close(1)\nprint('after close')\n1")
    first = kernel.response(comm, 80)["result"]
    assert first["result"]["value"] == 1 and first["stdout"] == "after close\n"
    kernel.agent_cell(comm, 81, "print('later')\n2")
    later = kernel.response(comm, 81)["result"]
    assert later["result"]["value"] == 2 and later["stdout"] == "later\n"


def test_fd_level_output_of_an_agent_cell_is_in_its_result_and_reaches_the_clients(kernel: Kernel, comm: str) -> None:
    msg_id = kernel.agent_cell(comm, 90, "import os, subprocess, sys\nprint('py')\nsys.stdout.flush()\n"
                                         "os.write(1, b'fd one\\n')\nos.write(2, b'fd two\\n')\n"
                                         "subprocess.run([sys.executable, '-c', 'print(\"from a child\")'])\n"
                                         "import ctypes\nctypes.CDLL(None).printf(b'from C\\n')\n'end'")
    result = kernel.response(comm, 90)["result"]
    assert result["result"]["value"] == "end"
    assert result["stdout"] == "py\nfd one\nfrom a child\nfrom C\n"
    assert result["stderr"] == "fd two\n"
    time.sleep(0.5)
    kernel.run("pass")
    seen = "".join(m["content"]["text"] for m in kernel.iopub
                   if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id)
    assert "from a child" in seen and "fd one" in seen
    # Between requests fd 1 is the kernel's again: a human cell's fd output is not the agent's.
    reply = kernel.run("import os\nos.write(1, b'human fd\\n')")
    assert reply["content"]["status"] == "ok"
    kernel.agent_cell(comm, 91, "'next'")
    assert kernel.response(comm, 91)["result"]["stdout"] == ""


def test_fd_level_flood_of_an_agent_cell_is_bounded_with_exact_counts(kernel: Kernel, comm: str) -> None:
    kernel.agent_cell(comm, 92, "import os\nfor _ in range(200):\n    os.write(1, b'q' * 99_999 + b'\\n')\n'flooded'")
    result = kernel.response(comm, 92)["result"]
    assert result["result"]["value"] == "flooded"
    assert len(result["stdout"]) + result["stdout_omitted_chars"] == 20_000_000


def test_an_agent_cell_printing_while_a_thread_writes_to_fd_1_gets_every_line_whole(kernel: Kernel, comm: str) -> None:
    # print() is two writes and the fd drain reads at any moment: no fd line may land inside a printed one.
    code = ("import os, threading\n"
            "def fd_lines():\n"
            "    for i in range(300):\n"
            "        os.write(1, b'fd-%d\\n' % i)\n"
            "writer = threading.Thread(target=fd_lines)\nwriter.start()\n"
            "for i in range(300):\n"
            "    print('py-%d' % i)\n"
            "writer.join()\n'done'")
    kernel.agent_cell(comm, 93, code)
    result = kernel.response(comm, 93)["result"]
    assert result["result"]["value"] == "done" and result["stdout_omitted_chars"] == 0
    lines = result["stdout"].split("\n")[:-1]
    assert [line for line in lines if not (line.startswith(("py-", "fd-")) and line[3:].isdigit())] == []
    assert [line for line in lines if line.startswith("py-")] == [f"py-{i}" for i in range(300)]
    assert [line for line in lines if line.startswith("fd-")] == [f"fd-{i}" for i in range(300)]


def test_a_tee_finalized_by_the_cycle_collector_never_flushes_the_kernels_stream() -> None:
    # IPython 9's run_cell patches sys.stdout.write with a closure over the stream: a _Tee that was sys.stdout then
    # is in a cycle, and the collector finalizes it on any thread, inside any lock (ipykernel's buffer lock, which
    # its IOPub thread needs to finish the flush the finalizer would wait for).
    import gc

    from ipython_mcp_worker.capture.streams import StreamRouter
    from ipython_mcp_worker.kernel.owner import _Forward, _Tee

    class Kernels:
        flushes = 0
        written = ""

        def write(self, text: str) -> int:
            Kernels.written += text
            return len(text)

        def flush(self) -> None:
            Kernels.flushes += 1

    def tee_in_a_cycle() -> None:
        tee = _Tee(StreamRouter("stdout", lambda: None), _Forward(Kernels(), 100, 100), 0)
        original_write = tee.write

        def write(text: str) -> int:  # the patch run_cell makes
            return original_write(text)

        tee.write = write  # type: ignore[method-assign]
        tee.write("x")
        tee.close()  # an agent's sys.stdout.close(): the kernel's stream stays open, nothing flushed

    tee_in_a_cycle()
    gc.collect()
    assert Kernels.flushes == 0 and Kernels.written == "x"


def test_dup2_onto_a_closed_fd_is_tried_again_while_linux_answers_ebusy(monkeypatch: pytest.MonkeyPatch) -> None:
    # After a cell's os.close(1), another thread's open() can be taking fd 1 just as the request ends: dup2 answers
    # EBUSY for those microseconds. It is tried again; any other error, or EBUSY that lasts, stands.
    import errno
    import os

    from ipython_mcp_worker.capture import streams

    real = os.dup2
    answers = [OSError(errno.EBUSY, "busy"), OSError(errno.EBUSY, "busy")]

    def flaky(fd: int, target: int) -> int:
        if answers:
            raise answers.pop(0)
        return real(fd, target)

    monkeypatch.setattr(streams.os, "dup2", flaky)
    read_end, write_end = os.pipe()
    spare = os.dup(read_end)
    try:
        streams.dup2_retrying(write_end, spare)
        assert os.fstat(spare).st_ino == os.fstat(write_end).st_ino and answers == []
        monkeypatch.setattr(streams.os, "dup2", lambda fd, target: (_ for _ in ()).throw(OSError(errno.EBADF, "bad")))
        with pytest.raises(OSError):
            streams.dup2_retrying(write_end, spare)
        monkeypatch.setattr(streams.os, "dup2", lambda fd, target: (_ for _ in ()).throw(OSError(errno.EBUSY, "busy")))
        with pytest.raises(OSError):
            streams.dup2_retrying(write_end, spare)
    finally:
        monkeypatch.undo()  # os.dup2 is the process's own: pytest's capture needs it back
        for fd in (read_end, write_end, spare):
            os.close(fd)


def test_agents_coming_and_going_share_one_fd_capture_and_leave_no_thread_or_pipe_each(kernel: Kernel) -> None:
    # fd 1 and 2 are the kernel process's: one capture serves every agent, so a long-lived kernel does not gather a
    # drain thread and two pipes per agent that ever connected.
    counts = []
    for round_ in range(4):
        comm_id = kernel.open_comm()
        assert kernel.ready(comm_id)["type"] == "ready"
        kernel.agent_cell(comm_id, 100 + round_, "import os, threading\nos.write(1, b'fd\\n')\n"
                                                 "(sum(t.name == 'ipython-mcp-kernel-fd-drain' for t in threading.enumerate()),"
                                                 " len(os.listdir('/proc/self/fd')))")
        result = kernel.response(comm_id, 100 + round_)["result"]
        assert result["stdout"] == "fd\n"
        counts.append(result["result"]["value"])
    # As many drain threads after the fourth agent as after the first (the module fixture's kernel may have booted
    # another worker version before, whose capture stays: one per version loaded, not per agent).
    assert len({threads for threads, _ in counts}) == 1 and counts[0][0] >= 1, counts
    # Each new agent opens its comm's own files while it lives; what the capture holds does not grow per agent.
    assert counts[-1][1] - counts[1][1] <= 2 * 2, counts
