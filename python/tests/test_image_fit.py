"""image_fit.py: oversize or over-wide images re-encoded to fit, the usual figure left alone."""

from __future__ import annotations

import base64
import io
import os
import struct
import subprocess
import sys
import sysconfig
from pathlib import Path

from PIL import Image
from worker_process import WorkerProcess

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


def _environment_without_pillow(root: Path) -> str:
    """A real virtual environment that cannot import PIL: made with venv, it sees every package of the test
    environment (IPython, numpy...) through links, except Pillow's. Returns its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    target = Path(
        subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       capture_output=True, text=True, check=True).stdout.strip()
    )
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.name.lower().startswith(("pil", "pillow")) or (target / entry.name).exists():
            continue
        (target / entry.name).symlink_to(entry)
    return str(python)


def test_without_pillow_images_are_kept_or_dropped_as_before_with_the_reason(tmp_path):
    python = _environment_without_pillow(tmp_path / "no-pillow")
    probe = subprocess.run([python, "-c", "import IPython, numpy; import PIL"], capture_output=True, text=True)
    assert probe.returncode == 1 and "No module named 'PIL'" in probe.stderr, probe.stderr
    process = WorkerProcess(codec="json", python=python)
    try:
        # PNGs written without Pillow: one wider than a model reads but small, one of noise over the size limit.
        process.execute(
            "import zlib, struct, os\n"
            "from IPython.display import Image, display\n"
            "def png(width, height, noise):\n"
            "    row = lambda: b'\\x00' + (os.urandom(width * 3) if noise else bytes(width * 3))\n"
            "    body = zlib.compress(b''.join(row() for _ in range(height)), 1)\n"
            "    chunk = lambda kind, data: struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))\n"
            "    header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)\n"
            "    return b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', header) + chunk(b'IDAT', body) + chunk(b'IEND', b'')\n"
        )
        wide = process.execute("display(Image(data=png(3000, 10, False)))")["displays"][0]
        assert wide["truncated"] is False and "ipython-mcp/resized" not in wide["metadata"]
        assert base64.b64decode(wide["data"]["image/png"])[16:24] == struct.pack(">II", 3000, 10)  # as it was
        noise = process.execute("display(Image(data=png(1200, 1200, True)))")["displays"][0]
        assert noise["truncated"] is True and "image/png" not in noise["data"]
        note = noise["metadata"]["ipython-mcp/dropped"]
        assert "Pillow (which would re-encode it smaller) is not installed in the worker's Python" in note, note
    finally:
        process.close()
