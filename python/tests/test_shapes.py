"""Summaries of data objects (shapes.py): what they hold, read without running any code of the user's."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ipython_mcp_worker.inspection.shapes import data_summary, length_summary


class Tripwire(Exception):
    """Raised by user code that discovery must never run."""


def test_numpy_arrays_give_shape_dtype_and_bytes():
    assert data_summary(np.zeros((2000, 2000))) == "ndarray shape (2000, 2000) float64, 30.5 MB"
    assert data_summary(np.arange(3, dtype=np.int8)) == "ndarray shape (3,) int8, 3 B"


@given(st.lists(st.integers(0, 5), min_size=0, max_size=4), st.sampled_from(["int64", "float32", "bool", "complex128"]))
def test_numpy_summary_states_any_shape_and_dtype(shape, dtype):
    array = np.zeros(shape, dtype=dtype)
    assert data_summary(array) == f"ndarray shape {tuple(shape)} {dtype}, " + (
        f"{array.nbytes} B" if array.nbytes < 1024 else data_summary(array).rsplit(", ", 1)[1]
    )


def test_a_numpy_subclass_is_read_through_ndarrays_own_descriptors():
    class Sneaky(np.ndarray):
        @property
        def shape(self):
            raise Tripwire("shape")

    assert data_summary(np.zeros(4).view(Sneaky)) == "Sneaky shape (4,) float64, 32 B"


def test_pandas_frames_series_and_indexes():
    frame = pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [1.5, 2.0], 3: [1, 2]})
    summary = data_summary(frame)
    assert summary.startswith("DataFrame 2 rows × 3 columns: city str, temp float64, 3 int64; ")
    assert summary.endswith(" B")
    assert data_summary(frame["temp"]).startswith("Series temp, length 2, float64; ")
    assert data_summary(frame.index) == "RangeIndex, length 2, int64"
    wide = pd.DataFrame({f"c{index}": [index] for index in range(30)})
    assert ", … 18 more" in data_summary(wide)


def test_user_labels_and_subclasses_run_nothing():
    class Label:
        def __str__(self):
            raise Tripwire("__str__")

        __repr__ = __str__

    assert data_summary(pd.DataFrame({Label(): [1]})).startswith("DataFrame 1 rows × 1 columns: <Label> int64")

    class HangingFrame(pd.DataFrame):
        @property
        def shape(self):
            raise Tripwire("shape")

    hanging = HangingFrame({"a": [1]})
    assert data_summary(hanging) == "HangingFrame: a pandas.DataFrame subclass; not read (its own code would run)"


def test_builtin_lengths_use_the_builtin_slot():
    class Liar(list):
        def __len__(self):
            raise Tripwire("__len__")

    assert length_summary(Liar([1, 2, 3])) == "len 3"
    assert length_summary({"a": 1}) == "len 1"
    assert length_summary("text") == "len 4"
    assert length_summary(3) is None
    assert data_summary([1, 2]) is None


def test_a_class_property_cannot_pass_for_a_frame():
    class Impostor:
        @property
        def __class__(self):
            raise Tripwire("__class__")

    assert data_summary(Impostor()) is None
    assert length_summary(Impostor()) is None


def test_a_library_nobody_imported_is_not_imported():
    code = (
        "import sys\nfrom ipython_mcp_worker.inspection.shapes import data_summary\n"
        "data_summary([1]); data_summary(object())\n"
        "print(sorted(name for name in ('numpy', 'pandas', 'polars', 'pyarrow', 'torch', 'jax') if name in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("value", [np.float64(1.5), pd.Timestamp("2024-01-01"), None, object()])
def test_other_values_have_no_summary(value):
    assert data_summary(value) is None


@given(st.lists(st.sampled_from(["a", "A", "ab", "Ab", "b", "ba", "aB", "abc"]), max_size=30), st.sampled_from(["a", "ab", "A"]), st.integers(0, 6))
def test_search_order_without_a_full_sort_is_the_full_sort_order(names, query, limit):
    from ipython_mcp_worker.namespace.listing import _first_in_order

    hits = [(name, index) for index, name in enumerate(names)]
    folded = query.casefold()
    expected = sorted(hits, key=lambda pair: (pair[0] != query, pair[0].casefold() != folded, pair[0]))[:limit]
    assert [pair[0] for pair in _first_in_order(hits, query, folded, limit)] == [pair[0] for pair in expected]


# -- polars and pyarrow through a real worker (search and inspect answer the summary; nothing of the user's runs) --


def test_polars_and_pyarrow_tables_through_a_real_worker():
    pytest.importorskip("polars", reason="polars is in the test extras (python/pyproject.toml)")
    pytest.importorskip("pyarrow", reason="pyarrow is in the test extras (python/pyproject.toml)")
    from worker_process import WorkerProcess

    process = WorkerProcess(codec="json")
    try:
        process.execute(
            "import polars as pl, pyarrow as pa\n"
            "plf = pl.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [1.5, 2.0]})\n"
            "pat = pa.table({'a': [1, 2, 3], 'b': ['x', 'y', 'z']})\n"
            "calls = []\n"
            "class HangingPl(pl.DataFrame):\n"
            "    @property\n"
            "    def shape(self):\n"
            "        calls.append('shape')\n"
            "        while True:\n"
            "            pass\n"
            "hpl = HangingPl({'a': [1]})\n"
        )
        found = {m["name"]: m for m in process.request("search", {"query": ""})["result"]["matches"]}
        assert found["plf"]["summary"] == "polars DataFrame 2 rows × 2 columns: city String, temp Float64; 24 B"
        assert found["pat"]["summary"] == "pyarrow Table 3 rows × 2 columns: a int64, b string; 39 B"
        assert found["plf"]["repr"] is None and found["pat"]["repr"] is None
        assert found["hpl"]["summary"] == "HangingPl: a polars.DataFrame subclass; not read (its own code would run)"
        inspected = process.request("inspect", {"name": "pat"})["result"]
        assert inspected["summary"] == found["pat"]["summary"] and inspected["documentation"] is None
        assert process.request("inspect", {"name": "hpl"})["result"]["summary"].startswith("HangingPl: ")
        assert process.execute("calls")["result"]["value"] == []
    finally:
        process.close()


def test_torch_and_jax_branches_against_stand_in_modules(monkeypatch):
    """torch and jax are too heavy for the test environment, so their summaries are NOT tested against the real
    libraries. What this does test is our side of the branch with stand-in modules: it answers only for the exact
    tensor types (torch) or the library's own classes (jax), and a subclass of the user's is not read."""
    import types

    class Tensor:
        shape = (2, 3)
        dtype = "torch.float32"
        device = "cpu"

    class Parameter(Tensor):
        pass

    class UserTensor(Tensor):
        @property
        def shape(self):
            raise Tripwire("shape")

    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.nn = types.SimpleNamespace(Parameter=Parameter)
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert data_summary(Tensor()) == "Tensor shape (2, 3) torch.float32 on cpu"
    assert data_summary(Parameter()) == "Parameter shape (2, 3) torch.float32 on cpu"
    assert data_summary(UserTensor()) is None

    jax_array = type("Array", (), {"__module__": "jaxlib.xla_extension", "shape": (4,), "dtype": "float32"})
    user_array = type("Mine", (jax_array,), {"__module__": "__main__", "shape": property(lambda self: 1 / 0)})
    jax = types.ModuleType("jax")
    jax.Array = jax_array
    monkeypatch.setitem(sys.modules, "jax", jax)
    assert data_summary(jax_array()) == "jax Array shape (4,) float32"
    assert data_summary(user_array()) is None
