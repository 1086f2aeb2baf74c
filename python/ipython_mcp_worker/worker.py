"""Worker entry point: handshake, shell construction, and the single-owner request loop."""

from __future__ import annotations

import os
import platform
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import __version__
from .ipc.channel import Channel, Interrupter
from .ipc.codec import CODEC_NAMES, FrameError, FrameTooLarge, available_codecs
from .ipc.lifeline import guard
from .protocol.constants import OPERATION_FACTS, PROTOCOL_VERSION
from .protocol.errors import OpError
from .protocol.limits import Limits, bound_text
from .shell.memory import apply_backstop, is_memory_error, memory_limit_error, release

if TYPE_CHECKING:  # the shell owner imports IPython, which the worker loads only after the handshake
    from .shell.owner import Operation, ShellOwner

FD_IN = 3
FD_OUT = 4
BOOT_LIMIT = 1 << 20


class Worker:
    """One worker lifespan: the shell, the handler table, and the request loop (the handlers' WorkerContext)."""

    def __init__(
        self, channel: Channel, configure: dict[str, Any], make_owner: Callable[[Limits], ShellOwner] | None = None
    ) -> None:
        """``make_owner``: the shell owner to serve (a kernel's shell, kernel/owner.py); unset, a shell of its own."""
        # Imported when the worker is built, not at module load: both pull in IPython's shell machinery.
        from .capture.spill import SpillDirectory
        from .ops import Operations
        from .shell.owner import ShellOwner

        self.channel = channel
        self.limits = Limits.from_wire(configure.get("limits"))
        channel.limit = self.limits.max_ipc_message_bytes
        channel.reader.limit = self.limits.max_ipc_message_bytes
        self.owner = ShellOwner(self.limits) if make_owner is None else make_owner(self.limits)
        self.owner.spills = SpillDirectory.from_configure(configure.get("output_spill"))
        self.shell = self.owner.shell
        # The id of the request being handled, or None between requests (the tool bridge reads it).
        self.active_request_id: int | None = None
        # Whether the host answers nested tool calls mid-operation (Code Mode); a kernel's host cannot (kernel/).
        self.host_calls = True
        # Every operation, execute included (ops.py); this worker is the handlers' WorkerContext.
        self.operations = Operations(self, configure)
        # Set last, so start-up (IPython, preloads) is not held to it: the memory guard watches operations.
        self.memory_backstop = apply_backstop(configure.get("data_limit_bytes"))

    def run_forever(self, interrupter: Interrupter) -> bool:
        """Serves until the parent ends it; True for a graceful ``shutdown`` (the one end that saves state)."""
        while True:
            # The main thread reads its own next request: it wakes for it directly (channel.py).
            message = self.channel.next_request()
            if message is None:
                return False
            if message.get("type") == "shutdown":
                return True
            self.handle(message, interrupter)

    def send_state_report(self, report: dict[str, Any]) -> None:
        """Tells the parent what a save did (``runtime_status.state``); the parent may be gone at the very end."""
        try:
            self.channel.send({"type": "state_report", "report": report})
        except OSError:
            pass

    def handle(self, message: dict[str, Any], interrupter: Interrupter) -> None:
        request_id = message.get("id")
        op = message.get("op")
        params = message.get("params")
        if not isinstance(request_id, int) or not isinstance(op, str) or not isinstance(params, dict):
            self.channel.send({"type": "protocol_error", "code": "invalid_request",
                               "message": "a request needs an integer id, a string op and an object params",
                               **({"id": request_id} if isinstance(request_id, int) else {})})
            return
        stream = None
        if message.get("stream") is True:
            def stream(kind: str, text: str) -> None:
                self.channel.send({"type": "event", "id": request_id, "kind": kind, "text": text})
        facts = OPERATION_FACTS.get(op)
        operation = self.owner.begin(stream, spill=facts is not None and facts.spills_streams)
        self.active_request_id = request_id

        def run() -> dict[str, Any]:
            if facts is not None and facts.calls_host and not self.host_calls:
                raise OpError("invalid_request", f"{op} calls back into the host mid-operation, which is not "
                                                 "available in a Jupyter kernel")
            handler = self.operations.handler(op)
            if handler is None:
                raise OpError("invalid_request", f"unknown operation {op[:64]!r}")
            return handler(params)

        response = self.respond(request_id, op, run, interrupter, operation)
        self.channel.operation_done()
        self.channel.send(response)

    def respond(
        self, request_id: int, op: str, run: Callable[[], dict[str, Any]], interrupter: Interrupter, operation: Operation
    ) -> dict[str, Any]:
        """The response to request ``request_id``, whose ``operation`` has begun: ``run`` gives its result, or raises.

        Every outcome becomes a response (a failure, an interrupt, anything raised); the operation ends here, and
        the registry is reconciled after it as its facts say. A kernel's cell comes here from its post_run_cell hook
        (kernel/), with ``run`` shaping what the cell already did.
        """
        response: dict[str, Any]
        # Whether the operation ended in MemoryError (reported as memory_limit while the backstop is on).
        out_of_memory = False
        # The registry's revision after the operation, when the response carries one (ops.py).
        revision: int | None = None
        try:
            try:
                interrupter.arm(request_id)
                # Reconciled while still armed: it may run user code (a __signature__) that an interrupt must
                # reach. After an OpError too: the operation may have redefined callables before it failed.
                try:
                    result = run()
                except OpError:
                    revision = self.operations.catalog_revision(op)
                    raise
                revision = self.operations.catalog_revision(op)
            finally:
                interrupter.disarm()
            response = {"type": "response", "id": request_id, "ok": True, "result": result}
            if revision is not None:
                response["catalog_revision"] = revision
        except OpError as error:
            # call_function / call_tool wrap what the call raised; the original stays the context.
            out_of_memory = error.code == "call_raised" and is_memory_error(error.__context__)
            response = {"type": "response", "id": request_id, "ok": False, "error": error.to_wire()}
            if revision is not None:
                response["catalog_revision"] = revision
        except KeyboardInterrupt:
            interrupter.disarm()
            response = {"type": "response", "id": request_id, "ok": False,
                        "error": {"code": "operation_cancelled", "message": "the operation was interrupted"}}
        except BaseException as error:  # noqa: BLE001 - the loop must survive any op failure, SystemExit included
            # (e.g. a __repr__ raising SystemExit while the result is rendered); KeyboardInterrupt is handled above.
            out_of_memory = is_memory_error(error)
            text, _ = bound_text("".join(traceback.format_exception_only(type(error), error)).strip(),
                                 self.limits.max_text_chars)
            response = {"type": "response", "id": request_id, "ok": False,
                        "error": {"code": "internal_error", "message": text}}
        finally:
            self.active_request_id = None
            try:
                self.owner.end()
            except KeyboardInterrupt:
                self.owner.operation = None
        stopped_for_memory = interrupter.stop_reason == "memory_limit"
        if stopped_for_memory or (self.memory_backstop and (out_of_memory or operation.memory_error)):
            # A guard beside the worker (a kernel's machine guard) says whether the limit was crossed after another
            # stop had interrupted the operation, and its limit: the parent measures nothing there.
            after = stopped_for_memory and getattr(interrupter, "memory_after_interrupt", False) is True
            limit = getattr(interrupter, "limit", None)
            response = self._memory_stop(request_id, "watch" if stopped_for_memory else "allocation", after,
                                         limit if isinstance(limit, int) else None)
        return response

    def _memory_stop(self, request_id: int, trigger: str, after: bool = False,
                     limit_bytes: int | None = None) -> dict[str, Any]:
        """Release what the stopped operation left unreachable, then answer memory_limit."""
        try:
            release(self.shell)
        except BaseException:  # noqa: BLE001 - best effort (a late interrupt, MemoryError while collecting)
            pass
        error = memory_limit_error(trigger).to_wire()
        details = error.setdefault("details", {})
        if after:
            details["after_interrupt"] = True
        if limit_bytes is not None:
            details["limit_mb"] = round(limit_bytes / 2**20)
        return {"type": "response", "id": request_id, "ok": False, "error": error}


def _startup_failed(channel: Channel, message: str) -> int:
    channel.send({"type": "startup_failed", "error": {"code": "startup_failed", "message": message}})
    return 3


def main() -> int:
    # First of all: die with the parent, and take every process user code starts down with this one.
    guard()
    from .shell.packages import activate_environment

    # Before user code and before IPython starts anything: `!pip` and `!python` must reach this interpreter.
    activate_environment()
    # Until the interrupter takes over, a stray SIGINT (a terminal's Ctrl-C) must not kill start-up.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Keep a private copy of the original stderr for fatal start-up diagnostics before fd 2 is captured.
    diagnostics = os.dup(2)
    channel = Channel(FD_IN, FD_OUT, BOOT_LIMIT)
    import IPython

    try:
        channel.send({
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "codecs": available_codecs(),
            "pid": os.getpid(),
            "python": platform.python_version(),
            "ipython": IPython.__version__,
            "worker": __version__,
        })
        configure = channel.read_one()
    except OSError:
        return 0  # the parent closed the channel during the handshake: it went away, nothing to report
    except (FrameError, FrameTooLarge) as error:
        return _startup_failed(channel, f"unreadable configure message: {str(error)[:200]}")
    # End of file or a shutdown before configure: the parent abandoned this start-up (it is closing). Not an error.
    if configure is None or configure.get("type") == "shutdown":
        return 0
    if configure.get("type") != "configure":
        return _startup_failed(channel, f"expected a configure message, got {str(configure.get('type'))[:64]!r}")
    if configure.get("protocol") != PROTOCOL_VERSION:
        return _startup_failed(
            channel, f"protocol mismatch: worker speaks {PROTOCOL_VERSION}, parent sent {configure.get('protocol')!r}")
    codec = configure.get("codec", "json")
    if codec not in available_codecs():
        codec = "json"
    channel.codec = CODEC_NAMES[codec]
    try:
        worker = Worker(channel, configure)
    except OpError as error:
        channel.send({"type": "startup_failed", "error": error.to_wire()})
        return 3
    except Exception as error:  # noqa: BLE001
        message = "".join(traceback.format_exception_only(type(error), error)).strip()
        os.write(diagnostics, f"ipython-mcp worker: start-up failed: {message}\n".encode())
        channel.send({"type": "startup_failed", "error": {"code": "startup_failed", "message": message[:2000]}})
        return 3
    # Before ready, never later: a worker is handed work (a promoted standby, at once) as soon as it says ready, and
    # its first interrupt must be as quick as any other to land inside the grace period (warmup.py).
    from .shell.warmup import warm_up

    warm_up(worker.shell)
    # --state FILE: the first worker of a lifespan loads the snapshot before it says ready (state/snapshot.py).
    state = worker.operations.state
    restored = None
    if state is not None:
        state.install_magic(worker.send_state_report)
        if state.config.restore:
            restored = state.restore()
    # SIGINT is ours from here on: it only ever interrupts an armed request.
    interrupter = Interrupter()
    channel.interrupter = interrupter
    channel.start_reader()
    channel.send({
        "type": "ready",
        "execution_count": worker.shell.execution_count - 1,
        "protected_names": sorted(worker.operations.protected_names()),
        **({"state": restored} if restored is not None else {}),
    })
    if worker.run_forever(interrupter) and state is not None:
        worker.send_state_report(state.save())
    return 0
