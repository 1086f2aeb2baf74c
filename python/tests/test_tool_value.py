"""A tool result's value is read exactly as ``json.loads`` reads it, through the scanner fast path or not."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipython_mcp_worker.code_mode.bridge import ToolCallError, _tool_value

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
SPACE = st.sampled_from(["", " ", "\n", "\t", " \r\n "])


def outcome_of_loads(text: str) -> tuple[str, str]:
    try:
        return "ok", repr(json.loads(text))
    except ValueError:
        return "error", ""


def outcome_of_tool_value(text: object) -> tuple[str, str]:
    try:
        return "ok", repr(_tool_value({"value_json": text}, "probe"))
    except ToolCallError:
        return "error", ""


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, SPACE, SPACE, st.sampled_from([(",", ":"), (", ", ": ")]))
def test_json_text_reads_as_json_loads_reads_it(value, before, after, separators):
    text = before + json.dumps(value, separators=separators, ensure_ascii=False) + after
    assert outcome_of_tool_value(text) == outcome_of_loads(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]",:0123456789.eE-+ntrufalsNIiy \\\nx')), max_size=24))
def test_any_text_reads_as_json_loads_reads_it(text):
    assert outcome_of_tool_value(text) == outcome_of_loads(text)


@pytest.mark.parametrize("text", ["NaN", "-Infinity", "1e400", "123456789012345678901234567890", '"\\ud800"', "-0"])
def test_the_value_contracts_tokens_keep_their_meaning(text):
    assert outcome_of_tool_value(text) == outcome_of_loads(text)


class TextChild(str):
    pass


def test_a_str_subclass_is_read_as_its_text_and_anything_else_is_refused():
    assert _tool_value({"value_json": TextChild('{"x": 1}')}, "probe") == {"x": 1}
    with pytest.raises(ToolCallError, match="without value_json"):
        _tool_value({"value_json": b"{}"}, "probe")
    with pytest.raises(ToolCallError, match="not JSON"):
        _tool_value({"value_json": "{"}, "probe")
