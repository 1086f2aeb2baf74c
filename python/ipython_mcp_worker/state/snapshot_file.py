"""The on-disk format of a namespace snapshot (``--state FILE``): records, checksums, atomic replacement.

A file is ``MAGIC`` and then records, each ``kind (1 byte) | name length (u16) | name (UTF-8) | payload length (u64)
| CRC-32 of the payload (u32) | payload``, the last one of kind ``E`` (end). Kinds: ``H`` header (JSON: format,
Python and dill versions), ``M`` a name bound to a module (payload: the module's name, imported again on load),
``P`` a pickled value (one dill stream per name, so one bad object costs only its name), ``T`` the dynamic tool
registrations (JSON), ``S`` the names the save skipped, with the reasons (JSON), so the restore can name them. A file without the magic is foreign, one that ends before its ``E`` record is truncated,
a payload whose CRC differs is corrupt: each is refused whole, with that reason.

Writing goes to a temporary file beside the target (same directory, so the rename is atomic), fsynced and
renamed over the target, then the directory is fsynced: a crash or SIGKILL at any point leaves the previous
file whole. The file is created 0600: it holds the user's values.
"""

from __future__ import annotations

import os
import struct
import time
import zlib
from collections.abc import Iterator
from typing import IO, Any

MAGIC = b"IPYTHON-MCP-STATE\x00\x01\n"
_HEAD = struct.Struct(">cH")
_SIZES = struct.Struct(">QI")


class StateFileError(Exception):
    """The file cannot be loaded at all (foreign, truncated, corrupt); the message says which."""


class OverCap(Exception):
    """Writing a record would pass the size cap."""


class OverTime(Exception):
    """The save's time budget ran out."""


class _RecordSink:
    """The file object the pickler writes one record's payload to: counts, checksums, enforces both caps."""

    __slots__ = ("file", "crc", "size", "limit", "deadline")

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.crc = 0
        self.size = 0
        self.limit = 0
        self.deadline = 0.0

    def start(self, limit: int, deadline: float) -> None:
        self.crc, self.size, self.limit, self.deadline = 0, 0, limit, deadline

    def write(self, data: Any) -> int:
        length = len(data) if not isinstance(data, memoryview) else data.nbytes
        self.size += length
        if self.size > self.limit:
            raise OverCap
        if time.monotonic() > self.deadline:
            raise OverTime
        self.crc = zlib.crc32(data, self.crc)
        return self.file.write(data)


class StateWriter:
    """One snapshot being written to a temporary file; ``commit`` renames it over the target."""

    def __init__(self, path: str) -> None:
        self.path = path
        directory, base = os.path.split(os.path.abspath(path))
        self.directory = directory
        self.temporary = os.path.join(directory, f".{base}.{os.getpid()}.tmp")
        descriptor = os.open(self.temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.file: IO[bytes] = os.fdopen(descriptor, "wb", buffering=1 << 20)
        self.file.write(MAGIC)
        self.sink = _RecordSink(self.file)
        self.bytes = len(MAGIC)

    def record(self, kind: bytes, name: str, payload: bytes) -> None:
        """A record whose payload is already in hand (header, module, tools, end)."""
        encoded = name.encode("utf-8")
        self.file.write(_HEAD.pack(kind, len(encoded)) + encoded + _SIZES.pack(len(payload), zlib.crc32(payload)))
        self.file.write(payload)
        self.bytes += _HEAD.size + len(encoded) + _SIZES.size + len(payload)

    def streamed(self, kind: bytes, name: str, limit: int, deadline: float, write: Any) -> int:
        """A record whose payload ``write(sink)`` streams (a pickler); its header is patched once it is done. On
        any failure the file is cut back to where the record began and the error raised. Returns its size."""
        encoded = name.encode("utf-8")
        file = self.file
        start = file.tell()
        file.write(_HEAD.pack(kind, len(encoded)) + encoded + _SIZES.pack(0, 0))
        sizes_at = file.tell() - _SIZES.size
        sink = self.sink
        sink.start(limit, deadline)
        try:
            write(sink)
        except BaseException:
            file.seek(start)
            file.truncate()
            raise
        end = file.tell()
        file.seek(sizes_at)
        file.write(_SIZES.pack(sink.size, sink.crc))
        file.seek(end)
        self.bytes += end - start
        return end - start

    def commit(self) -> None:
        self.record(b"E", "", b"")
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        os.replace(self.temporary, self.path)
        try:
            directory = os.open(self.directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(directory)
        except OSError:
            pass
        finally:
            os.close(directory)

    def abandon(self) -> None:
        try:
            self.file.close()
        finally:
            try:
                os.unlink(self.temporary)
            except OSError:
                pass


class RecordSource:
    """One record's payload as a file for the unpickler: bounded to the record, checksummed as it is read (so a
    large value is read once, straight into its buffer). ``finish`` reads what is left and checks the CRC."""

    __slots__ = ("_file", "_left", "_crc", "_expected", "length")

    def __init__(self, file: IO[bytes], length: int, crc: int) -> None:
        self.length = length
        self._file = file
        self._left = length
        self._crc = 0
        self._expected = crc

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > self._left:
            size = self._left
        data = self._file.read(size)
        if len(data) < size:
            raise StateFileError("truncated: the file ends inside a record")
        self._left -= size
        self._crc = zlib.crc32(data, self._crc)
        return data

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        size = min(len(view), self._left)
        got = self._file.readinto(view[:size])  # type: ignore[attr-defined]
        if got is None or got < size:
            raise StateFileError("truncated: the file ends inside a record")
        self._left -= got
        self._crc = zlib.crc32(view[:got], self._crc)
        return int(got)

    def readline(self, size: int | None = -1) -> bytes:
        limit = self._left if size is None or size < 0 else min(size, self._left)
        line = self._file.readline(limit)
        self._left -= len(line)
        self._crc = zlib.crc32(line, self._crc)
        return line

    def finish(self) -> None:
        while self._left > 0:
            self.read(min(self._left, 1 << 20))
        if self._crc != self._expected:
            raise StateFileError("corrupt: a record's checksum does not match")


def read_records(path: str) -> Iterator[tuple[bytes, str, RecordSource]]:
    """The records of ``path`` in order, the end record excluded. The caller reads each payload from its
    ``RecordSource`` and calls ``finish`` before the next one. Raises ``StateFileError`` (foreign, truncated,
    corrupt) at the record where the file goes wrong, and OSError."""
    with open(path, "rb", buffering=1 << 16) as file:
        if file.read(len(MAGIC)) != MAGIC:
            raise StateFileError("not an ipython-mcp state file (its first bytes are not the format's marker)")
        while True:
            head = file.read(_HEAD.size)
            if len(head) < _HEAD.size:
                raise StateFileError("truncated: the file ends before its end record")
            kind, name_length = _HEAD.unpack(head)
            name_bytes = file.read(name_length)
            sizes = file.read(_SIZES.size)
            if len(name_bytes) < name_length or len(sizes) < _SIZES.size:
                raise StateFileError("truncated: the file ends inside a record")
            length, crc = _SIZES.unpack(sizes)
            if kind == b"E":
                return
            if kind not in (b"H", b"M", b"P", b"T", b"S"):
                raise StateFileError(f"corrupt: unknown record kind {kind!r}")
            try:
                name = name_bytes.decode("utf-8")
            except UnicodeDecodeError:
                raise StateFileError("corrupt: a record's name is not UTF-8") from None
            source = RecordSource(file, length, crc)
            yield kind, name, source
            source.finish()


def remove_stale_temporaries(path: str) -> None:
    """Delete temporary files a killed save left beside ``path`` (their writer's pid is gone)."""
    directory, base = os.path.split(os.path.abspath(path))
    prefix = f".{base}."
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        pid = entry[len(prefix):-len(".tmp")]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(directory, entry))
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
