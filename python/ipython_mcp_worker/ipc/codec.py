"""Length-prefixed frames with a per-frame codec byte (docs/protocol.md, "Frames").

The worker can always read both codecs; which one it writes is decided in the handshake. msgpack is optional:
without it the worker offers and uses JSON only.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

try:  # pragma: no cover - exercised by the release matrix with and without msgpack
    import msgpack as _msgpack
except ImportError:  # pragma: no cover
    _msgpack = None

CODEC_JSON = 1
CODEC_MSGPACK = 2
CODEC_NAMES = {"json": CODEC_JSON, "msgpack": CODEC_MSGPACK}
HEADER = struct.Struct(">I")


class FrameTooLarge(Exception):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the {limit}-byte IPC message limit")
        self.size = size
        self.limit = limit


class FrameError(Exception):
    """A frame that cannot be decoded: unknown codec byte, bad payload, not a message object."""


def available_codecs() -> list[str]:
    """The codecs this worker offers. ``IPYTHON_MCP_WORKER_CODECS=json`` offers JSON only, as a Python without
    msgpack would (tests and the release matrix run both codecs through the real negotiation this way)."""
    if _msgpack is None or os.environ.get("IPYTHON_MCP_WORKER_CODECS") == "json":
        return ["json"]
    return ["msgpack", "json"]


def encode_payload(message: Any, codec: int) -> bytes:
    if codec == CODEC_MSGPACK:
        if _msgpack is None:
            raise FrameError("msgpack is not available in this Python")
        packed: bytes = _msgpack.packb(message, use_bin_type=True)
        return packed
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def encode_frame(message: Any, codec: int, limit: int) -> bytes:
    """Encode one message as a frame; raises FrameTooLarge when it would exceed ``limit``."""
    payload = encode_payload(message, codec)
    size = len(payload) + 1
    if size > limit:
        raise FrameTooLarge(size, limit)
    return b"".join((HEADER.pack(size), _CODEC_BYTES[codec], payload))  # one copy of the payload, not two


_CODEC_BYTES = {CODEC_JSON: bytes((CODEC_JSON,)), CODEC_MSGPACK: bytes((CODEC_MSGPACK,))}


def decode_body(body: bytes) -> Any:
    """Decode a frame body (codec byte + payload) into a message dict."""
    if not body:
        raise FrameError("empty frame")
    codec = body[0]
    try:
        if codec == CODEC_MSGPACK:
            if _msgpack is None:
                raise FrameError("received a msgpack frame but msgpack is not available")
            message = _msgpack.unpackb(body[1:], raw=False, strict_map_key=False)
        elif codec == CODEC_JSON:
            message = json.loads(body[1:].decode("utf-8"))
        else:
            raise FrameError(f"unknown codec byte {codec}")
    except FrameError:
        raise
    except Exception as error:  # noqa: BLE001 - any decoder failure is a frame error
        raise FrameError(f"undecodable {codec_name(codec)} payload: {type(error).__name__}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise FrameError("a frame must hold an object with a string 'type'")
    return message


def codec_name(codec: int) -> str:
    for name, value in CODEC_NAMES.items():
        if value == codec:
            return name
    return f"codec-{codec}"


class FrameReader:
    """Reads frames from a blocking file descriptor. Oversized frames are skipped, keeping the stream in sync."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.limit = limit

    def _read_exact(self, count: int) -> bytes | None:
        chunk = os.read(self.fd, min(count, 1 << 20))
        if len(chunk) == count:
            return chunk  # the usual case: the whole header, or the whole body, in one read
        if not chunk:
            return None
        chunks = [chunk]
        remaining = count - len(chunk)
        while remaining:
            chunk = os.read(self.fd, min(remaining, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _skip(self, count: int) -> bool:
        remaining = count
        while remaining:
            chunk = os.read(self.fd, min(remaining, 1 << 20))
            if not chunk:
                return False
            remaining -= len(chunk)
        return True

    def read(self) -> Any:
        """Return the next message, raise FrameTooLarge/FrameError for a bad frame, or None at EOF."""
        header = self._read_exact(HEADER.size)
        if header is None:
            return None
        size = int.from_bytes(header, "big")
        if size == 0:
            raise FrameError("zero-length frame")
        if size > self.limit:
            if not self._skip(size):
                return None
            raise FrameTooLarge(size, self.limit)
        body = self._read_exact(size)
        if body is None:
            return None
        return decode_body(body)
