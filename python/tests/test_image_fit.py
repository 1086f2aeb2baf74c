"""image_fit.py: oversize or over-wide images re-encoded to fit, the usual figure left alone."""

from __future__ import annotations

import base64
import io
import os

from PIL import Image

from ipython_mcp_worker.capture.image_fit import MAX_LONG_EDGE, fit_image


def png(width: int, height: int, noise: bool = False) -> str:
    pixels = os.urandom(width * height * 3) if noise else bytes(width * height * 3)
    buffer = io.BytesIO()
    Image.frombytes("RGB", (width, height), pixels).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def size_of(data: str) -> tuple[int, int]:
    return Image.open(io.BytesIO(base64.b64decode(data))).size


def test_a_small_png_is_returned_as_it_is():
    data = png(640, 480)
    assert fit_image("image/png", data, 2_000_000) == ("image/png", data, None)


def test_a_wide_image_is_downscaled_to_the_long_edge_a_model_reads():
    kind, data, note = fit_image("image/png", png(3000, 1000), 2_000_000)
    assert kind == "image/png" and size_of(data) == (MAX_LONG_EDGE, 523)
    assert note is not None and note.startswith("image/png 3000×1000 (") and note.endswith("as image/png 1568×523")


def test_an_oversize_image_becomes_a_jpeg_that_fits_and_a_hopeless_one_is_refused():
    noise = png(800, 800, noise=True)
    kind, data, note = fit_image("image/png", noise, len(noise) // 4)
    assert kind in ("image/png", "image/jpeg") and len(data) <= len(noise) // 4 and note is not None
    assert fit_image("image/png", noise, 100) is None
    assert fit_image("image/png", "not base64 at all" * 10, 10) is None


def test_other_types_are_only_checked_against_the_limit():
    assert fit_image("image/gif", "R0lGOD", 10) == ("image/gif", "R0lGOD", None)
    assert fit_image("image/gif", "R0lGOD" * 10, 10) is None
