"""How Code Mode's nested calls reach the host: a transport under the one tool bridge (bridge.py).

The local worker's calls are frames on its channel (``PipeTransport``); a worker inside a Jupyter kernel sends them
as input requests on the kernel's stdin channel (kernel/stdin_calls.py). Either way the bridge does the rest: the
budget, the argument checks, the answer's value or ToolCallError.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..ipc.codec import encode_frame
from ..protocol.context import WorkerContext


class ToolTransport(Protocol):
    """Carries one nested call to the host and brings its ``tool_result`` back (main thread, blocking)."""

    def encode(self, message: dict[str, Any]) -> Any:
        """The call as it will be sent; raises FrameTooLarge (nothing sent) when it is over the size limit."""

    def round_trip(self, payload: Any, call_id: int) -> dict[str, Any]:
        """Send the encoded call and wait for the host's ``tool_result`` for ``call_id``; KeyboardInterrupt
        (an interrupt of the running request) propagates out of the wait."""


class PipeTransport:
    """The local worker's channel: a frame out, frames read on the main thread until the matching answer."""

    def __init__(self, worker: WorkerContext) -> None:
        self.worker = worker

    def encode(self, message: dict[str, Any]) -> bytes:
        channel = self.worker.channel
        return encode_frame(message, channel.codec, channel.limit)

    def round_trip(self, payload: bytes, call_id: int) -> dict[str, Any]:
        channel = self.worker.channel
        # The main thread reads its own answer (and any frame before it) instead of waiting for the reader thread
        # to hand it over; interrupts still reach it there.
        with channel.reading():
            channel.write_frame(payload)
            return channel.read_tool_result(call_id)
