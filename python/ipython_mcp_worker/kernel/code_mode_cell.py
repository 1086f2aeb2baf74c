"""A Code Mode ``run_code`` run as a kernel's own cell (docs/jupyter.md, "Code Mode on a kernel").

The Node side sends run_code as an ``execute_request`` with ``allow_stdin`` true whose metadata names the operation
(``{"ipython_mcp": {"id", "op": "run_code", "params"}}``). The kernel side's pre_run_cell hook begins it here with
the bridge's own set-up (bridge.py ``begin_cell``), the cell runs as any cell (its tool functions ask the host on
the stdin channel, stdin_calls.py), and post_run_cell answers with run_code's result on the comm.
"""

from __future__ import annotations

from typing import Any

from ..protocol.errors import OpError
from .stdin_calls import QuietInput, StdinTransport


class CodeModeCell:
    """One agent's run_code cell between the kernel's pre_run_cell and post_run_cell."""

    def __init__(self, worker: Any, request_id: int, params: dict[str, Any]) -> None:
        self.worker = worker
        self.request_id = request_id
        self.cell: Any = None
        self.failure: OpError | None = None
        self.quiet_input = QuietInput()
        worker.operations.handler("run_code")  # unsettles the registry, as the local worker's run_code does
        self.operation = worker.owner.begin(None, spill=False)
        worker.active_request_id = request_id
        try:
            self.cell = worker.operations.bridge.begin_cell(params)
        except OpError as error:
            # The cell runs anyway (a pre_run_cell hook cannot stop it): its answer is this failure.
            self.failure = error
            return
        worker.owner.enter_cell(self.cell.capture)
        self.quiet_input.__enter__()

    def finish(self, result: Any, interrupter: Any) -> dict[str, Any]:
        """The response to the request, from the cell's ExecutionResult; ends the operation."""
        worker = self.worker
        bridge = worker.operations.bridge
        cell = self.cell
        self.quiet_input.restore()

        def run() -> dict[str, Any]:
            if self.failure is not None:
                raise self.failure
            try:
                outcome = worker.owner.cell_outcome(result, cell.capture)
            finally:
                bridge.end_cell(cell)
            shaped: dict[str, Any] = bridge.cell_result(cell, outcome)
            return shaped

        response: dict[str, Any] = worker.respond(self.request_id, "run_code", run, interrupter, self.operation)
        return response


def serve_host_calls(worker: Any, shell: Any) -> None:
    """Lets the worker's Code Mode functions call the host from a kernel: over its stdin channel."""
    worker.host_calls = True
    worker.operations.bridge.transport = StdinTransport(shell, worker.limits.max_ipc_message_bytes)
