"""The execute operation: one cell with the request's own stdout and stderr, every display kept, and its result.

The result (docs/protocol.md, "execute") gives each stream bounded with the exact count of what was omitted, where
it was cut and its spill file, the value as JSON or text, the displays, and the structured error.
"""

from __future__ import annotations

from typing import Any

from ..capture.cell import CellCapture, CellOutcome, ValueCodec
from ..capture.displays import DisplayCollector, ImageRoom
from ..capture.sinks import TextSink
from ..protocol.errors import OpError
from ..protocol.limits import Limits
from ..protocol.params import require_str
from ..values.jsonvalue import encode_text
from .owner import ShellOwner


def execute(owner: ShellOwner, params: dict[str, Any]) -> dict[str, Any]:
    """``{"code"}`` → execute's result."""
    operation = owner.operation
    if operation is None:
        raise OpError("internal_error", "execute ran outside an operation")
    code = require_str(params, "code")
    capture, displays = cell_capture(owner)
    outcome = owner.run_cell(code, capture)
    return execute_result(outcome, operation.stdout, operation.stderr, displays, owner.limits)


def cell_capture(owner: ShellOwner) -> tuple[CellCapture, DisplayCollector]:
    """The capture of execute's cell in the active operation: its streams, every display kept, its value."""
    operation = owner.operation
    if operation is None:
        raise OpError("internal_error", "execute ran outside an operation")
    limits = owner.limits
    images = ImageRoom.for_cell(limits)
    displays = DisplayCollector(limits, images)
    return CellCapture(operation.stdout, operation.stderr, displays, ValueCodec(limits, images)), displays


def execute_result(
    outcome: CellOutcome, stdout: TextSink, stderr: TextSink, displays: DisplayCollector, limits: Limits
) -> dict[str, Any]:
    value = outcome.value
    return {
        "status": outcome.status,
        "execution_count": outcome.execution_count,
        "stdout": stdout.text(),
        "stderr": stderr.text(),
        "stdout_omitted_chars": stdout.omitted,
        "stderr_omitted_chars": stderr.omitted,
        **_cut_fields("stdout", stdout),
        **_cut_fields("stderr", stderr),
        "truncated": {
            "stdout": stdout.truncated,
            "stderr": stderr.truncated,
            "result": value is not None and value.truncated,
            "displays": displays.truncated,
        },
        "result": None if value is None else value.value,
        "displays": displays.displays,
        "displays_omitted": displays.omitted,
        "error": outcome.error_details(limits),
    }


def _cut_fields(name: str, sink: TextSink) -> dict[str, Any]:
    """Where a truncated stream was cut, and its spill file (closed first, so it is whole); nothing otherwise."""
    at = sink.omitted_at
    if at is None:
        return {}
    sink.finish()
    # Text with lone surrogates reaches the parent escaped (repair.py, each one as ``\udcXX``): the position is
    # counted in the escaped head then, so it still falls between head and tail.
    head = sink.text()[:at]
    escaped = encode_text(head)
    fields: dict[str, Any] = {f"{name}_omitted_at": at if escaped is None else len(escaped)}
    spill = sink.spill
    if spill is not None:
        fields[f"{name}_spill"] = spill.path
        if spill.omitted:
            fields[f"{name}_spill_omitted_chars"] = spill.omitted
    return fields
