"""The execute output contract, against a real worker subprocess (fd 1/2 are captured there, not in pytest)."""

from __future__ import annotations

import base64
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from worker_process import WorkerProcess

from ipython_mcp_worker.capture.displays import image_budget, normalize_display
from ipython_mcp_worker.protocol.constants import MAX_IMAGE_BASE64_CHARS
from ipython_mcp_worker.protocol.limits import Limits
from ipython_mcp_worker.values.failure import fold_traceback

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def worker():
    process = WorkerProcess(codec="json")
    yield process
    process.close()


def small_png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), "blue").save(buffer, "PNG")
    return buffer.getvalue()


# -- normalize_display (pure) --------------------------------------------------------------------------------


def test_images_become_base64_and_text_goes_through_the_json_limits():
    limits = Limits(max_text_chars=5, max_results=3, max_json_depth=2)
    png = small_png()
    display, used = normalize_display(
        {"image/png": png, "text/plain": "abcdefgh", "application/json": {"a": {"b": {"c": 1}}}},
        {"image/png": {"width": 4}},
        limits,
    )
    assert display["data"]["image/png"] == base64.b64encode(png).decode()
    assert used == len(display["data"]["image/png"])
    assert display["data"]["text/plain"] == "abcde"
    assert display["data"]["application/json"] == {"a": {"b": "…"}}
    assert display["metadata"] == {"image/png": {"width": 4}}
    assert display["truncated"] is True


def test_svg_is_text_not_an_image():
    svg = "<svg>" + "x" * 100 + "</svg>"
    display, used = normalize_display({"image/svg+xml": svg}, {}, Limits(max_text_chars=10))
    assert (display["data"]["image/svg+xml"], display["truncated"], used) == ("<svg>xxxxx", True, 0)


def test_images_respect_the_per_image_bound_and_the_remaining_room():
    limits = Limits()
    oversized = "A" * (MAX_IMAGE_BASE64_CHARS + 4)
    display, used = normalize_display({"image/png": oversized, "text/plain": "fig"}, {}, limits)
    assert display == {"data": {"text/plain": "fig"}, "metadata": {}, "truncated": True} and used == 0
    display, used = normalize_display({"image/png": "A" * 100}, {}, limits, image_room=99)
    assert display["data"] == {} and display["truncated"] is True and used == 0
    display, used = normalize_display({"image/png": "A" * 100}, {}, limits, image_room=100)
    assert display["data"] == {"image/png": "A" * 100} and used == 100
    assert image_budget(Limits(max_ipc_message_bytes=1000)) == 500


def test_odd_payloads_never_raise():
    class NoJson:
        def __repr__(self):
            return "<no json>"

    display, _ = normalize_display(
        {"text/plain": "ok", 5: "x", "application/x-thing": NoJson()}, ["not", "a", "dict"], Limits()
    )
    assert display == {
        "data": {"text/plain": "ok", "application/x-thing": "<no json>"},
        "metadata": {},
        "truncated": True,
    }
    display, _ = normalize_display(None, None, Limits())
    assert display == {"data": {}, "metadata": {}, "truncated": False}
    many = {f"text/x-{i}": "v" for i in range(10)}
    display, _ = normalize_display(many, {}, Limits(max_results=4))
    assert len(display["data"]) == 4 and display["truncated"] is True


# -- execute in a worker ---------------------------------------------------------------------------------------


def test_output_counts_are_exact_at_python_and_fd_level():
    process = WorkerProcess(codec="json", limits={"max_text_chars": 100})
    try:
        result = process.execute("import os, sys\nprint('x' * 10**7)\nos.write(2, 'é'.encode() * 1000)")
        # Head (a quarter of the budget) and tail (the rest): the line's end and its newline survive.
        assert result["stdout"] == "x" * 99 + "\n" and result["stdout_omitted_chars"] == 10**7 + 1 - 100
        assert result["stdout_omitted_at"] == 25
        assert result["stderr"] == "é" * 100 and result["stderr_omitted_chars"] == 900
        assert result["truncated"]["stdout"] is True and result["truncated"]["stderr"] is True
        fits = process.execute("print('y' * 99)")
        assert fits["stdout_omitted_chars"] == 0 and fits["truncated"]["stdout"] is False
    finally:
        process.close()


def test_display_items_are_capped_as_they_arrive():
    process = WorkerProcess(codec="json", limits={"max_display_items": 2})
    try:
        result = process.execute("from IPython.display import display\nfor i in range(5):\n    display(i)")
        assert [item["data"]["text/plain"] for item in result["displays"]] == ["0", "1"]
        assert result["displays_omitted"] == 3 and result["truncated"]["displays"] is True
        assert process.execute("display('one')")["displays_omitted"] == 0  # the cap is per operation
    finally:
        process.close()


def test_images_of_one_cell_never_exceed_the_ipc_bound():
    process = WorkerProcess(codec="json", limits={"max_ipc_message_bytes": 400_000})
    try:
        code = (
            "from IPython.display import display\n"
            "for i in range(3):\n"
            "    display({'image/png': 'A' * 90_000, 'text/plain': f'img {i}'}, raw=True)\n"
            "'done'"
        )
        result = process.execute(code)
        kept = [item for item in result["displays"] if "image/png" in item["data"]]
        assert len(kept) == 2
        assert result["displays"][2] == {"data": {"text/plain": "img 2"}, "metadata": {}, "truncated": True}
        assert result["truncated"]["displays"] is True and result["result"]["value"] == "done"
    finally:
        process.close()


def test_matplotlib_figures_become_png_displays_without_importing_matplotlib_at_start(worker):
    assert worker.execute("import sys\n'matplotlib' in sys.modules")["result"]["value"] is False
    shown = worker.execute("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()")
    (display,) = shown["displays"]
    assert base64.b64decode(display["data"]["image/png"]).startswith(PNG_SIGNATURE)
    left_open = worker.execute("fig, ax = plt.subplots()\nax.plot([3, 2, 1])\nvalue = 1")
    (display,) = left_open["displays"]
    assert base64.b64decode(display["data"]["image/png"]).startswith(PNG_SIGNATURE)
    after = worker.execute("len(plt.get_fignums())")
    assert after["result"]["value"] == 0 and after["displays"] == []
    # The backend variable was only needed for matplotlib's first import (the same policy as run_code's):
    # programs a later cell starts do not inherit it.
    assert worker.execute("import os\n'MPLBACKEND' in os.environ")["result"]["value"] is False


def test_a_user_chosen_matplotlib_backend_is_kept():
    process = WorkerProcess(codec="json", env={"MPLBACKEND": "Agg"})
    try:
        result = process.execute("import matplotlib\nimport matplotlib.pyplot as plt\nplt.plot([1])\nmatplotlib.get_backend()")
        assert result["result"]["value"].lower() == "agg" and result["displays"] == []
    finally:
        process.close()


def test_an_image_value_carries_its_png(worker):
    png = small_png()
    result = worker.execute(f"from IPython.display import Image\nImage(data={png!r})")
    assert result["result"]["kind"] == "repr"
    assert base64.b64decode(result["result"]["images"]["image/png"]) == png
    assert result["truncated"]["result"] is False


def test_streamed_events_carry_the_output_and_the_result_is_unchanged(worker):
    events: list[dict] = []
    code = "import time\nfor i in range(4):\n    print(i, flush=True)\n    time.sleep(0.15)"
    response = worker.request("execute", {"code": code}, stream=True, events=events)
    assert response["ok"] and response["result"]["stdout"] == "0\n1\n2\n3\n"
    streamed = [event for event in events if event["type"] == "event"]
    assert len(streamed) >= 2
    assert "".join(event["text"] for event in streamed if event["kind"] == "stdout") == "0\n1\n2\n3\n"
    quiet: list[dict] = []
    assert worker.request("execute", {"code": code}, events=quiet)["ok"]
    assert quiet == []


def test_errors_bound_message_and_traceback():
    process = WorkerProcess(codec="json", limits={"max_text_chars": 50, "max_traceback_chars": 200})
    try:
        response = process.request(
            "execute", {"code": "def f(n):\n    return f(n - 1) if n else 1 / 0\nf(30)\nraise ValueError('m' * 500)"}
        )
        error = response["result"]["error"]
        assert error["type"] == "ZeroDivisionError" and error["message_truncated"] is False
        assert len(error["traceback"]) == 200 and error["traceback_truncated"] is True
        long = process.request("execute", {"code": "raise ValueError('m' * 500)"})["result"]["error"]
        assert (long["message"], long["message_truncated"]) == ("m" * 50, True)
        json.dumps(long)
    finally:
        process.close()


# -- tracebacks a model can read (failure.py: cleaned, folded, then bounded) -----------------------------------

SITE = "/venv/lib/python3.11/site-packages"
# IPython's text for df['nope'] (pandas), banner removed, shortened to its structure.
KEY_ERROR = "\n".join(
    [
        f"File {SITE}/pandas/core/indexes/base.py:3816, in Index.get_loc(self, key)",
        "   3815 try:",
        "-> 3816     return self._engine.get_loc(casted_key)",
        "   3817 except KeyError as err:",
        "",
        "File pandas/_libs/index.pyx:172, in pandas._libs.index.IndexEngine.get_loc()",
        "--> 172 'Could not get source, probably due dynamically evaluated source code.'",
        "File pandas/_libs/index.pyx:201, in pandas._libs.index.IndexEngine.get_loc()",
        "--> 201 'Could not get source, probably due dynamically evaluated source code.'",
        "File pandas/_libs/hashtable_class_helper.pxi:7726, in pandas._libs.hashtable.PyObjectHashTable.get_item()",
        "-> 7726 'Could not get source, probably due dynamically evaluated source code.'",
        "File pandas/_libs/hashtable_class_helper.pxi:7734, in pandas._libs.hashtable.PyObjectHashTable.get_item()",
        "-> 7734 'Could not get source, probably due dynamically evaluated source code.'",
        "KeyError: 'nope'",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "KeyError                                  Traceback (most recent call last)",
        "Cell In[6], line 1",
        "----> 1 df['nope']",
        "",
        f"File {SITE}/pandas/core/frame.py:4330, in DataFrame.__getitem__(self, key)",
        "   4329         return self._getitem_multilevel(key)",
        "-> 4330     indexer = self.columns.get_loc(key)",
        "",
        f"File {SITE}/pandas/core/indexes/base.py:3823, in Index.get_loc(self, key)",
        "-> 3823     raise KeyError(key) from err",
        "",
        "KeyError: 'nope'",
    ]
)


def test_library_frames_become_one_line_and_long_runs_fold():
    assert fold_traceback(KEY_ERROR, ()).split("\n") == [
        "pandas/core/indexes/base.py:3816 in get_loc",
        "... 3 more library frames ...",
        "pandas/_libs/hashtable_class_helper.pxi:7734 in get_item",
        "KeyError: 'nope'",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "KeyError                                  Traceback (most recent call last)",
        "Cell In[6], line 1",
        "----> 1 df['nope']",
        "",
        "pandas/core/frame.py:4330 in __getitem__",
        "pandas/core/indexes/base.py:3823 in get_loc",
        "KeyError: 'nope'",
    ]


def test_user_files_and_configured_library_paths_stay_whole_the_stdlib_and_frozen_modules_fold():
    traceback = "\n".join(
        [
            "Cell In[2], line 1",
            "----> 1 run()",
            "",
            "File /home/me/project/tasks.py:3, in run()",
            "----> 3 json.loads(text)",
            "",
            f"File {SITE}/mylib/core.py:9, in helper()",
            '----> 9 raise ValueError("x")',
            "",
            "File /usr/lib/python3.11/json/__init__.py:346, in loads(s)",
            "--> 346     return _default_decoder.decode(s)",
            "",
            "File <frozen importlib._bootstrap>:1176, in _find_and_load(name, import_)",
            "",
            "ValueError: x",
        ]
    )
    assert fold_traceback(traceback, (f"{SITE}/mylib",)).split("\n") == [
        "Cell In[2], line 1",
        "----> 1 run()",
        "",
        "File /home/me/project/tasks.py:3, in run()",
        "----> 3 json.loads(text)",
        "",
        f"File {SITE}/mylib/core.py:9, in helper()",
        '----> 9 raise ValueError("x")',
        "",
        "json/__init__.py:346 in loads",
        "<frozen importlib._bootstrap>:1176 in _find_and_load",
        "ValueError: x",
    ]
    plain = "Cell In[6], line 1\n----> 1 1/0\n\nZeroDivisionError: division by zero"
    assert fold_traceback(plain, ()) is plain


_LINES = st.one_of(
    st.sampled_from(
        [
            "",
            "Cell In[1], line 1",
            "----> 1 f()",
            f"File {SITE}/a/b.py:1, in f()",
            "-> 1 x",
            "File x.pyx:2, in g()",
            "ValueError: boom",
            "The above exception was the direct cause of the following exception:",
        ]
    ),
    st.text(),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINES, max_size=30))
def test_folding_never_drops_an_exception_line_whatever_the_text(lines):
    folded = fold_traceback("\n".join(lines), ()).split("\n")
    for kept in lines:
        if "\n" not in kept and (kept == "ValueError: boom" or kept.startswith("The above exception")):
            assert kept in folded


def test_a_small_traceback_limit_keeps_the_users_line_and_the_exception(tmp_path):
    """Folded first, then bounded: the worker used to cut IPython's 2,400 characters to the limit and the user's
    line went first. A trusted library directory's frames stay whole; the unfolded text comes beside."""
    trusted = tmp_path / "site-packages"
    trusted.mkdir()
    (trusted / "mine.py").write_text("def boom(frame):\n    return frame['nope']\n")
    process = WorkerProcess(
        codec="json", limits={"max_traceback_chars": 400}, extra={"library_paths": [str(trusted)]}
    )
    try:
        process.execute("import pandas as pd\nframe = pd.DataFrame({'a': [1]})\nimport mine")
        error = process.execute("frame['nope']")["error"]
        assert len(error["traceback"]) <= 400, error  # the chained cause's first frames may be cut; not these
        assert "----> 1 frame['nope']" in error["traceback"].split("\n")
        assert error["traceback"].endswith("KeyError: 'nope'")
        assert "site-packages" not in error["traceback"] and "Could not get source" not in error["traceback"]
        assert "Traceback (most recent call last)" not in error["traceback"].split("\n")[0]
        whole = error["full_traceback"]
        # The unfolded text cut at the same limit: what the worker used to send, without the user's line.
        assert len(whole) == 400 and "raise KeyError(key) from err" in whole and "frame['nope']" not in whole
        trusted_error = process.execute("mine.boom(frame)")["error"]
        assert f"File {trusted}/mine.py:2, in boom(frame)" in trusted_error["traceback"]
        own = process.execute("1/0")["error"]
        assert "full_traceback" not in own and own["traceback"].startswith("Cell In[")
    finally:
        process.close()


def test_a_full_output_cache_is_culled_with_one_line_of_ours_not_ipythons_warning(worker):
    # A small cache (IPython reads cache_size at every value), and a user who turned warnings into errors.
    setup = worker.execute(
        "import warnings\nwarnings.simplefilter('error')\nget_ipython().displayhook.cache_size = 5\nkept = 'state'"
    )
    assert setup["status"] == "ok"
    results = [worker.execute(f"{index} * 10") for index in range(1, 9)]
    assert all(result["status"] == "ok" for result in results), results
    culled = [result for result in results if result["stderr"]]
    assert len(culled) >= 1
    for result in culled:
        line = result["stderr"]
        assert line.startswith("[IPython's output cache was full (5 entries): the oldest 2 were dropped from Out")
        assert line.count("\n") == 1
        assert "UserWarning" not in line and "site-packages" not in line and "displayhook.py" not in line
    state = worker.execute("(kept, sorted(Out)[-3:], len(Out) <= 5, '_2' in globals(), _)")
    assert state["status"] == "ok"
    assert state["result"]["value"][0] == "state"
    assert state["result"]["value"][2] is True
    assert state["result"]["value"][3] is False  # the oldest values' _N names went with them
    assert state["result"]["value"][4] == 80  # the last value, as IPython keeps it
