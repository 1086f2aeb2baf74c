"""The one place an exception becomes error details: type name, bounded message, bounded traceback.

call_function, call_tool and execute all report what user code raised with the same fields (``type``,
``message``, ``message_truncated``, ``traceback``, ``traceback_truncated``) and the same bounds. Nothing here
runs user code it can avoid: type names are read statically; ``str(error)`` and traceback formatting (which
reads ``__notes__`` and ``__str__``) may raise, and fall back to a fixed text. KeyboardInterrupt (the parent's
interrupt) always propagates.
"""

from __future__ import annotations

import traceback
from typing import Any

from ..inspection.static import type_module, type_qualname
from ..protocol.limits import Limits, bound_text


def exception_type(error: BaseException, *, with_module: bool = False) -> str:
    """``Qualname`` of the exception's type, read statically; ``module.Qualname`` outside builtins on request."""
    kind = type(error)
    qualname = type_qualname(kind) or "BaseException"
    if with_module:
        module = type_module(kind)
        if module and module != "builtins":
            return f"{module}.{qualname}"
    return qualname


def exception_message(error: BaseException, limit: int) -> tuple[str, bool]:
    """``str(error)`` bounded to ``limit`` characters, surviving a ``__str__`` that raises anything."""
    try:
        text = str(error)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a __str__ may raise anything, SystemExit included
        text = f"<{exception_type(error)}; str() raised>"
    return bound_text(text, limit)


def describe_exception(error: BaseException, limit: int) -> tuple[str, str, bool]:
    """(type name, bounded message, message truncated): the short form (inspect, reload, start-up failures)."""
    message, truncated = exception_message(error, limit)
    return exception_type(error), message, truncated


def keep_tail(text: str, limit: int) -> tuple[str, bool]:
    """The last ``limit`` characters of a traceback: the failing frame and the exception are at its end."""
    if len(text) <= limit:
        return text, False
    return text[len(text) - limit :], True


def format_traceback(error: BaseException, skip_frames: int) -> str:
    """The formatted traceback without our own ``skip_frames`` leading frames."""
    tb = error.__traceback__
    for _ in range(skip_frames):
        if tb is not None:
            tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(error), error, tb))
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - formatting touches user attributes (__notes__, str)
        return f"{exception_type(error)}: <traceback unavailable>\n"


def exception_details(
    error: BaseException,
    limits: Limits,
    *,
    traceback_text: str | None = None,
    skip_frames: int = 1,
    with_module: bool = False,
) -> dict[str, Any]:
    """The error details of what user code raised. ``traceback_text`` is a traceback already rendered (IPython's,
    for execute); otherwise the exception's own is formatted, skipping the caller's ``skip_frames`` frames."""
    message, message_truncated = exception_message(error, limits.max_text_chars)
    if traceback_text is None:
        traceback_text = format_traceback(error, skip_frames)
    text, traceback_truncated = keep_tail(traceback_text, limits.max_traceback_chars)
    return {
        "type": exception_type(error, with_module=with_module),
        "message": message,
        "message_truncated": message_truncated,
        "traceback": text,
        "traceback_truncated": traceback_truncated,
    }
