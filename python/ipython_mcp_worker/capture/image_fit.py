"""Images the model can see: a PNG or JPEG too large to send, or larger than a model reads, is re-encoded smaller.

Claude reads images up to 1,568 px on the long edge (larger ones are downscaled by the API anyway), and a display
image above ``MAX_IMAGE_BASE64_CHARS`` cannot be sent, which would leave the model ``<Figure size 2000x2000 …>``. With
Pillow in the worker's environment (matplotlib depends on it), ``fit_image`` downscales to 1,568 px, then tries
PNG, then JPEG, halving the size until the image fits. Without Pillow the image is kept as it is or dropped, and the
display's metadata says why. A note in the display's metadata (``ipython-mcp/resized``) says from what to what.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from typing import Any

MAX_LONG_EDGE = 1568
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SMALLEST_EDGE = 64


def _png_size(raw: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG's IHDR chunk, without decoding it (no Pillow needed for the common case)."""
    if len(raw) < 24 or not raw.startswith(_PNG_SIGNATURE) or raw[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", raw[16:24])
    return int(width), int(height)


def fit_image(mime: str, data: str, limit: int) -> tuple[str, str, str | None] | None:
    """``(mime, base64, note)`` of an image that fits ``limit`` base64 characters and 1,568 px, or None when it
    cannot be made to fit. ``note`` says what changed (or, with the image dropped, why nothing could be done)."""
    if mime not in ("image/png", "image/jpeg"):
        return (mime, data, None) if len(data) <= limit else None
    if len(data) <= limit and mime == "image/png":
        try:
            size = _png_size(base64.b64decode(data[:64], validate=False))
        except (binascii.Error, ValueError):
            size = None
        if size is not None and max(size) <= MAX_LONG_EDGE:
            return mime, data, None  # the usual figure: nothing decoded, nothing imported
    try:
        from PIL import Image
    except ImportError:
        if len(data) <= limit:
            return mime, data, None
        return None
    try:
        raw = base64.b64decode(data, validate=False)
        image: Any = Image.open(io.BytesIO(raw))
        image.load()
    except Exception:  # noqa: BLE001 - not an image Pillow reads: keep it as the display gave it, if it fits
        return (mime, data, None) if len(data) <= limit else None
    original = image.size
    if max(original) <= MAX_LONG_EDGE and len(data) <= limit:
        return mime, data, None
    scale = min(1.0, MAX_LONG_EDGE / max(original))
    while True:
        size = (max(1, round(original[0] * scale)), max(1, round(original[1] * scale)))
        resized = image if size == original else image.resize(size, Image.Resampling.LANCZOS)
        # A PNG shrinks about with its area: one that would still be far too large is not encoded at all (noise
        # at 1,568 px is seconds of zlib for nothing); JPEG then is the far smaller form.
        likely_png = len(data) * (size[0] * size[1]) / (original[0] * original[1]) if mime == "image/png" else 0
        kinds = ("image/png", "image/jpeg") if likely_png <= 1.5 * limit else ("image/jpeg",)
        for kind in kinds:
            encoded = _encode(resized, kind)
            if len(encoded) <= limit:
                note = f"{mime} {original[0]}×{original[1]} ({len(data):,} base64 characters) re-encoded as {kind} {size[0]}×{size[1]}"
                return kind, encoded, note
        if max(size) <= _SMALLEST_EDGE:
            return None
        scale /= 2


def _encode(image: Any, mime: str) -> str:
    buffer = io.BytesIO()
    if mime == "image/png":
        image.save(buffer, format="PNG")
    else:
        image.convert("RGB").save(buffer, format="JPEG", quality=85)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def pillow_missing_note(mime: str, length: int, limit: int) -> str:
    """Why an oversize image was dropped when Pillow is not there to re-encode it."""
    return (
        f"{mime} of {length:,} base64 characters dropped: over the {limit:,} limit, and Pillow (which would "
        "re-encode it smaller) is not installed in the worker's Python"
    )
