"""The transport floor: echo length-prefixed frames from stdin to stdout, nothing else.

The bench times a Node -> Python -> Node round trip over plain pipes with it: the least any out-of-process
design pays per hop pair on this machine (two wake-ups of a sleeping process, four pipe syscalls).
"""

from __future__ import annotations

import os
import struct


def read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = os.read(fd, size)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> bytes:
    """The body of the next length-prefixed frame on ``fd``; EOFError at the end."""
    return read_exact(fd, int.from_bytes(read_exact(fd, 4), "big"))


def write_frame(fd: int, body: bytes) -> None:
    """One length-prefixed frame on ``fd``."""
    os.write(fd, len(body).to_bytes(4, "big") + body)


def main() -> int:
    while True:
        try:
            header = read_exact(0, 4)
            (length,) = struct.unpack(">I", header)
            payload = read_exact(0, length)
        except EOFError:
            return 0
        os.write(1, header + payload)


if __name__ == "__main__":
    raise SystemExit(main())
