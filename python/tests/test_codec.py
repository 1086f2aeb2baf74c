"""The worker's frame codec against the shared corpus in fixtures/protocol/."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ipython_mcp_worker.ipc.codec import CODEC_JSON, FrameError, FrameReader, FrameTooLarge, encode_frame
from ipython_mcp_worker.protocol.errors import ERROR_CODES, OpError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol"
FRAMES = json.loads((FIXTURES / "frames.json").read_text("utf-8"))


def _reader_for(data: bytes, limit: int) -> FrameReader:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    return FrameReader(read_end, limit)


@pytest.mark.parametrize("frame", FRAMES["frames"], ids=lambda frame: frame["name"])
def test_corpus_frames_decode(frame):
    reader = _reader_for(bytes.fromhex(frame["hex"]), 1 << 20)
    assert reader.read() == frame["message"]
    assert reader.read() is None
    if frame["codec"] == "json":
        assert encode_frame(frame["message"], CODEC_JSON, 1 << 20).hex() == frame["hex"]


@pytest.mark.parametrize("frame", FRAMES["bad_frames"], ids=lambda frame: frame["name"])
def test_corpus_bad_frames_are_structured_errors(frame):
    reader = _reader_for(bytes.fromhex(frame["hex"]), frame.get("limit", 1 << 20))
    expected = FrameTooLarge if frame["error"] == "message_too_large" else FrameError
    with pytest.raises(expected):
        reader.read()
    if "then" in frame:
        assert reader.read() == frame["then"]


def test_error_codes_match_the_shared_list():
    shared = json.loads((FIXTURES / "error-codes.json").read_text("utf-8"))
    assert list(ERROR_CODES) == shared["codes"]


def test_oversized_encode_is_refused():
    with pytest.raises(FrameTooLarge):
        encode_frame({"type": "event", "text": "x" * 100}, CODEC_JSON, 64)


def test_unknown_error_code_is_a_bug():
    with pytest.raises(ValueError):
        OpError("no_such_code", "x")
