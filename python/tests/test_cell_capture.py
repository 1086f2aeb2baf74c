"""A cell runs into whatever CellCapture its caller builds: its sinks, display policy, value codec and budget.

The shell owner knows nothing of execute or run_code. The in-process tests check the value codec and the display
collector on their own; the subprocess test builds a ShellOwner (it takes over sys.stdout and fd 1/2, so not in
pytest's process) with a capture of its own making and checks that every part of it was used, and nothing else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ipython_mcp_worker.capture.cell import CellCapture, CellOutcome, ValueCodec
from ipython_mcp_worker.capture.displays import DisplayCollector, ImageRoom
from ipython_mcp_worker.capture.sinks import PrefixSink
from ipython_mcp_worker.protocol.limits import Limits

PYTHON_ROOT = Path(__file__).resolve().parents[1]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


class TextOnly:
    """A formatter that knows only text (and, when asked, one PNG): what the codec's text form needs."""

    def __init__(self, text: str, png: str | None = None) -> None:
        self.data = {"text/plain": text, **({"image/png": png} if png else {})}

    def format(self, obj: Any, include: Any = None, exclude: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.data, {}


def test_the_codec_keeps_encoded_places_unless_it_must_be_exact():
    limits = Limits()
    loose = ValueCodec(limits, ImageRoom.for_cell(limits)).encode(2**70, TextOnly("big"))
    assert loose.value == {"kind": "json", "value": str(2**70), "encoded": {"$": "int"}}
    exact = ValueCodec(limits, ImageRoom.for_cell(limits), exact=True).encode(2**70, TextOnly("big"))
    assert exact.value == {"kind": "repr", "repr": "big"}
    assert exact.truncated is False and exact.cut is None


def test_the_codec_reports_what_a_budget_cut_and_only_then():
    limits = Limits()
    codec = ValueCodec(limits, ImageRoom.for_cell(limits))
    whole = codec.encode(list(range(10)), None)
    assert whole.value == {"kind": "json", "value": list(range(10))} and whole.cut is None
    cut = codec.encode(list(range(100)), None, max_bytes=40)
    assert cut.truncated is True
    assert cut.cut is not None and cut.cut["items"] > 0 and cut.cut["size"] is True
    kept = cut.value["value"]
    assert kept == list(range(len(kept))) and len(json.dumps(kept, separators=(",", ":"))) <= 40
    fits = codec.encode(list(range(3)), None, max_bytes=40)
    assert fits.truncated is False and fits.cut is None


def test_a_value_without_json_form_is_text_with_its_images_from_the_cell_room():
    limits = Limits(max_text_chars=4)
    room = ImageRoom(len(PNG) + 10)
    encoded = ValueCodec(limits, room).encode(object(), TextOnly("a long text", PNG))
    assert encoded.value == {"kind": "repr", "repr": "a lo", "images": {"image/png": PNG}}
    assert encoded.truncated is True and encoded.cut == {"repr_chars": 7}
    assert room.chars == 10
    # The displays of the same cell find only what is left.
    displays = DisplayCollector(limits, room)
    displays({"image/png": PNG}, {})
    assert displays.displays[0]["data"] == {} and displays.truncated is True


def test_the_collector_counts_what_it_leaves_out():
    limits = Limits(max_display_items=2)
    displays = DisplayCollector(limits, ImageRoom.for_cell(limits))
    for index in range(5):
        displays({"text/plain": str(index)}, {})
    assert [d["data"] for d in displays.displays] == [{"text/plain": "0"}, {"text/plain": "1"}]
    assert displays.omitted == 3 and displays.truncated is True


def test_an_outcome_without_error_has_no_details():
    outcome = CellOutcome(execution_count=3, error=None, traceback_text="", value=None)
    assert outcome.status == "ok" and outcome.error_details(Limits()) is None
    failed = CellOutcome(execution_count=4, error=ValueError("no"), traceback_text="", value=None)
    assert failed.status == "error"
    details = failed.error_details(Limits())
    assert details is not None and details["kind"] == "exception" and details["type"] == "ValueError"


# A ShellOwner driven by hand with a capture the owner has never seen: one recording sink for both streams, a
# display policy that keeps only MIME types, a result budget of 40 bytes, and an image room of nothing.
OWN_CAPTURE = textwrap.dedent("""
    import json, sys
    from ipython_mcp_worker.capture.cell import CellCapture, ValueCodec
    from ipython_mcp_worker.capture.displays import ImageRoom
    from ipython_mcp_worker.protocol.limits import Limits
    from ipython_mcp_worker.shell.owner import ShellOwner

    class Recording:
        def __init__(self):
            self.parts = []

        def write(self, text):
            self.parts.append(text)

    limits = Limits()
    owner = ShellOwner(limits)
    operation = owner.begin(None)
    owner.shell.run_cell("print('before the cell')")  # user code outside run_cell: the request's own sinks
    written, shown = Recording(), []
    capture = CellCapture(written, written, lambda data, metadata: shown.append(sorted(data)),
                          ValueCodec(limits, ImageRoom(0), exact=True), result_max_bytes=40)
    code = (
        "import os, sys\\n"
        "print('out')\\n"
        "sys.stderr.write('err\\\\n')\\n"
        "os.write(1, b'fd\\\\n')\\n"
        "from IPython.display import display, HTML\\n"
        "display(HTML('<b>x</b>'))\\n"
        "list(range(100))"
    )
    outcome = owner.run_cell(code, capture)
    after = owner.run_cell("2**70", capture)
    failed = owner.run_cell("1/0", capture)
    owner.end()
    report = {
        "written": "".join(written.parts),
        "shown": shown,
        "request_stdout": operation.stdout.text(),
        "status": outcome.status,
        "value": outcome.value.value,
        "cut": outcome.value.cut,
        "exact": after.value.value,
        "failed": [failed.status, failed.error_details(limits)["type"]],
    }
    with open(sys.argv[1], "w") as file:
        json.dump(report, file)
""")


def test_the_owner_honours_a_capture_it_was_handed(tmp_path):
    report_path = tmp_path / "report.json"
    script = tmp_path / "own_capture.py"
    script.write_text(OWN_CAPTURE)
    # The worker package from this checkout, also in an interpreter where it is not installed (the release matrix).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PYTHON_ROOT), os.environ.get("PYTHONPATH")]))}
    completed = subprocess.run([sys.executable, str(script), str(report_path)], cwd=str(PYTHON_ROOT), env=env,
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    report = json.loads(report_path.read_text())
    # Both streams, Python-level and fd 1, went into the one sink the capture gave, in order.
    assert report["written"] == "out\nerr\nfd\n"
    assert report["shown"] == [["text/html", "text/plain"]]
    # Output of user code that ran in the operation outside the cell stayed in the request's sinks.
    assert report["request_stdout"] == "before the cell\n"
    assert report["status"] == "ok"
    assert report["cut"]["items"] > 0 and report["cut"]["size"] is True
    assert len(json.dumps(report["value"]["value"], separators=(",", ":"))) <= 40
    assert report["exact"] == {"kind": "repr", "repr": str(2**70)}
    assert report["failed"] == ["error", "ZeroDivisionError"]


@pytest.mark.parametrize("limit", [3, 100])
def test_one_prefix_sink_may_take_both_streams(limit):
    sink = PrefixSink(limit)
    capture = CellCapture(sink, sink, lambda data, metadata: None, ValueCodec(Limits(), ImageRoom(0)))
    capture.stdout.write("ab")
    capture.stderr.write("cd")
    assert sink.text() == "abcd"[:limit] and sink.omitted == max(0, 4 - limit)
