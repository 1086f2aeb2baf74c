"""The worker's half of the memory guard (the parent watches resident memory; see docs/protocol.md).

Two things happen here. The allocation backstop: the parent may send ``data_limit_bytes``, and the worker sets its
soft RLIMIT_DATA to it, so one allocation far past the limit (``b'x' * 2**31``) fails at once as MemoryError inside
the cell instead of filling pages faster than anything can watch. And the release: after an operation stopped for
memory, what the stopped code left unreachable is freed before the worker answers, so the parent's check "did
memory fall back below the limit?" is about the namespace, not about the stopped cell's frames.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from typing import Any

from ..protocol.errors import OpError


def apply_backstop(limit_bytes: Any) -> bool:
    """Set the soft RLIMIT_DATA to ``limit_bytes`` (never above the hard limit). False where the system has none.

    Only the soft limit: the hard one stays, so trusted code can lift the backstop again (this is no sandbox).
    """
    if not isinstance(limit_bytes, int) or isinstance(limit_bytes, bool) or limit_bytes <= 0:
        return False
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY and hard < limit_bytes:
            limit_bytes = hard
        resource.setrlimit(resource.RLIMIT_DATA, (limit_bytes, hard))
    except (ImportError, AttributeError, ValueError, OSError):
        return False
    return True


def is_memory_error(error: BaseException | None) -> bool:
    """Whether an operation ended in MemoryError (numpy's ``_ArrayMemoryError`` is a subclass)."""
    return isinstance(error, MemoryError)


def release(shell: Any) -> None:
    """Free what a cell stopped for memory left unreachable.

    The stopped cell's traceback keeps its frames, and so every local of every frame (a list being filled inside a
    function), alive through ``sys.last_*``, the shell's last result and its traceback formatter; those frames also
    sit in reference cycles. Dropping the traceback references and collecting frees them; ``malloc_trim`` hands
    the freed heap back to the system, so resident memory falls. Only the stopped cell's traceback is lost (``%tb``
    and ``%debug`` have nothing to show for it); user names are untouched.
    """
    errors: list[Any] = [getattr(sys, "last_value", None), getattr(sys, "last_exc", None)]
    last = getattr(shell, "last_execution_result", None)
    if last is not None:
        errors += [getattr(last, "error_in_exec", None), getattr(last, "error_before_exec", None)]
    for error in errors:
        if isinstance(error, BaseException):
            try:
                error.__traceback__ = None
            except (AttributeError, TypeError):
                pass
    if hasattr(sys, "last_traceback"):
        sys.last_traceback = None
    formatter = getattr(shell, "InteractiveTB", None)
    if formatter is not None and getattr(formatter, "tb", None) is not None:
        formatter.tb = None
    gc.collect()
    _malloc_trim()


def _malloc_trim() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        pass


def memory_limit_error(trigger: str) -> OpError:
    """The worker's answer for an operation that stopped for memory; the parent adds the outcome and numbers."""
    if trigger == "allocation":
        message = "an allocation failed (MemoryError) under the memory guard"
    else:
        message = "the operation was stopped by the memory guard"
    return OpError("memory_limit", message, {"trigger": trigger})
