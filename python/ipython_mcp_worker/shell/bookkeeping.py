"""What the worker changes in IPython's shell: history records it turns off, and how tracebacks are rendered.

The worker's history is disabled and nothing reads these records, yet IPython 9 keeps them (only ``%notebook``,
which needs the history, would read them):
- every stdout/stderr write, teed into ``history_manager.outputs`` and never dropped: a cell printing 1 GB would
  keep 1 GB alive (our sinks already keep a bounded prefix);
- every failed cell's traceback, rendered a second time for ``history_manager.exceptions`` and never dropped: each
  error and each interrupt cost two renders, and a long session kept every traceback it ever had.
Both hooks are private IPython API: each is replaced only where it exists.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

# Shared and reusable: IPython enters two tees per cell, and a generator-based context manager per tee costs more.
_NO_TEE = contextlib.nullcontext()


def _no_tee(channel: str = "stdout") -> contextlib.nullcontext[None]:
    return _NO_TEE


class _Discarded(dict):  # type: ignore[type-arg]
    """A mapping that keeps nothing written to it (the history's exceptions, which nobody reads here)."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


_NOT_STORED: dict[str, Any] = {"ename": "", "evalue": "", "traceback": []}


def _not_stored(exception: BaseException, filename: Any = None, running_compiled_code: bool = False) -> dict[str, Any]:
    return _NOT_STORED


def turn_off(shell: Any) -> None:
    """Turn off the records above on ``shell``."""
    if hasattr(shell, "_tee"):
        shell._tee = _no_tee
    if hasattr(shell, "_format_exception_for_storage"):
        shell._format_exception_for_storage = _not_stored
        history = getattr(shell, "history_manager", None)
        if history is not None and isinstance(getattr(history, "exceptions", None), dict):
            history.exceptions = _Discarded()


def render_without(shell: Any, hide: Callable[[BaseException | None], None]) -> None:
    """Have the shell's traceback formatter call ``hide`` on each exception before it renders it (the worker's
    SIGINT handler frame, channel.py)."""
    formatter = shell.InteractiveTB
    render = formatter.structured_traceback

    def structured_traceback(etype: Any, evalue: Any, etb: Any = None, *args: Any, **kwargs: Any) -> Any:
        if isinstance(evalue, BaseException):
            hide(evalue)
        return render(etype, evalue, etb, *args, **kwargs)

    formatter.structured_traceback = structured_traceback
