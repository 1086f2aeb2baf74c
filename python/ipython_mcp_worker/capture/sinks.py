"""Text sinks: where an operation's stdout and stderr go, bounded as they stream in.

``HeadTailSink`` keeps a head and a tail of each stream within the text budget and counts what lies between
exactly; ``PrefixSink`` keeps a prefix (Code Mode's one combined output). Both hold memory bounded by the budget
whatever is written.
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


class PrefixSink:
    """Keeps the first ``limit`` characters written and counts every character after them exactly."""

    def __init__(self, limit: int, on_text: Callable[[str], None] | None = None) -> None:
        self.limit = limit
        self._parts: list[str] = []
        self._kept = 0
        self.omitted = 0
        self._lock = threading.Lock()
        self._on_text = on_text

    def write(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            room = self.limit - self._kept
            if room <= 0:
                self.omitted += len(text)
                return
            if len(text) <= room:
                kept = text
            else:
                kept = text[:room]
                self.omitted += len(text) - room
            self._parts.append(kept)
            self._kept += len(kept)
        if self._on_text is not None:
            self._on_text(kept)

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


class HeadTailSink:
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

    def write(self, text: str) -> None:
        if not text:
            return
        streamed = ""
        with self._lock:
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
        if streamed and self._on_text is not None:
            self._on_text(streamed)

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
