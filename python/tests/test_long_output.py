"""Long output: head and tail within the budget with exact counts (HeadTailSink), and the spill of the whole stream
to a file (spill.py), against the sink itself (hypothesis) and a real worker process."""

from __future__ import annotations

import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from worker_process import WorkerProcess

from ipython_mcp_worker.capture.sinks import HeadTailSink
from ipython_mcp_worker.capture.spill import SpillDirectory

# -- the sink (pure) -------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(limit=st.integers(min_value=1, max_value=64), chunks=st.lists(st.text(max_size=40), max_size=30))
def test_head_tail_sink_keeps_the_start_and_the_end_and_counts_the_middle_exactly(limit, chunks):
    sink = HeadTailSink(limit)
    for chunk in chunks:
        sink.write(chunk)
    whole = "".join(chunks)
    kept = sink.text()
    assert len(kept) + sink.omitted == len(whole)
    if len(whole) <= limit:
        assert kept == whole and sink.omitted == 0 and sink.omitted_at is None and not sink.truncated
    else:
        at = sink.omitted_at
        assert at == limit // 4 and sink.truncated
        assert len(kept) == limit
        assert kept[:at] == whole[:at]
        assert kept[at:] == whole[len(whole) - (limit - at):]


def test_head_tail_sink_holds_bounded_memory_and_streams_only_the_first_limit_characters():
    streamed: list[str] = []
    sink = HeadTailSink(100, streamed.append)
    for index in range(200_000):
        sink.write(f"line {index}\n")
    assert len(sink._tail) < 20_000 and sink._tail_size < 100 + (1 << 16) + 20
    assert "".join(streamed) == "".join(f"line {index}\n" for index in range(200_000))[:100]
    assert sink.text().endswith("line 199999\n")


# -- the spill directory (pure) ----------------------------------------------------------------------------------


def test_a_spill_holds_everything_and_is_0600(tmp_path):
    spills = SpillDirectory(str(tmp_path), 1 << 20)
    sink = HeadTailSink(10, None, lambda: spills.open("cell1-stdout"))
    sink.write("abcdefgh")
    sink.write("ijklmnop\udcff")
    sink.finish()
    assert sink.spill is not None
    with open(sink.spill.path, encoding="utf-8") as file:
        assert file.read() == "abcdefghijklmnop\\udcff"
    assert stat.S_IMODE(os.stat(sink.spill.path).st_mode) == 0o600
    assert sink.spill.omitted == 0


def test_spills_past_the_budget_drop_the_oldest_first_and_a_lone_flood_stops_at_it(tmp_path):
    spills = SpillDirectory(str(tmp_path), 1000)
    paths = []
    for index in range(3):
        sink = HeadTailSink(10, None, lambda index=index: spills.open(f"cell{index}-stdout"))
        sink.write("x" * 400)
        sink.finish()
        paths.append(sink.spill.path)
    assert not os.path.exists(paths[0]) and os.path.exists(paths[1]) and os.path.exists(paths[2])
    flood = HeadTailSink(10, None, lambda: spills.open("cell9-stdout"))
    for _ in range(30):
        flood.write("y" * 100)
    flood.finish()
    assert os.listdir(tmp_path) == [os.path.basename(flood.spill.path)]
    assert os.path.getsize(flood.spill.path) == 1000
    assert flood.spill.omitted == 3000 - 1000
    assert len(flood.text()) + flood.omitted == 3000


def test_a_spill_that_cannot_be_made_leaves_the_result_as_it_was(tmp_path):
    spills = SpillDirectory(str(tmp_path / "missing"), 1000)
    sink = HeadTailSink(10, None, lambda: spills.open("cell1-stdout"))
    sink.write("z" * 50)
    assert sink.spill is None and sink.omitted == 40


# -- a real worker -------------------------------------------------------------------------------------------------


@pytest.fixture
def spilling(tmp_path):
    directory = tmp_path / "spill"
    directory.mkdir(mode=0o700)
    process = WorkerProcess(codec="json", extra={"output_spill": {"dir": str(directory), "max_bytes": 4 << 20}})
    yield process, directory
    process.close()


def test_a_long_print_keeps_its_start_and_end_and_the_spill_holds_all_of_it(spilling):
    process, directory = spilling
    result = process.execute("print('x' * 10**6); print('END-OF-LOG')")
    total = 10**6 + 1 + len("END-OF-LOG\n")
    assert result["stdout"].startswith("x" * 2048) and result["stdout"].endswith("x\nEND-OF-LOG\n")
    assert len(result["stdout"]) + result["stdout_omitted_chars"] == total
    assert result["stdout_omitted_at"] == 2048
    path = result["stdout_spill"]
    assert os.path.dirname(path) == str(directory) and "cell" in os.path.basename(path)
    assert "stdout_spill_omitted_chars" not in result
    # An ordinary later execute reads it.
    read = process.execute(f"text = open({path!r}).read()\n(len(text), text[-11:])")
    assert read["result"]["value"] == [total, "END-OF-LOG\n"]


def test_short_output_and_other_operations_spill_nothing(spilling):
    process, directory = spilling
    result = process.execute("print('short')")
    assert "stdout_spill" not in result and "stdout_omitted_at" not in result
    process.execute("def loud():\n    print('y' * 100_000)\n    return 1")
    called = process.request("call_function", {"name": "loud"})
    assert called["ok"] is True
    assert os.listdir(directory) == []


def test_the_cut_position_counts_in_the_escaped_text_when_a_stream_holds_lone_surrogates():
    process = WorkerProcess(codec="json", limits={"max_text_chars": 100})
    try:
        result = process.execute("import sys\nsys.stdout.write('\\udcff' * 10 + 'a' * 500 + 'END')")
        at = result["stdout_omitted_at"]
        assert "stdout" in result.get("escaped", [])
        assert result["stdout"][:at] == "\\udcff" * 10 + "a" * 15
        assert result["stdout"][at:] == "a" * 72 + "END"
    finally:
        process.close()
