"""Spill files: the whole text of a truncated stdout/stderr, kept on disk for the agent to read later.

The parent makes one directory per server (mode 0700) and names it in the configure message with a byte budget;
every worker of that server writes into it, one at a time (one operation runs at a time). A stream starts a file
when it first outgrows its result budget and writes everything it has seen and will see into it. The directory
holds at most ``max_bytes``: making room removes the oldest files first (names begin with a nanosecond clock, so
name order is age order, across worker replacements too); a stream that alone outgrows the budget stops writing and
counts the characters it left out. The parent removes the directory when the server ends (the worker's watchdog
when the server was killed: lifeline.py).

Text is written as UTF-8; lone surrogates (text that came from undecodable bytes) as ``\\udcXX`` escapes.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, BinaryIO

SUFFIX = ".txt"
BUFFER_BYTES = 1 << 16


class SpillDirectory:
    """The server's spill directory, as one worker writes into it."""

    def __init__(self, path: str, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._active: list[SpillFile] = []
        # Files of earlier operations (and workers), oldest first, with their sizes: read from disk at each open.
        self._others: list[tuple[str, int]] = []

    @classmethod
    def from_configure(cls, value: Any) -> SpillDirectory | None:
        """``configure.output_spill`` (``{"dir", "max_bytes"}``), or None when spilling is off."""
        if not isinstance(value, dict):
            return None
        path, max_bytes = value.get("dir"), value.get("max_bytes")
        if not isinstance(path, str) or not path or type(max_bytes) is not int or max_bytes <= 0:
            return None
        return cls(path, max_bytes)

    def open(self, label: str) -> SpillFile | None:
        """A new spill file named after ``label`` (e.g. ``cell12-stdout``), or None when it cannot be made."""
        with self._lock:
            name = f"{time.time_ns():020d}-{label}{SUFFIX}"
            target = os.path.join(self.path, name)
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
            except OSError:
                return None
            spill = SpillFile(self, target, os.fdopen(fd, "wb", buffering=BUFFER_BYTES))
            self._active.append(spill)
            self._rescan()
            return spill

    def _rescan(self) -> None:
        active = {spill.path for spill in self._active}
        others: list[tuple[str, int]] = []
        try:
            names = sorted(os.listdir(self.path))
        except OSError:
            names = []
        for name in names:
            full = os.path.join(self.path, name)
            if not name.endswith(SUFFIX) or full in active:
                continue
            try:
                others.append((full, os.stat(full).st_size))
            except OSError:
                continue
        self._others = others

    def reserve(self, spill: SpillFile, size: int) -> bool:
        """Room for ``size`` more bytes of ``spill``: removes the oldest other files as needed; False if none is left."""
        with self._lock:
            used = sum(each.written for each in self._active) + sum(size for _, size in self._others)
            while used + size > self.max_bytes and self._others:
                path, old = self._others.pop(0)
                try:
                    os.unlink(path)
                except OSError:
                    pass
                used -= old
            return used + size <= self.max_bytes

    def used(self) -> int:
        """Bytes the directory holds now, as this worker counts them."""
        with self._lock:
            return sum(each.written for each in self._active) + sum(size for _, size in self._others)

    def closed(self, spill: SpillFile) -> None:
        with self._lock:
            if spill in self._active:
                self._active.remove(spill)


class SpillFile:
    """One stream's spill: appends text until the directory's budget stops it; counts what it left out."""

    def __init__(self, directory: SpillDirectory, path: str, file: BinaryIO) -> None:
        self.path = path
        self.written = 0
        # Characters that are not in the file: the budget ran out (or the disk failed).
        self.omitted = 0
        self._directory = directory
        self._file: BinaryIO | None = file

    def write(self, text: str) -> None:
        file = self._file
        if file is None or self.omitted:
            self.omitted += len(text)
            return
        data = text.encode("utf-8", "backslashreplace")
        if not self._directory.reserve(self, len(data)):
            room = self._directory.max_bytes - self._directory.used()
            kept = _prefix_within(text, max(0, room))
            data = kept.encode("utf-8", "backslashreplace")
            self.omitted += len(text) - len(kept)
        try:
            file.write(data)
            self.written += len(data)
        except OSError:
            self.omitted += len(text)
            self.close()

    def close(self) -> None:
        """Flushes and closes the file; later writes only count as left out."""
        file, self._file = self._file, None
        if file is None:
            return
        try:
            file.close()
        except OSError:
            pass
        self._directory.closed(self)


def _prefix_within(text: str, room: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 form fits ``room`` bytes."""
    piece = text[:room]
    while piece:
        size = len(piece.encode("utf-8", "backslashreplace"))
        if size <= room:
            return piece
        piece = piece[: max(0, len(piece) - (size - room) // 4 - 1)]
    return piece
