"""The one place an exception becomes error details: type name, bounded message, bounded traceback.

call_function, call_tool and execute all report what user code raised with the same fields (``type``,
``message``, ``message_truncated``, ``traceback``, ``traceback_truncated``) and the same bounds. Nothing here
runs user code it can avoid: type names are read statically; ``str(error)`` and traceback formatting (which
reads ``__notes__`` and ``__str__``) may raise, and fall back to a fixed text. KeyboardInterrupt (the parent's
interrupt) always propagates.
"""

from __future__ import annotations

import os
import re
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


# -- Tracebacks a model can read ------------------------------------------------------------------------------
#
# IPython shows every frame with its context lines, so a KeyError from ``df['nope']`` is 2,000 characters of pandas
# internals and Cython frames saying "Could not get source". A model needs its own line, where the call went, and
# the exception. So the frames of the user's cells, of files under the configured library paths and of any other
# file of the user's stay whole; library frames (site-packages, the standard library, Cython sources named by a
# relative path, ``<frozen …>`` modules) become one line each (``pandas/core/indexes/base.py:3816 in get_loc``);
# a run of more than MAX_FOLDED_RUN of them shows its first and last around a count. Every line that is not part of
# a frame (exception lines, "The above exception was the direct cause…", each chained traceback's header) stays.
# execute (for the MCP server) and run_code (for Code Mode) both answer this form; folding happens before the
# traceback is bounded, so a small max_traceback_chars keeps the user's line and the exception.

MAX_FOLDED_RUN = 3
"""A run of collapsed library frames longer than this shows only its first and last frame."""

# ``File /path/to/module.py:3816, in Index.get_loc(self, key)`` (IPython 8+ context and verbose modes).
_FRAME_HEADER = re.compile(r"File (.+?):(\d+), in (.+)")
# ``Cell In[6], line 1``: the user's own cell.
_CELL_HEADER = re.compile(r"Cell In\[\d+\], line \d+")
# A source line of a frame: ``   3815 try:``, ``-> 3816     return …``, ``----> 1 df['nope']``.
_SOURCE_LINE = re.compile(r"(?:\s*\d+(?:\s|$)|-*>\s*\d+(?:\s|$))")
# The library roots whose paths are shown from below them (the last one wins: lib/python3.11/site-packages/).
_LIBRARY_ROOT = re.compile(
    r"[\\/](?:site-packages|dist-packages)(?=[\\/])|[\\/]lib[\\/]python\d+(?:\.\d+)?t?(?=[\\/])", re.IGNORECASE
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BANNER = re.compile(r"\S+\s{2,}Traceback \(most recent call last\)")
_RULE = re.compile(r"-{20,}")

_trusted_roots: tuple[str, ...] = ()


def trust_library_paths(paths: list[str]) -> None:
    """The configured library directories (IPYTHON_MCP_LIBRARY_PATHS), whose frames stay whole; set once, at
    configure, before any user code runs."""
    global _trusted_roots
    _trusted_roots = tuple(os.path.abspath(path) for path in paths)


def clean_traceback(text: str) -> str:
    """IPython's traceback without colour codes, its 75-dash rule and the padded "Traceback (most recent call
    last)" banner that opens it (a chained traceback's own header line stays: it says which exception follows)."""
    lines = _ANSI.sub("", text).split("\n")
    kept = [
        line
        for index, line in enumerate(lines)
        if not _RULE.fullmatch(line) and not (index <= 2 and _BANNER.fullmatch(line))
    ]
    return "\n".join(kept).lstrip("\n")


def _library_line(file: str, line: str, where: str, trusted: tuple[str, ...]) -> str | None:
    """The one-line form of a library frame; None for a frame that stays whole."""
    absolute = file.startswith("/") or re.match(r"[A-Za-z]:[\\/]", file) is not None
    if absolute and any(file == root or file.startswith(root.rstrip(os.sep) + os.sep) for root in trusted):
        return None
    ends = [found.end() + 1 for found in _LIBRARY_ROOT.finditer(file)]
    if ends:
        shown = file[ends[-1] :]
    elif file.startswith("<frozen ") or (not absolute and not file.startswith("<")):
        shown = file  # a frozen stdlib module, or a Cython source (pandas/_libs/index.pyx) named from its package
    else:
        return None
    name = re.sub(r"\(.*$", "", where, flags=re.DOTALL).split(".")[-1]
    return f"{shown}:{line} in {name}"


def fold_traceback(text: str, trusted: tuple[str, ...] | None = None) -> str:
    """``text`` (a cleaned IPython traceback) with library frames one line each and long runs of them folded;
    the same string when there is nothing to fold. ``trusted`` defaults to the configured library paths."""
    roots = _trusted_roots if trusted is None else tuple(os.path.abspath(path) for path in trusted)
    # Each part: a line outside any frame (str), or a frame as [header, body lines, one-line form or None].
    parts: list[str | tuple[str, list[str], str | None]] = []
    body: list[str] | None = None
    for line in text.split("\n"):
        header = _FRAME_HEADER.fullmatch(line)
        if header is not None or _CELL_HEADER.match(line):
            short = None if header is None else _library_line(header[1], header[2], header[3], roots)
            body = []
            parts.append((line, body, short))
        elif body is not None and _SOURCE_LINE.match(line):
            body.append(line)
        else:
            body = None
            parts.append(line)
    if not any(type(part) is tuple and part[2] is not None for part in parts):
        return text
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) > MAX_FOLDED_RUN:
            out.extend((run[0], f"... {len(run) - 2} more library frames ...", run[-1]))
        else:
            out.extend(run)
        run.clear()

    previous: str | tuple[str, list[str], str | None] | None = None
    for part in parts:
        if isinstance(part, str):
            # The blank line IPython puts after a frame goes with the frame when the frame became one line.
            if not (part == "" and run and isinstance(previous, tuple) and previous[2] is not None):
                flush()
                out.append(part)
        elif part[2] is not None:
            run.append(part[2])
        else:
            flush()
            out.append(part[0])
            out.extend(part[1])
        previous = part
    flush()
    return "\n".join(out)


def readable_traceback(rendered: str, limit: int) -> dict[str, Any]:
    """The error fields of an IPython-rendered traceback: ``traceback`` cleaned and folded, then bounded to its
    last ``limit`` characters; ``full_traceback`` the cleaned whole (bounded the same way), only when folding
    changed something."""
    whole = clean_traceback(rendered)
    folded = fold_traceback(whole)
    text, truncated = keep_tail(folded, limit)
    fields: dict[str, Any] = {"traceback": text, "traceback_truncated": truncated}
    if folded != whole:
        fields["full_traceback"] = keep_tail(whole, limit)[0]
    return fields


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
    """The error details of what user code raised. ``traceback_text`` is a traceback IPython already rendered
    (execute, run_code): it is cleaned and folded before it is bounded (``readable_traceback``). Otherwise the
    exception's own is formatted, skipping the caller's ``skip_frames`` frames, and bounded."""
    message, message_truncated = exception_message(error, limits.max_text_chars)
    if traceback_text is None:
        text, traceback_truncated = keep_tail(format_traceback(error, skip_frames), limits.max_traceback_chars)
        shown: dict[str, Any] = {"traceback": text, "traceback_truncated": traceback_truncated}
    else:
        shown = readable_traceback(traceback_text, limits.max_traceback_chars)
    return {
        "type": exception_type(error, with_module=with_module),
        "message": message,
        "message_truncated": message_truncated,
        **shown,
    }
