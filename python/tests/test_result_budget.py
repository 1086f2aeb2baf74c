"""Code Mode's byte-bounded results: run_code's ``max_result_bytes`` and the exact counts of what was cut."""

from __future__ import annotations

import json

import pytest
from worker_process import WorkerProcess

from ipython_mcp_worker.protocol.limits import Limits
from ipython_mcp_worker.values.jsonvalue import to_json_bounded

MIB = 1024 * 1024
# The limits the Code Mode kernel configures (packages/code-mode kernelSettings): items never cut before bytes.
KERNEL_LIMITS = {"max_results": 10 * MIB, "max_json_depth": 32, "max_text_chars": 10 * MIB,
                 "max_ipc_message_bytes": 256 * MIB}


def json_bytes(value) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


@pytest.fixture(scope="module")
def kernel():
    process = WorkerProcess(limits=KERNEL_LIMITS)
    assert process.request("define_tools", {"tools": []})["ok"]
    yield process
    process.close()


def run(worker: WorkerProcess, code: str, max_result_bytes: int | None = 10 * MIB) -> dict:
    params = {"code": code} if max_result_bytes is None else {"code": code, "max_result_bytes": max_result_bytes}
    response = worker.request("run_code", params, tool_handler=lambda message: None)
    assert response["ok"], response
    return response["result"]


def test_a_list_of_50000_ints_comes_back_whole(kernel):
    result = run(kernel, "list(range(50_000))")
    assert result["result"] == {"kind": "json", "value": list(range(50_000))}
    assert result["result_cut"] is None
    assert result["truncated"]["result"] is False


def test_a_result_over_the_budget_is_cut_with_exact_counts(kernel):
    result = run(kernel, "list(range(1_000_000))", max_result_bytes=1000)
    kept = result["result"]["value"]
    assert kept == list(range(len(kept)))
    assert json_bytes(kept) <= 1000
    assert json_bytes(kept + [len(kept)]) > 1000  # as much as fits is kept
    assert result["result_cut"] == {"items": 1_000_000 - len(kept), "chars": 0, "deep": 0, "size": True}
    assert result["truncated"]["result"] is True


def test_a_string_is_cut_to_the_budget_in_bytes_with_the_characters_counted(kernel):
    result = run(kernel, "{'text': 'é' * 1000, 'after': 1}", max_result_bytes=100)
    kept = result["result"]["value"]
    assert json_bytes(kept) <= 100
    text = kept["text"]
    assert text == "é" * len(text) and 40 < len(text) < 50  # two bytes a character
    assert result["result_cut"] == {"items": 1, "chars": 1000 - len(text), "deep": 0, "size": True}


def test_containers_past_the_depth_limit_are_counted(kernel):
    result = run(kernel, "deep = [0]\nfor _ in range(40):\n    deep = [deep]\n[deep, [[1]]]")
    assert result["result_cut"] == {"items": 0, "chars": 0, "deep": 1, "size": False}
    value = result["result"]["value"]
    for _ in range(32):
        value = value[0]
    assert value == "…"


def test_without_a_budget_run_code_keeps_the_item_limits():
    worker = WorkerProcess(limits={"max_results": 5})
    try:
        assert worker.request("define_tools", {"tools": []})["ok"]
        result = run(worker, "list(range(8))", max_result_bytes=None)
        assert result["result"]["value"] == [0, 1, 2, 3, 4]
        assert result["result_cut"] is None
        assert run(worker, "list(range(8))", max_result_bytes=10 * MIB)["result_cut"]["items"] == 3
        bad = worker.request("run_code", {"code": "1", "max_result_bytes": -1}, tool_handler=lambda message: None)
        assert bad["ok"] is False and bad["error"]["code"] == "invalid_arguments"
    finally:
        worker.close()


def test_a_cut_repr_counts_the_characters_dropped():
    worker = WorkerProcess(limits={"max_text_chars": 100})
    try:
        assert worker.request("define_tools", {"tools": []})["ok"]
        result = run(worker, "class Long:\n    def __repr__(self):\n        return 'r' * 250\nLong()")
        assert result["result"] == {"kind": "repr", "repr": "r" * 100}
        assert result["result_cut"] == {"repr_chars": 150}
    finally:
        worker.close()


@pytest.mark.parametrize("budget", [2, 3, 7, 16, 61, 200, 1000])
def test_the_kept_json_never_exceeds_the_budget_and_the_counts_add_up(budget):
    limits = Limits(**KERNEL_LIMITS)
    value = {"a": list(range(30)), "bb": ["xy\n" * 5, "é" * 9, None, True, 1.5], "c": {"d": [[]] * 3}}
    kept, cut = to_json_bounded(value, limits, budget)
    assert json_bytes(kept) <= budget
    assert cut.size is (json_bytes(value) > budget)
    flat, flat_cut = to_json_bounded(list(range(500)), limits, budget)
    assert json_bytes(flat) <= budget
    assert len(flat) + flat_cut.items == 500
