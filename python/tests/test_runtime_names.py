"""The worker's copy of IPython's runtime names equals the shared fixture (one definition for both languages)."""

from __future__ import annotations

import json
from pathlib import Path

from ipython_mcp_worker.namespace import operations as namespace
from ipython_mcp_worker.namespace.runtime_names import RUNTIME_NAMES

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "protocol" / "runtime-names.json"


def test_runtime_names_match_the_shared_fixture() -> None:
    shared = json.loads(FIXTURE.read_text("utf-8"))
    assert sorted(RUNTIME_NAMES) == sorted(shared["names"])
    assert len(shared["names"]) == len(set(shared["names"]))


def test_namespace_operations_use_the_shared_names() -> None:
    assert namespace.RUNTIME_NAMES is RUNTIME_NAMES
