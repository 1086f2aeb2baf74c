"""Text sinks: where an operation's stdout and stderr go, bounded as they stream in.

``HeadTailSink`` keeps a head and a tail of each stream within the text budget and counts what lies between
exactly; ``PrefixSink`` keeps a prefix (Code Mode's one combined output). Both hold memory bounded by the budget
whatever is written.

Both take Python-level writes (``write``) and fd-level ones (``fd.write``, from the drain thread) apart
(``_TwoSided``), so that a line one side has begun is never spliced by the other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .spill import SpillFile


class Writer(Protocol):
    """Anything output can be written into: what the stream router and the fd drain need of a sink."""

    def write(self, text: str) -> None: ...


class TextSink(Writer, Protocol):
    """A bounded stream an operation reads back: a HeadTailSink, with what it omitted and where, and its spill file."""

    @property
    def omitted(self) -> int: ...

    @property
    def truncated(self) -> bool: ...

    @property
    def omitted_at(self) -> int | None: ...

    @property
    def spill(self) -> SpillFile | None: ...

    def text(self) -> str: ...

    def finish(self) -> None: ...


# What one side may hold back while the other side's line is open; past it the held text goes in at once (memory
# stays bounded ahead of line order).
_HOLD_LIMIT = 1 << 16


class _FdSide:
    """The fd-level side of a two-sided sink: what the drain thread writes."""

    __slots__ = ("_sink",)

    def __init__(self, sink: _TwoSided) -> None:
        self._sink = sink

    def write(self, text: str) -> None:
        self._sink.write(text, 1)


class _TwoSided:
    """Where Python-level writes (``write``, side 0) and fd-level ones (``fd.write``, side 1) meet in one sink.

    Both come at once: a cell's ``print`` on its thread, and what C code or a subprocess wrote to fd 1/2, read by the
    drain thread. ``print("x")`` is two writes (``"x"``, then ``"\\n"``), so a plain shared sink can take fd text
    between them and the result reads ``xfd line\\n\\n``. Here, while one side's line is open (its last text did
    not end in a newline), what the other side writes waits, and goes in as soon as that line ends, at ``release``
    (the operation's end), or once ``_HOLD_LIMIT`` characters wait. Whole lines go in in the order they came.

    A subclass gives ``_lock`` and ``_put_locked(text)``, which stores text under the lock and returns what of it to
    stream (``_on_text``, called after the lock is let go).
    """

    _lock: threading.Lock
    _on_text: Callable[[str], None] | None

    def _init_sides(self) -> None:
        self.fd: Writer = _FdSide(self)
        self._open: int | None = None  # the side whose line is open, or None after a newline
        self._held: tuple[list[str], list[str]] = ([], [])
        self._held_size = 0

    def _put_locked(self, text: str) -> str:
        raise NotImplementedError

    def write(self, text: str, side: int = 0) -> None:
        """``text`` from ``side`` (0: Python-level, every print's path; 1: fd-level, through ``fd``)."""
        if not text:
            return
        released = ""
        with self._lock:
            if self._open is not None and self._open != side:
                self._held[side].append(text)
                self._held_size += len(text)
                if self._held_size <= _HOLD_LIMIT:
                    return
                streamed = self._put_held(side)
            else:
                self._open = None if text[-1] == "\n" else side
                streamed = self._put_locked(text)
                if self._held_size and self._open is None:
                    released = self._put_held(1 - side)
        if self._on_text is not None:
            if streamed:
                self._on_text(streamed)
            if released:
                self._on_text(released)

    def release(self) -> None:
        """Put in whatever waits (the operation ends; no line of the other side will end now)."""
        if not self._held_size:
            return
        with self._lock:
            streamed = [self._put_held(side) for side in (0, 1) if self._held[side]]
        if self._on_text is not None:
            for part in streamed:
                if part:
                    self._on_text(part)

    def _put_held(self, side: int) -> str:
        text = "".join(self._held[side])
        self._held[side].clear()
        self._held_size -= len(text)
        self._open = None if text[-1] == "\n" else side
        return self._put_locked(text)


def fd_writer(sink: Writer) -> Writer:
    """Where fd-level output meant for ``sink`` is written: its fd side, where it keeps the two sides apart."""
    return sink.fd if isinstance(sink, _TwoSided) else sink


def release_held(sink: Writer | None) -> None:
    """Put in what ``sink`` (or a wrapper with a ``release`` of its own) holds back for a line to end."""
    release = getattr(sink, "release", None)
    if release is not None:
        release()


class PrefixSink(_TwoSided):
    """Keeps the first ``limit`` characters written and counts every character after them exactly."""

    def __init__(self, limit: int, on_text: Callable[[str], None] | None = None) -> None:
        self.limit = limit
        self._parts: list[str] = []
        self._kept = 0
        self.omitted = 0
        self._lock = threading.Lock()
        self._on_text = on_text
        self._init_sides()

    def _put_locked(self, text: str) -> str:
        room = self.limit - self._kept
        if room <= 0:
            self.omitted += len(text)
            return ""
        if len(text) <= room:
            kept = text
        else:
            kept = text[:room]
            self.omitted += len(text) - room
        self._parts.append(kept)
        self._kept += len(kept)
        return kept

    @property
    def truncated(self) -> bool:
        return self.omitted > 0

    def text(self) -> str:
        if not self._parts:  # nothing written (the common case); a write racing this lands after it either way
            return ""
        with self._lock:
            return "".join(self._parts)


# Compact the tail once it holds this many characters more than it keeps: memory stays bounded by the budget plus
# this, and the join that compacts it costs O(1) per character written.
_TAIL_SLACK = 1 << 16


class HeadTailSink(_TwoSided):
    """Keeps the first ``limit // 4`` and the last ``limit - limit // 4`` characters written, counting every character
    between them exactly (``omitted``; ``omitted_at`` is where they were in ``text()``).

    Why this split: the start of a long output says what ran (the command, its settings, the first lines), and a
    couple of KiB of it is enough for that; the end holds what the agent needs next (the final loss, a test summary,
    the last traceback), which is longer and matters more, so it gets three quarters. Output within ``limit`` is kept
    whole.

    ``on_text`` (progress streaming) is handed the first ``limit`` characters, as the prefix sink did, so progress
    notifications are unchanged. ``open_spill``, when given, is called once the output first outgrows ``limit``: the
    file it returns receives everything written, from the first character on (spill.py).
    """

    def __init__(
        self,
        limit: int,
        on_text: Callable[[str], None] | None = None,
        open_spill: Callable[[], SpillFile | None] | None = None,
    ) -> None:
        self.limit = limit
        self._head_limit = limit // 4
        self._tail_limit = limit - self._head_limit
        self._parts: list[str] = []
        self._kept = 0
        self._total = 0
        self._streamed = 0
        self._head: str | None = None  # set once the output outgrew the limit
        self._tail: list[str] = []
        self._tail_size = 0
        self._lock = threading.Lock()
        self._on_text = on_text
        self._open_spill = open_spill
        self.spill: SpillFile | None = None
        self._init_sides()

    def _put_locked(self, text: str) -> str:
        streamed = ""
        if self._on_text is not None and self._streamed < self.limit:
            streamed = text[: self.limit - self._streamed]
            self._streamed += len(streamed)
        self._total += len(text)
        if self._head is None:
            if self._kept + len(text) <= self.limit:
                self._parts.append(text)
                self._kept += len(text)
            else:
                self._overflow(text)
        else:
            if self.spill is not None:
                self.spill.write(text)
            self._add_tail(text)
        return streamed

    def _overflow(self, text: str) -> None:
        """The first write past the limit: split what is kept into head and tail, start the spill."""
        before = "".join(self._parts)
        self._parts = []
        head_limit, tail_limit = self._head_limit, self._tail_limit
        if len(before) >= head_limit:
            head = before[:head_limit]
        else:
            head = before + text[: head_limit - len(before)]
        if len(text) >= tail_limit:
            tail = text[len(text) - tail_limit :]
        else:
            tail = before[len(before) - (tail_limit - len(text)) :] + text
        self._head = head
        self._tail = [tail]
        self._tail_size = len(tail)
        if self._open_spill is not None:
            self.spill = self._open_spill()
            if self.spill is not None:
                self.spill.write(before)
                self.spill.write(text)

    def _add_tail(self, text: str) -> None:
        limit = self._tail_limit
        if len(text) >= limit:
            self._tail = [text[len(text) - limit :]] if limit else []
            self._tail_size = limit
            return
        self._tail.append(text)
        self._tail_size += len(text)
        if self._tail_size > limit + _TAIL_SLACK:
            self._compact()

    def _compact(self) -> None:
        joined = "".join(self._tail)
        kept = joined[len(joined) - self._tail_limit :] if self._tail_limit else ""
        self._tail = [kept] if kept else []
        self._tail_size = len(kept)

    @property
    def omitted(self) -> int:
        if self._head is None:
            return 0
        return self._total - len(self._head) - min(self._tail_size, self._tail_limit)

    @property
    def truncated(self) -> bool:
        return self._head is not None

    @property
    def omitted_at(self) -> int | None:
        """Where the omitted characters were in ``text()`` (the head's length), or None when nothing was omitted."""
        return None if self._head is None else len(self._head)

    def text(self) -> str:
        if self._head is None:
            if not self._parts:  # nothing written (the common case); a write racing this lands after it either way
                return ""
            with self._lock:
                return "".join(self._parts)
        with self._lock:
            if self._tail_size > self._tail_limit:
                self._compact()
            return self._head + "".join(self._tail)

    def finish(self) -> None:
        """The result is being built: close the spill so the agent can read it whole."""
        with self._lock:
            spill, self._open_spill = self.spill, None
        if spill is not None:
            spill.close()
