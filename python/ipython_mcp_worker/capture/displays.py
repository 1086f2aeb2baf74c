"""Display payloads: one ``display()`` bundle bounded for a result, and execute's collector of a cell's displays.

A bundle maps MIME types to values. Binary images (``image/png``, ``image/jpeg``...) travel as base64 text, fitted
to what the cell's image room still holds (image_fit.py); every other form goes through the JSON limits. One cell's
images, its displays' and its value's alike, share one ``ImageRoom``, so they can never push the result over the
IPC message bound together.
"""

from __future__ import annotations

import base64
import importlib.util
import threading
from collections.abc import Callable
from typing import Any

from ..protocol.constants import MAX_IMAGE_BASE64_CHARS
from ..protocol.limits import Limits
from ..values.jsonvalue import JsonForm, NotJson, child_path, json_form, safe_repr
from .image_fit import fit_image, pillow_missing_note

DisplayPolicy = Callable[[dict[str, Any], dict[str, Any]], None]
"""What becomes of one ``display()`` payload (its data bundle and metadata) while a cell runs."""


def image_budget(limits: Limits) -> int:
    """Base64 characters of images one cell may return in total: half the IPC message bound, so the images of one
    cell can never push its result over ``max_ipc_message_bytes``."""
    return limits.max_ipc_message_bytes // 2


class ImageRoom:
    """The base64 characters of images a cell may still return; its displays and its value draw on the same room."""

    __slots__ = ("chars",)

    def __init__(self, chars: int) -> None:
        self.chars = chars

    @classmethod
    def for_cell(cls, limits: Limits) -> ImageRoom:
        return cls(image_budget(limits))

    def fit(self, data: Any, metadata: Any, limits: Limits) -> dict[str, Any]:
        """``normalize_display`` within this room, taking what the bundle's images use from it."""
        display, used = normalize_display(data, metadata, limits, self.chars)
        self.chars -= used
        return display


def normalize_display(
    data: Any, metadata: Any, limits: Limits, image_room: int = MAX_IMAGE_BASE64_CHARS
) -> tuple[dict[str, Any], int]:
    """Bound one display payload; returns it with the base64 characters its images use.

    Binary images (``image/png``, ``image/jpeg``...) are kept as base64 text when one is at most
    MAX_IMAGE_BASE64_CHARS and fits ``image_room``; everything else (SVG included) goes through the JSON depth,
    item and character limits. Anything dropped or cut sets ``truncated``.
    """
    out: dict[str, Any] = {}
    notes: dict[str, str] = {}  # what happened to an image, for the display's metadata (image_fit.py)
    truncated = False
    used = 0
    encoded = JsonForm(None)
    items = list(data.items()) if type(data) is dict else []
    if type(data) is not dict and data is not None:
        truncated = True
    if len(items) > limits.max_results:
        items, truncated = items[: limits.max_results], True
    for mime, value in items:
        if type(mime) is not str:
            truncated = True
            continue
        if mime.startswith("image/") and not mime.startswith("image/svg"):
            if isinstance(value, (bytes, bytearray)):
                value = base64.b64encode(value).decode("ascii")
            room = min(MAX_IMAGE_BASE64_CHARS, image_room - used)
            fitted = fit_image(mime, value, room) if isinstance(value, str) and room > 0 else None
            if fitted is not None:
                kind, value, note = fitted
                out[kind] = value
                used += len(value)
                if note is not None:
                    notes["ipython-mcp/resized"] = note
            else:
                truncated = True
                if isinstance(value, str) and importlib.util.find_spec("PIL") is None:
                    notes["ipython-mcp/dropped"] = pillow_missing_note(mime, len(value), room)
            continue
        try:
            form = json_form(value, limits, child_path("$", mime))
        except NotJson:
            form = JsonForm(*safe_repr(value, limits.max_text_chars))
        out[mime] = form.value
        truncated = truncated or form.truncated
        encoded.encoded.update(form.encoded)
        encoded.encoded_omitted += form.encoded_omitted
    try:
        meta_form = json_form(metadata if metadata is not None else {}, limits, "metadata")
        meta, cut = meta_form.value, meta_form.truncated
    except NotJson:
        meta, cut = {}, True
    if type(meta) is not dict:
        meta, cut = {}, True
    else:
        encoded.encoded.update(meta_form.encoded)
        encoded.encoded_omitted += meta_form.encoded_omitted
    if notes:
        meta = {**meta, **notes}
    return encoded.annotate({"data": out, "metadata": meta, "truncated": truncated or cut}), used


class DisplayCollector:
    """A display policy that keeps every payload bounded: the first ``max_display_items`` are normalized into
    ``displays`` (their images within the cell's room), the rest only counted in ``omitted``.

    Called from the main thread and from threads the cell started, so it takes a lock."""

    def __init__(self, limits: Limits, images: ImageRoom) -> None:
        self.limits = limits
        self.images = images
        self.displays: list[dict[str, Any]] = []
        self.omitted = 0
        self._lock = threading.Lock()

    def __call__(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        with self._lock:
            if len(self.displays) >= self.limits.max_display_items:
                self.omitted += 1
                return
            self.displays.append(self.images.fit(data, metadata, self.limits))

    @property
    def truncated(self) -> bool:
        """Whether a display was left out or one kept was cut."""
        return self.omitted > 0 or (bool(self.displays) and any(d["truncated"] for d in self.displays))
