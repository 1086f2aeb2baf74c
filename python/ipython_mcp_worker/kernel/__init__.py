"""The worker inside a Jupyter kernel: served over a comm, on the kernel's own shell (docs/jupyter.md).

``attach(shell)`` (called by boot.py) registers the comm target ``_ipython_mcp_worker`` and the shell's
``pre_run_cell``/``post_run_cell`` hooks. The Node side opens a comm with the ``configure`` message; the kernel
side answers ``ready`` (or ``startup_failed``) and from then on serves:

- every operation but a non-blank ``execute`` as a ``request`` message on the comm, answered by a ``response``
  on the comm, exactly as the local worker answers on its channel;
- a non-blank ``execute`` as the kernel's own cell: an ``execute_request`` whose metadata carries
  ``{"ipython_mcp": {"id", "params", "stream", "comm"}}``. The hooks capture that cell (its output still reaches
  every client of the kernel) and send the ordinary ``response`` on the comm named by ``comm`` from
  ``post_run_cell``. The cell lands in ``In``, ``Out`` and the history and advances ``execution_count``, as any
  cell would;
- a Code Mode ``run_code`` the same way (``"op": "run_code"`` in the marker, sent with ``allow_stdin``): its tool
  functions ask the host on the kernel's stdin channel (code_mode_cell.py, stdin_calls.py).

Beside requests, the comm carries: ``probe`` (after a reconnect: which requests began), ``resend {id}`` (an answer
the Jupyter server dropped under its IOPub rate limits: the latest two are kept and sent again, else ``resent
{found: false}``), and ``spill_read``/``spill_done`` (a spill file pulled piece by piece after its answer, when the
kernel does not see the parent's spill directory: spills.py).

The agent's cell is known exactly: ``pre_run_cell`` takes a cell only when the execute_request the running thread
handles carries the marker, and ``post_run_cell`` answers only for the same ExecutionInfo object on the same thread.
A cell of another client (the main shell's next cell, a cell on an ipykernel 7 subshell's thread, a ``run_cell``
nested in the agent's cell) is never taken for the agent's.

Every ipython-mcp connected to the kernel gets a comm of its own and a worker of its own behind it (its limits,
spill directory, request ids): the kernel runs their requests one at a time in its own order, as it runs any
client's. Every message to the Node side travels as ``{"m": <JSON text>}``, encoded as the local worker's JSON
codec does. Nothing is kept in the user namespace.
"""

from __future__ import annotations

import json
import os
import platform
import threading
import traceback
import uuid
from collections import deque
from typing import Any

from .. import __version__
from ..ipc.channel import Channel
from ..ipc.codec import CODEC_JSON
from ..protocol.constants import OPERATION_FACTS, PROTOCOL_VERSION, OperationFacts
from ..protocol.errors import OpError

COMM_TARGET = "_ipython_mcp_worker"
# How many of a connection's latest responses are kept for a ``resend``.
KEPT_RESPONSES = 2
METADATA_KEY = "ipython_mcp"
# The shell message type of an agent's cell, which only a kernel this side is in takes (_take_agent_cells).
AGENT_CELL_TYPE = "ipython_mcp_execute_request"


class _CommChannel(Channel):
    """The local channel's encoding (repair, size bound) over a comm: each frame's JSON text is sent as ``m``."""

    def __init__(self, comm: Any, limit: int) -> None:  # noqa: D107 - no fds: Channel.__init__ is not for this
        self.comm = comm
        self.limit = limit
        self.codec = CODEC_JSON
        self.reader = _Limit(limit)  # type: ignore[assignment]  # only its limit is read
        self._interrupter = None
        # The latest responses as sent, by request id: a response the Jupyter server dropped (its IOPub rate limits
        # drop any message but a status) is sent again when the parent asks (``resend``), having seen the request's
        # idle without it.
        self.kept: dict[int, str] = {}
        self._response_id: int | None = None

    def send(self, message: dict[str, Any]) -> None:
        request_id = message.get("id") if message.get("type") == "response" else None
        self._response_id = request_id if isinstance(request_id, int) else None
        try:
            super().send(message)
        finally:
            self._response_id = None

    def write_frame(self, frame: bytes) -> None:
        # A frame is a 4-byte length and a codec byte before the JSON text.
        text = frame[5:].decode("utf-8")
        if self._response_id is not None:
            self.kept[self._response_id] = text
            while len(self.kept) > KEPT_RESPONSES:
                del self.kept[next(iter(self.kept))]
        self.comm.send({"m": text})

    def resend(self, request_id: Any) -> None:
        text = self.kept.get(request_id) if isinstance(request_id, int) else None
        if text is None:
            self.comm.send({"m": json.dumps({"type": "resent", "id": request_id if isinstance(request_id, int) else None,
                                             "found": False})})
            return
        self.comm.send({"m": text})

    def operation_done(self) -> None:
        return None


class _Limit:
    def __init__(self, limit: int) -> None:
        self.limit = limit


class _NoInterrupter:
    """A kernel's interrupts are its own (SIGINT from the server's interrupt API, held and repeated for the agent's
    cell by interrupts.py): nothing to arm per request."""

    stop_reason = None

    def arm(self, request_id: int) -> None:
        return None

    def disarm(self) -> None:
        return None


class _Client:
    """One connected ipython-mcp: its comm, the channel over it, and the worker serving it."""

    def __init__(self, comm: Any, channel: _CommChannel) -> None:
        self.comm = comm
        self.channel = channel
        self.worker: Any = None
        # The ids of the latest requests this client's worker began (comm requests and cells): a ``probe`` lists
        # them, so the parent can tell a request lost with a dropped connection from one that ran.
        self.seen: deque[int] = deque(maxlen=1024)
        # The memory guard and process cleanup on this machine, for this client's cells (machine_guard.py).
        self.guard: Any = None
        # How this client's spill files reach it: "direct" (written into its own directory), "transfer" (pulled
        # after the cell, spills.py), or None (spilling off).
        self.spill_mode: str | None = None


class _Cell:
    """The agent's cell the kernel is running: IPython's ExecutionInfo of it (the same object post_run_cell's
    result carries), the thread it runs on, and whose request it is. A Code Mode ``run_code`` cell carries its
    ``CodeModeCell`` (code_mode_cell.py) instead of a display collector and capture."""

    def __init__(self, info: Any, client: _Client, request_id: int, displays: Any = None, capture: Any = None,
                 code_mode: Any = None) -> None:
        self.info = info
        self.thread = threading.get_ident()
        self.client = client
        self.request_id = request_id
        self.displays = displays
        self.capture = capture
        self.code_mode = code_mode


class KernelSide:
    """Every connected ipython-mcp of this kernel (one comm each) and the agent's cell the kernel is running."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.clients: dict[str, _Client] = {}
        self.cell: _Cell | None = None
        # A token of this kernel process: the same in every ready answer until the kernel restarts (a new process
        # boots a new side), so a parent can tell its comm closed from the namespace lost.
        self.session = uuid.uuid4().hex
        # The SIGINT handler of the kernel's requests: the agent's cell's interrupt held until the cell runs and
        # repeated until heard (interrupts.py); installed by attach().
        from .interrupts import AgentInterrupts

        kernel = getattr(shell, "kernel", None)
        self.interrupts = None if kernel is None else AgentInterrupts(kernel, lambda: _agent_request_id(shell))
        # The shell message type an agent's cell may come as (None: this kernel cannot take it; ready says which).
        self.agent_cell_type: str | None = None
        # The kernel itself ending (its server shutting down or restarting it, a shutdown_request, exit()): what the
        # agents' cells started in sessions of their own would outlive it, so it goes first. (SIGKILL leaves no say.)
        import atexit

        atexit.register(self.end_all_started)

    def end_all_started(self) -> None:
        """What every connected client's cells started and left running ends now (the kernel is exiting)."""
        for client in list(self.clients.values()):
            if client.guard is not None:
                try:
                    client.guard.end_started(wait=True)
                except Exception:  # noqa: BLE001 - the exit goes on whatever one client's clean-up meets
                    pass

    # -- comm ---------------------------------------------------------------------------------------------------

    def open(self, comm: Any, message: dict[str, Any]) -> None:
        channel = _CommChannel(comm, 1 << 20)
        client = _Client(comm, channel)
        self.clients[comm.comm_id] = client
        comm.on_msg(lambda msg: self.on_message(client, msg))
        comm.on_close(lambda msg: self.on_close(client))
        configure = message.get("content", {}).get("data") or {}
        failure = _configure_problem(configure)
        if failure is not None:
            channel.send({"type": "startup_failed", "error": {"code": "startup_failed", "message": failure}})
            return
        try:
            from .machine_guard import MachineGuard

            client.guard = MachineGuard(configure.get("kernel_guard"))
            client.worker, client.spill_mode = _build_worker(channel, self.shell, configure)
        except OpError as error:
            channel.send({"type": "startup_failed", "error": error.to_wire()})
            return
        except Exception as error:  # noqa: BLE001 - reported to the Node side, which fails the start-up with it
            text = "".join(traceback.format_exception_only(type(error), error)).strip()
            channel.send({"type": "startup_failed", "error": {"code": "startup_failed", "message": text[:2000]}})
            return
        import ipykernel
        import IPython

        channel.send({
            "type": "ready",
            "protocol": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "python": platform.python_version(),
            "ipython": IPython.__version__,
            "worker": __version__,
            "execution_count": self.shell.execution_count - 1,
            "protected_names": sorted(client.worker.operations.protected_names()),
            "kernel": {"implementation": "ipykernel", "version": str(getattr(ipykernel, "__version__", "?"))},
            "kernel_session": self.session,
            "clients": len(self.clients),
            "spill": client.spill_mode,
            "agent_cell_type": self.agent_cell_type,
        })

    def on_close(self, client: _Client) -> None:
        if self.clients.get(client.comm.comm_id) is client:
            del self.clients[client.comm.comm_id]
            # Its ipython-mcp shut down (or was ended): what its cells started does not outlive it.
            if client.guard is not None:
                client.guard.end_started()
        _retire_worker(client)

    def close_all(self) -> None:
        """Close every client's comm (a boot of another version replaces this side)."""
        for client in list(self.clients.values()):
            self.on_close(client)
            try:
                client.comm.close()
            except Exception:  # noqa: BLE001 - the comm's client may be gone already
                pass

    def on_message(self, client: _Client, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data")
        if isinstance(data, dict) and data.get("type") == "resend":
            client.channel.resend(data.get("id"))
            return
        if self.clients.get(client.comm.comm_id) is not client or client.worker is None:
            return
        channel = client.channel
        if not isinstance(data, dict):
            channel.send({"type": "protocol_error", "code": "invalid_request", "message": "a message must be an object"})
            return
        kind = data.get("type")
        if kind == "shutdown":
            self.on_close(client)
            try:
                client.comm.close()
            except Exception:  # noqa: BLE001
                pass
            return
        if kind == "probe":
            # Handled in order with the requests: every request sent before this probe that reached the kernel has
            # begun by now.
            channel.send({"type": "probe", "token": data.get("token"), "seen": list(client.seen)})
            return
        if kind in ("spill_read", "spill_done"):
            from . import spills

            directory = client.worker.owner.spills
            if kind == "spill_done":
                if isinstance(directory, spills.PrivateSpills):
                    directory.done(str(data.get("name")))
                return
            spills.send_raw(client.comm, spills.read_chunk(directory, data))
            return
        if kind != "request":
            channel.send({"type": "protocol_error", "code": "invalid_request",
                          "message": f"unexpected message type {str(kind)[:64]!r}"})
            return
        request_id = data.get("id")
        facts = _facts(data.get("op"))
        if facts is not None and facts.kernel_cell and facts.calls_host:
            # Its tool calls need the stdin channel of an execute_request (code_mode_cell.py), which a comm lacks.
            channel.send({"type": "response", "id": request_id, "ok": False, "error": {
                "code": "invalid_request", "message": "run_code runs as the kernel's own cell, not over the comm"}})
            return
        if isinstance(request_id, int):
            client.seen.append(request_id)
        interrupts = self.interrupts
        if interrupts is not None:
            # From here an interrupt is raised in the operation (one held since its comm_msg arrived is owed), and
            # repeated while unheard, as in the agent's cell (interrupts.py).
            interrupts.grace = getattr(client.guard, "grace", None)
            interrupts.running()
        try:
            client.worker.handle(data, _NoInterrupter())
        finally:
            if interrupts is not None:
                interrupts.answered()

    # -- the agent's cells, run by the kernel ---------------------------------------------------------------------

    def pre_run_cell(self, info: Any = None) -> None:
        # Only the cell whose own execute_request carries an agent's marker is the agent's: a cell of another client
        # (on the main shell or a subshell's thread), or one the agent's cell runs itself (run_cell inside it), is
        # left alone.
        cell = self.cell
        if cell is not None:
            if threading.get_ident() == cell.thread:
                cell.client.worker.owner.nested += 1
            return
        if info is None:
            return
        request = _agent_request(self.shell)
        if request is None:
            return
        if self.interrupts is not None:
            # Before the guard chains its handler onto ours; from here an interrupt is raised in the cell.
            self.interrupts.running()
        request_id, stream, comm_id, op, params = request
        client = self.clients.get(comm_id) if comm_id is not None else None
        if client is None or client.worker is None:
            return
        if self.interrupts is not None:
            # Repeats of an unheard interrupt stop where this client's parent stops waiting for the cell.
            self.interrupts.grace = getattr(client.guard, "grace", None)
        from ..shell.execute import cell_capture

        client.seen.append(request_id)
        if client.guard is not None:
            client.guard.begin()
        facts = _facts(op)
        if facts is not None and facts.calls_host:  # Code Mode's run_code: its calls travel on the cell's stdin
            from .code_mode_cell import CodeModeCell

            self.cell = _Cell(info, client, request_id, code_mode=CodeModeCell(client.worker, request_id, params))
            return
        worker = client.worker
        channel = client.channel
        send_event = None
        if stream:
            def send_event(kind: str, text: str) -> None:
                channel.send({"type": "event", "id": request_id, "kind": kind, "text": text})

        worker.operations.handler("execute")  # unsettles the registry, as the local worker's execute does
        worker.owner.begin(send_event, spill=True)
        worker.active_request_id = request_id
        capture, displays = cell_capture(worker.owner)
        worker.owner.enter_cell(capture)
        self.cell = _Cell(info, client, request_id, displays, capture)

    def post_run_cell(self, result: Any = None) -> None:
        cell = self.cell
        if cell is None or threading.get_ident() != cell.thread:
            return
        client = cell.client
        worker = client.worker
        if getattr(result, "info", None) is not cell.info and worker is not None and worker.owner.nested > 0:
            worker.owner.nested -= 1  # a cell the agent's cell ran itself
            return
        # The agent's cell's end. IPython gives a new ExecutionInfo when a KeyboardInterrupt landed in its own
        # machinery around the cell rather than in the cell's code: still this cell, still answered.
        self.cell = None
        if self.interrupts is not None:
            self.interrupts.end()
        guard = client.guard if client.guard is not None else _NoInterrupter()
        if client.guard is not None:
            client.guard.end()
        if worker is None or self.clients.get(client.comm.comm_id) is not client:
            return
        owner = worker.owner
        # The agent cell's value is the one its own displayhook call gave (owner.py), whatever ran beside it.
        if owner.cell_value is not None and result.error_in_exec is None:
            result.result = owner.cell_value[0]
        if cell.code_mode is not None:
            client.channel.send(cell.code_mode.finish(result, guard))
            return
        from ..shell.execute import execute_result

        operation = owner.operation
        if operation is None:
            return
        channel = client.channel

        def run() -> dict[str, Any]:
            outcome = owner.cell_outcome(result, cell.capture)
            value = execute_result(outcome, operation.stdout, operation.stderr, cell.displays, owner.limits)
            from .spills import shipped

            shipped(owner.spills, value)
            return value

        channel.send(worker.respond(cell.request_id, "execute", run, guard, operation))


def _retire_worker(client: _Client) -> None:
    """Forget the client's worker and remove its private spill directory (a direct one is the parent's)."""
    from .spills import PrivateSpills

    worker, client.worker = client.worker, None
    directory = None if worker is None else getattr(worker.owner, "spills", None)
    if isinstance(directory, PrivateSpills):
        directory.remove()


def _facts(op: Any) -> OperationFacts | None:
    """The operation's facts (operation-facts.json): ``kernel_cell`` ones run as the kernel's own cell, and of those a
    ``calls_host`` one (Code Mode's run_code) has its calls travel on the cell's stdin channel."""
    return OPERATION_FACTS.get(op) if isinstance(op, str) else None


def _agent_request_id(shell: Any) -> str | None:
    """The message id of the request the running thread handles if it is an agent's (an execute_request carrying an
    agent's marker, or a comm_msg carrying a ``request`` on an ipython-mcp's comm), else None (asked by the interrupt
    handler, interrupts.py, before the request's cell or operation begins)."""
    parent = _shell_parent(shell)
    header = (parent.get("header") or {}) if parent is not None else {}
    kind = header.get("msg_type")
    if kind in ("execute_request", AGENT_CELL_TYPE):
        if _agent_marker(parent) is None:
            return None
    elif kind == "comm_msg":
        content = (parent.get("content") or {}) if parent is not None else {}
        data = content.get("data")
        side = getattr(shell, _SIDE_ATTRIBUTE, None)
        if not isinstance(data, dict) or data.get("type") != "request" or side is None \
                or content.get("comm_id") not in getattr(side, "clients", {}):
            return None
    else:
        return None
    msg_id = header.get("msg_id")
    return msg_id if isinstance(msg_id, str) else None


def _shell_parent(shell: Any) -> dict[str, Any] | None:
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        parent = kernel.get_parent("shell")
    except TypeError:  # an ipykernel whose get_parent takes no channel
        parent = kernel.get_parent()
    return parent if isinstance(parent, dict) else None


def _agent_request(shell: Any) -> tuple[int, bool, str | None, str, dict[str, Any]] | None:
    """The id of the agent's request the running execute_request carries in its metadata, whether it streams, the
    comm of the ipython-mcp that sent it, its operation (``execute`` unless named) and its params; None for anyone
    else's cell. The parent is read on the running
    thread (ipykernel 7 keeps one per subshell). The code is the cell's own: nothing else in the request changes how
    it runs."""
    marker = _agent_marker(_shell_parent(shell))
    if marker is None:
        return None
    comm_id = marker.get("comm")
    params = marker.get("params")
    return (marker["id"], marker.get("stream") is True, comm_id if isinstance(comm_id, str) else None,
            str(marker.get("op") or "execute"), params if isinstance(params, dict) else {})


def _agent_marker(parent: dict[str, Any] | None) -> dict[str, Any] | None:
    """The agent's marker a request's metadata carries (its request id an int), or None for anyone else's request."""
    marker = (parent.get("metadata") or {}).get(METADATA_KEY) if parent is not None else None
    return marker if isinstance(marker, dict) and isinstance(marker.get("id"), int) else None


def _configure_problem(configure: Any) -> str | None:
    if not isinstance(configure, dict) or configure.get("type") != "configure":
        return "expected a configure message as the comm's opening data"
    if configure.get("protocol") != PROTOCOL_VERSION:
        return f"protocol mismatch: worker speaks {PROTOCOL_VERSION}, parent sent {configure.get('protocol')!r}"
    if configure.get("state") is not None:
        return "--state is not available in a Jupyter kernel"
    return None


def _build_worker(channel: _CommChannel, shell: Any, configure: dict[str, Any]) -> tuple[Any, str | None]:
    from ..worker import Worker
    from .owner import KernelShellOwner
    from .spills import choose

    # The kernel's memory is the kernel's: no allocation backstop is applied to it.
    settings = {key: value for key, value in configure.items()
                if key not in ("data_limit_bytes", "kernel_guard", "kernel_spill", "output_spill")}
    worker = Worker(channel, settings, lambda limits: KernelShellOwner(shell, limits))
    # The parent's spill directory when this kernel sees it, else a private one whose files the parent pulls.
    mode, worker.owner.spills = choose(configure.get("output_spill"), configure.get("kernel_spill"))
    worker.memory_backstop = False
    # Code Mode's tool calls travel on the kernel's stdin channel, from a run_code run as the kernel's own cell.
    from .code_mode_cell import serve_host_calls

    serve_host_calls(worker, shell)
    return worker, mode


# Where the served side is kept: an attribute of the shell, not a name of its user namespace, so that a boot with
# other sources (whose modules replace these) still finds and retires the side an earlier boot left.
_SIDE_ATTRIBUTE = "_ipython_mcp_kernel_side"


def attach(shell: Any) -> KernelSide:
    """Serve this kernel: (re)register the comm target and the cell hooks. Booting again replaces both."""
    previous = getattr(shell, _SIDE_ATTRIBUTE, None)
    if previous is not None and type(previous) is KernelSide:
        # The same code booted again (another ipython-mcp attaching): the side and its clients stay.
        shell.kernel.comm_manager.register_target(COMM_TARGET, previous.open)
        return previous
    if previous is not None:
        _detach_hooks(previous)
    side = KernelSide(shell)
    side.agent_cell_type = _take_agent_cells(shell.kernel)
    if side.interrupts is not None:
        side.interrupts.install()
        _render_without_handler_frames(shell)
    shell.kernel.comm_manager.register_target(COMM_TARGET, side.open)
    shell.events.register("pre_run_cell", side.pre_run_cell)
    shell.events.register("post_run_cell", side.post_run_cell)
    setattr(shell, _SIDE_ATTRIBUTE, side)
    return side


def _take_agent_cells(kernel: Any) -> str | None:
    """Lets the kernel take an agent's cell as an ``AGENT_CELL_TYPE`` shell message, handled as the execute_request it
    is (its header says so from then on, so every reply and output names an execute_request). A kernel this side is
    not in (restarted since, or never booted) does not know the type and runs nothing: an agent's cell can never
    run there unseen. Returns the type, or None where the kernel's handlers cannot be reached (then cells come as
    plain execute_requests, and the Node side asks before each whether the kernel restarted)."""
    handlers = getattr(kernel, "shell_handlers", None)
    if not isinstance(handlers, dict) or not callable(handlers.get("execute_request")):
        return None

    def agent_cell(stream: Any, ident: Any, parent: dict[str, Any]) -> Any:
        header = parent.get("header")
        if isinstance(header, dict):
            header["msg_type"] = "execute_request"
        return kernel.shell_handlers["execute_request"](stream, ident, parent)

    handlers[AGENT_CELL_TYPE] = agent_cell
    return AGENT_CELL_TYPE


def _render_without_handler_frames(shell: Any) -> None:
    """Tracebacks of the kernel's cells leave out the SIGINT handlers' frames (interrupts.py's, the machine guard's):
    a person's interrupted cell reads as it did under ipykernel's own handler."""
    from ..ipc.interrupter import Interrupter, hide_frames_of
    from ..shell.bookkeeping import render_without
    from .interrupts import AgentInterrupts
    from .machine_guard import MachineGuard

    hide_frames_of(AgentInterrupts._handle.__code__, MachineGuard._on_sigint.__code__)
    try:
        render_without(shell, Interrupter.hide_handler_frames)
    except AttributeError:  # a shell without IPython's traceback formatter
        pass


def _detach_hooks(side: Any) -> None:
    interrupts = getattr(side, "interrupts", None)
    if interrupts is not None:
        interrupts.close()
    for event, callback in (("pre_run_cell", side.pre_run_cell), ("post_run_cell", side.post_run_cell)):
        try:
            side.shell.events.unregister(event, callback)
        except ValueError:
            pass
    close_all = getattr(side, "close_all", None)
    if close_all is not None:
        close_all()
        return
    # A side of an older version, serving one comm.
    comm = getattr(side, "comm", None)
    side.comm = None
    retire = getattr(side, "retire_worker", None)
    if retire is not None:
        retire()
    if comm is not None:
        try:
            comm.close()
        except Exception:  # noqa: BLE001
            pass
