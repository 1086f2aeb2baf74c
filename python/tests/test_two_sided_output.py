"""Python-level and fd-level output meeting in one result: a line one side began is never spliced by the other.

``print("x")`` is two writes, and the fd drain thread reads what C code or a subprocess wrote at any moment, so
without care a result reads ``xfd line\\n\\n``. Checked on the sinks themselves (hypothesis: any interleaving of any
chunks) and on a real worker whose cell prints and os.writes from two threads at once.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from worker_process import WorkerProcess

from ipython_mcp_worker.capture.sinks import HeadTailSink, PrefixSink, fd_writer, release_held

# Side 0 writes only these letters and side 1 only those, so each line of the result says which side it came from.
_SIDES = ("abc", "xyz")


def _side_text(letters: str) -> st.SearchStrategy[list[str]]:
    """Chunks of one side's output, its whole text ending in a newline (so no line is left open at the end)."""
    chunk = st.text(alphabet=letters + "\n", max_size=12)
    return st.lists(chunk, max_size=12).map(lambda chunks: [*chunks, "\n"])


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


@settings(max_examples=400, deadline=None)
@given(
    python=_side_text(_SIDES[0]),
    fd=_side_text(_SIDES[1]),
    order=st.lists(st.booleans(), max_size=40),
    make=st.sampled_from([lambda: HeadTailSink(1 << 20), lambda: PrefixSink(1 << 20)]),
)
def test_any_interleaving_keeps_every_line_whole_and_each_side_in_order(python, fd, order, make):
    sink = make()
    queues = [list(python), list(fd)]
    writers = [sink, fd_writer(sink)]
    for pick in order:
        side = int(pick)
        if queues[side]:
            writers[side].write(queues[side].pop(0))
    for side in (0, 1):
        for chunk in queues[side]:
            writers[side].write(chunk)
    release_held(sink)
    out = sink.text()
    assert len(out) == len("".join(python)) + len("".join(fd))  # nothing lost, nothing added
    for line in _lines(out):
        assert set(line) <= set(_SIDES[0]) or set(line) <= set(_SIDES[1]), f"a spliced line: {line!r} in {out!r}"
    for side, chunks in ((0, python), (1, fd)):
        mine = [line for line in _lines(out) if set(line) <= set(_SIDES[side])]
        assert mine == _lines("".join(chunks))


def test_what_waits_for_a_line_to_end_is_bounded_and_all_of_it_goes_in():
    sink = HeadTailSink(1 << 24)
    sink.write("an open line")
    for _ in range(50):
        fd_writer(sink).write("f" * 10_000 + "\n")
    # Past the hold limit the fd text went in although the Python line is still open: memory before line order.
    assert sink._held_size <= (1 << 16) + 10_001
    sink.write(" ends\n")
    release_held(sink)
    out = sink.text()
    assert out.count("f" * 10_000 + "\n") == 50 and "an open line" in out and len(out) == 12 + 50 * 10_001 + 6


def test_a_line_left_open_at_the_end_is_released_whole():
    sink = HeadTailSink(1000)
    sink.write("no newline")
    fd_writer(sink).write("fd line\n")
    assert sink.text() == "no newline"  # the fd line waits for the Python line to end
    release_held(sink)
    assert sink.text() == "no newlinefd line\n"  # the operation ended: nothing is lost


@pytest.fixture(scope="module")
def worker():
    # Room for every line, so the result is whole (no head and tail cut through a line).
    process = WorkerProcess(codec="json", limits={"max_text_chars": 1 << 20})
    yield process
    process.close()


_BOTH_AT_ONCE = """
import os, threading
def fd_lines():
    for i in range({n}):
        os.write({fd}, b"fd-%d\\n" % i)
writer = threading.Thread(target=fd_lines)
writer.start()
for i in range({n}):
    print("py-%d" % i{file})
writer.join()
"""


@pytest.mark.parametrize(("fd", "stream"), [(1, "stdout"), (2, "stderr")])
def test_a_cell_printing_while_a_thread_writes_to_the_fd_gets_every_line_whole(worker, fd, stream):
    n = 3000
    file = "" if fd == 1 else ", file=__import__('sys').stderr"
    result = worker.execute(_BOTH_AT_ONCE.format(n=n, fd=fd, file=file))
    assert result.get("error") is None, result
    assert result[f"{stream}_omitted_chars"] == 0
    lines = result[stream].split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    spliced = [line for line in lines if not re.fullmatch(r"(py|fd)-\d+", line)]
    assert spliced == []
    assert [line for line in lines if line.startswith("py-")] == [f"py-{i}" for i in range(n)]
    assert [line for line in lines if line.startswith("fd-")] == [f"fd-{i}" for i in range(n)]
