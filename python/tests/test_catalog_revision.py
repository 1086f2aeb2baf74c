"""``catalog_revision`` on response frames (docs/protocol.md): a real worker, every kind of operation."""

from __future__ import annotations

import pytest
from worker_process import WorkerProcess

ADD = "def add(a: int, b: int = 2) -> int:\n    return a + b"


@pytest.fixture
def worker():
    process = WorkerProcess(codec="json")
    yield process
    process.close()


def ok(response: dict) -> dict:
    assert response["ok"] is True, response
    return response


def test_no_registrations_no_field(worker):
    for op, params in [("execute", {"code": ADD}), ("list", {}), ("health", {}), ("discover", {}),
                       ("call_function", {"name": "add", "arguments": {"a": 1}}), ("remove", {"names": ["zz"]})]:
        assert "catalog_revision" not in ok(worker.request(op, params)), op


def test_registering_carries_the_revision_and_every_later_operation_too(worker):
    ok(worker.request("execute", {"code": ADD}))
    registered = ok(worker.request("register_tool", {"name": "add"}))
    revision = registered["result"]["revision"]
    assert registered["catalog_revision"] == revision
    # Nothing changed: the same revision on every response, which is all the parent needs to skip discover.
    assert ok(worker.request("execute", {"code": "1 + 1"}))["catalog_revision"] == revision
    assert ok(worker.request("call_tool", {"tool_name": "add", "arguments": {"a": 1},
                                           "fingerprint": registered["result"]["fingerprint"]}))["catalog_revision"] == revision
    # A body-only redefinition keeps the schema: still fresh, same revision.
    assert ok(worker.request("execute", {"code": ADD + " + 0"}))["catalog_revision"] == revision
    # health and discover never carry it (discover answers the revision in its result).
    assert "catalog_revision" not in ok(worker.request("health", {}))
    discovered = ok(worker.request("discover", {}))
    assert "catalog_revision" not in discovered and discovered["result"]["revision"] == revision


def test_an_incompatible_redefinition_advances_the_revision_in_the_same_response(worker):
    ok(worker.request("execute", {"code": ADD}))
    revision = ok(worker.request("register_tool", {"name": "add"}))["catalog_revision"]
    changed = ok(worker.request("execute", {"code": "def add(a: str) -> str:\n    return a"}))
    assert changed["catalog_revision"] == revision + 1
    discovered = ok(worker.request("discover", {"known_revision": revision}))["result"]
    assert discovered["revision"] == revision + 1 and discovered["stale"] == ["add"]
    # Stale stays stale: later operations report the same revision.
    assert ok(worker.request("execute", {"code": "1"}))["catalog_revision"] == revision + 1


def test_deleting_the_backing_callable_in_code_advances_it(worker):
    ok(worker.request("execute", {"code": ADD}))
    revision = ok(worker.request("register_tool", {"name": "add"}))["catalog_revision"]
    assert ok(worker.request("execute", {"code": "del add"}))["catalog_revision"] == revision + 1


def test_a_failing_operation_still_reports_what_it_changed(worker):
    ok(worker.request("execute", {"code": ADD + "\ndef boom() -> None:\n    global add\n    del add\n    raise ValueError('x')"}))
    revision = ok(worker.request("register_tool", {"name": "add"}))["catalog_revision"]
    failed = worker.request("call_function", {"name": "boom"})
    assert failed["ok"] is False and failed["error"]["code"] == "call_raised"
    assert failed["catalog_revision"] == revision + 1


def test_bad_params_are_invalid_arguments_and_change_nothing(worker):
    ok(worker.request("execute", {"code": ADD}))
    revision = ok(worker.request("register_tool", {"name": "add"}))["catalog_revision"]
    for op, params in [("register_tool", {"name": "add", "tool_name": 3}), ("register_tool", {"nam": "add"}),
                       ("unregister_tool", {"names": "add"}), ("discover", {"known_revision": "1"}),
                       ("call_tool", {"tool_name": "add", "arguments": {"a": 1}})]:
        failed = worker.request(op, params)
        assert failed["ok"] is False and failed["error"]["code"] == "invalid_arguments", (op, failed)
        assert failed.get("catalog_revision", revision) == revision, op
    assert [tool["tool_name"] for tool in ok(worker.request("discover", {}))["result"]["tools"]] == ["add"]


def test_emptying_the_registry_reports_once_then_the_field_goes_away(worker):
    ok(worker.request("execute", {"code": ADD + "\ndef sub(a: int) -> int:\n    return -a"}))
    ok(worker.request("register_tool", {"name": "add"}))
    revision = ok(worker.request("register_tool", {"name": "sub"}))["catalog_revision"]
    assert ok(worker.request("unregister_tool", {"names": ["add"]}))["catalog_revision"] == revision + 1
    # reset first invalidates the removed backing names, then drops the catalog: the revision moves on.
    emptied = ok(worker.request("reset", {}))["catalog_revision"]
    assert emptied > revision + 1
    assert "catalog_revision" not in ok(worker.request("execute", {"code": "1"}))
    # A failed registration on an empty registry still says where the catalog stands (it did not move).
    failed = worker.request("register_tool", {"name": "missing"})
    assert failed["error"]["code"] == "name_not_found" and failed["catalog_revision"] == emptied
    # unregister_tool of nothing: the revision, unchanged.
    assert ok(worker.request("unregister_tool", {"names": ["x"]}))["catalog_revision"] == emptied


def test_discover_right_after_an_operation_reuses_its_reconciliation_and_stays_exact(worker):
    ok(worker.request("execute", {"code": ADD}))
    revision = ok(worker.request("register_tool", {"name": "add"}))["catalog_revision"]
    # The parent that still asks after every operation: execute reconciled, discover answers from it.
    for code, stale in [("1", []), ("def add(a: str) -> str:\n    return a", ["add"])]:
        reported = ok(worker.request("execute", {"code": code}))["catalog_revision"]
        discovered = ok(worker.request("discover", {}))["result"]
        assert discovered["revision"] == reported and discovered["stale"] == stale
    assert reported == revision + 1
    # An interrupted or failed reconciliation is never reused: a malformed request in between changes nothing.
    assert worker.request("no_such_op")["error"]["code"] == "invalid_request"
    assert ok(worker.request("discover", {}))["result"]["revision"] == reported
