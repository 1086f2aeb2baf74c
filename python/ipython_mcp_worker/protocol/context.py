"""What an operation handler may use of its worker: the typed context every handler module is built with."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # only for the checker: importing shell/owner.py here would import IPython before the handshake
    from IPython.core.interactiveshell import InteractiveShell

    from ..ipc.channel import Channel
    from ..shell.owner import ShellOwner
    from .limits import Limits

Handler = Callable[[dict[str, Any]], dict[str, Any]]
"""One operation: its ``params`` in, its ``result`` out; a failure raises ``OpError``."""


class WorkerContext(Protocol):
    """The worker as its handlers see it (``worker.Worker`` implements it). Read-only: handlers never rebind
    these; ``active_request_id`` is the id of the request being handled, None between requests."""

    @property
    def shell(self) -> InteractiveShell: ...

    @property
    def owner(self) -> ShellOwner: ...

    @property
    def limits(self) -> Limits: ...

    @property
    def channel(self) -> Channel: ...

    @property
    def active_request_id(self) -> int | None: ...
