"""The cheap paths of one execute keep the contract: the ``;`` rule, plain scalar results, fd-level text split
across reads, and an ended operation freed without the cyclic collector."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from worker_process import WorkerProcess

from ipython_mcp_worker.protocol.limits import Limits
from ipython_mcp_worker.values.jsonvalue import MAX_SAFE_INTEGER, NotJson, is_plain_scalar, json_form


@pytest.fixture(scope="module")
def worker():
    process = WorkerProcess(codec="json")
    yield process
    process.close()


# -- plain scalars (pure) ------------------------------------------------------------------------------------


class IntChild(int):
    pass


class StrChild(str):
    pass


class FloatChild(float):
    pass


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 10**5000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 0.0, float("nan"), float("inf"), float("-inf")]),
    # Any code point, lone surrogates included; max_text_chars is 8 below, so some are cut.
    st.text(alphabet=st.characters(exclude_categories=()), max_size=12),
    st.integers().map(IntChild),
    st.text(max_size=4).map(StrChild),
    st.floats().map(FloatChild),
)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(SCALARS)
def test_a_plain_scalar_is_exactly_what_the_walk_returns_unchanged(value):
    limits = Limits(max_text_chars=8)
    try:
        form = json_form(value, limits)
    except NotJson:
        unchanged = False
    else:
        unchanged = (form.value is value and not form.truncated and not form.encoded and not form.encoded_omitted
                     and not (form.cut and form.cut.any))
    assert is_plain_scalar(value, limits) is unchanged


# -- through a worker ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "value"), [
    ("1+1;", None),
    ("1+1; # a comment", None),
    ("1+1;\n# a comment line", None),
    ("x = 3\nx  # no semicolon", 3),
    ("'a;b'", "a;b"),
    ("y = 1; y", 1),
    ("y = 2;\ny", 2),
    ("[1, 2]", [1, 2]),
])
def test_a_trailing_semicolon_hides_the_value_and_only_that(worker, code, value):
    result = worker.execute(code)
    assert result["status"] == "ok"
    assert (None if result["result"] is None else result["result"]["value"]) == value


def test_a_hidden_value_leaves_the_underscore_names_alone(worker):
    worker.execute("7")
    worker.execute("8;")
    assert worker.execute("_")["result"]["value"] == 7


def test_plain_and_encoded_results_keep_their_form(worker):
    assert worker.execute("2**53 - 1")["result"] == {"kind": "json", "value": MAX_SAFE_INTEGER}
    assert worker.execute("2**53")["result"] == {"kind": "json", "value": str(2**53), "encoded": {"$": "int"}}
    assert worker.execute("float('nan')")["result"] == {"kind": "json", "value": "NaN", "encoded": {"$": "float"}}
    assert worker.execute("'\\udcff'")["result"]["encoded"] == {"$": "text"}
    assert worker.execute("True")["result"] == {"kind": "json", "value": True}
    assert worker.execute("class I(int):\n    def __repr__(self):\n        return 'I!'\nI(3)")["result"] == {
        "kind": "repr", "repr": "I!"}
    assert worker.execute("'z' * 9000")["truncated"]["result"] is True


@pytest.mark.parametrize("fd", [1, 2])
def test_a_character_split_at_the_end_of_a_cell_is_settled_in_that_cell(worker, fd):
    name = "stdout" if fd == 1 else "stderr"
    # Read by settle() itself, and read by the drain thread while the cell still runs.
    for pause in ("", "\ntime.sleep(0.2)"):
        first = worker.execute(f"import os, time\nos.write({fd}, b'a\\xc3'){pause}")
        assert first[name] == "a\ufffd"
        second = worker.execute(f"os.write({fd}, b'\\xa9b'){pause}")
        assert second[name] == "\ufffdb"
        assert worker.execute(f"os.write({fd}, 'é'.encode())")[name] == "é"


def test_an_ended_operation_is_freed_without_the_cyclic_collector(worker):
    setup = ("import gc, weakref\n"
             "_owner = next(o for o in gc.get_objects() if type(o).__name__ == 'ShellOwner')\n"
             "_ended = weakref.ref(_owner.operation)\n"
             "_ended_capture = weakref.ref(_owner.operation.capture)\n"
             "_ended_display = weakref.ref(_owner.operation.capture.display)\n"
             "gc.disable()")
    assert worker.execute(setup)["status"] == "ok"
    try:
        assert worker.execute("(_ended(), _ended_capture(), _ended_display())")["result"]["value"] == [None] * 3
    finally:
        worker.execute("gc.enable()")
