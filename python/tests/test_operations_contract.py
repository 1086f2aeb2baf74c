"""The operations catalogue against the real worker: every operation's real params and answers must validate against
fixtures/protocol/operations.schema.json, the JSON Schema generated from packages/protocol/src/operations.ts (zod).

Results are strict there, so a field the worker adds that the catalogue lacks fails here, and so does a required field
the catalogue gained that the worker does not send. Regenerate the schema after editing operations.ts:
``pnpm exec turbo run build && node tooling/scripts/gen-protocol.mjs`` (a TypeScript test fails while it is stale).
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from worker_process import WorkerProcess

from ipython_mcp_worker.protocol import constants
from ipython_mcp_worker.protocol.limits import Limits

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol"
SCHEMA = json.loads((FIXTURES / "operations.schema.json").read_text("utf-8"))
OPERATIONS = sorted(SCHEMA["properties"])


def validator(op: str, part: str) -> jsonschema.Draft202012Validator:
    """The schema of one operation's params or result, with the catalogue's shared definitions."""
    schema = {**SCHEMA["properties"][op]["properties"][part], "$defs": SCHEMA.get("$defs", {})}
    return jsonschema.Draft202012Validator(schema)


def problems(op: str, part: str, instance: Any) -> list[str]:
    return [f"{op}.{part}{''.join(f'[{p!r}]' for p in error.absolute_path)}: {error.message}"
            for error in validator(op, part).iter_errors(instance)]


MODULE = textwrap.dedent('''
    """A module to reload."""
    def helper(x: int) -> int:
        """Double it."""
        return 2 * x
''')
BROKEN = "raise RuntimeError('cannot import')\n"
WEATHER = {
    "python_name": "get_weather",
    "tool_name": "get-weather",
    "doc": "Get the weather.",
    "parameters": [
        {"name": "city", "key": "city", "annotation": "str", "required": True},
        {"name": "days", "key": "days", "annotation": "int | None", "required": False, "default": None,
         "omit_none": True},
    ],
}


def scenario(worker: WorkerProcess, library: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Drives the worker through every operation (success paths with their optional parts), in an order in which
    each one has something to report. Returns (op, params, response) triples."""
    (library / "contract_mod.py").write_text(MODULE, "utf-8")
    (library / "contract_broken.py").write_text("VALUE = 1\n", "utf-8")
    seen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def run(op: str, params: dict[str, Any], tool_handler: Any = None) -> dict[str, Any]:
        response = worker.request(op, params, tool_handler=tool_handler)
        assert response["ok"], (op, response)
        seen.append((op, params, response))
        return response["result"]

    run("health", {})
    setup = ("import contract_mod, contract_broken\n"
             "def add(a: int, b: int = 2) -> int:\n    '''Add two numbers.'''\n    return a + b\n"
             "class Point:\n    '''A point.'''\n    def __init__(self, x: int = 0):\n        self.x = x\n"
             "value = {'n': 10**20, 'f': float('nan')}\n")
    run("execute", {"code": f"import sys\nsys.path.insert(0, {str(library)!r})\n{setup}print('hi')\nvalue"})
    run("execute", {"code": "from IPython.display import display as _display, HTML as _HTML\n_display(_HTML('<b>x</b>'))\n"
                            "Point(1)"})
    run("execute", {"code": "1/0"})
    run("execute", {"code": "def broken(:\n  pass"})
    run("list", {})
    run("search", {"query": "po", "exact": False, "kinds": ["class", "function"]})
    run("search", {"query": "add"})
    run("inspect", {"name": "add"})
    run("inspect", {"name": "contract_mod.helper"})
    run("call_function", {"name": "add", "arguments": {"a": 1}})
    run("call_function", {"name": "contract_mod.helper", "arguments": {"x": 2**60}})
    (library / "contract_broken.py").write_text(BROKEN, "utf-8")
    run("reload", {"modules": ["contract_mod", "contract_broken", "not_imported_anywhere"]})
    registration = run("register_tool", {"name": "add", "tool_name": None, "description": None})
    run("register_tool", {"name": "Point", "tool_name": "make_point", "description": "Make a point."})
    run("discover", {})
    run("discover", {"known_revision": registration["revision"] + 1})
    run("call_tool", {"tool_name": "add", "arguments": {"a": 2, "b": 3}, "fingerprint": registration["fingerprint"]})
    run("unregister_tool", {"names": ["make_point", "never_registered"]})
    run("remove", {"names": ["Point", "_private", "missing_name"]})
    run("define_tools", {"tools": [WEATHER], "max_tool_calls": 5})

    def answer(call: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "value": {"city": call["arguments"]["city"], "temperature": 21}}

    run("run_code", {"code": "print('a')\nget_weather(city='Paris')", "max_tool_calls": 3,
                     "max_result_bytes": 1 << 20}, tool_handler=answer)
    run("run_code", {"code": "list(range(1000))", "max_result_bytes": 64})
    run("run_code", {"code": "raise ValueError('no')"})
    run("reset", {})
    return seen


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    worker = WorkerProcess()
    try:
        yield scenario(worker, tmp_path_factory.mktemp("library"))
    finally:
        worker.close()


def test_the_scenario_covers_every_catalogued_operation(answers) -> None:
    assert sorted({op for op, _, _ in answers}) == OPERATIONS


@pytest.mark.parametrize("op", OPERATIONS)
def test_real_answers_match_the_catalogue(answers, op: str) -> None:
    found = [problem for name, params, response in answers if name == op
             for problem in problems(op, "params", params) + problems(op, "result", response["result"])]
    assert found == []


def test_an_unknown_operation_is_not_served() -> None:
    worker = WorkerProcess()
    try:
        response = worker.request("no_such_operation", {})
    finally:
        worker.close()
    assert response["ok"] is False and response["error"]["code"] == "invalid_request"


def test_the_schema_is_strict_about_fields() -> None:
    # The guard the contract rests on: an unknown field and a missing required field are both errors.
    health = {"pid": 1, "execution_count": 0}
    assert problems("health", "result", health) == []
    assert problems("health", "result", {**health, "extra": 1}) != []
    assert problems("health", "result", {"pid": 1}) != []


def test_the_generated_constants_module_is_current() -> None:
    shared = json.loads((FIXTURES / "constants.json").read_text("utf-8"))["constants"]
    for name, entry in shared.items():
        value = getattr(constants, name)
        assert (list(value) if isinstance(value, tuple) else value) == entry["value"], name
    retryable = json.loads((FIXTURES / "error-codes.json").read_text("utf-8"))["retryable"]
    assert list(constants.RETRYABLE_ERROR_CODE_LIST) == retryable


def test_the_worker_limits_are_the_shared_defaults_by_wire_name() -> None:
    shared = json.loads((FIXTURES / "worker-limits.json").read_text("utf-8"))["limits"]
    defaults = {name: entry["default"] for name, entry in shared.items()}
    assert dataclasses.asdict(Limits()) == defaults
    # Every wire name the parent sends is one the worker reads.
    assert dataclasses.asdict(Limits.from_wire({name: value + 1 for name, value in defaults.items()})) == {
        name: value + 1 for name, value in defaults.items()
    }


def test_the_worker_refuses_a_limit_outside_its_shared_bounds() -> None:
    shared = json.loads((FIXTURES / "worker-limits.json").read_text("utf-8"))["limits"]
    assert dict(constants.WORKER_LIMIT_BOUNDS) == {
        name: (entry["minimum"], entry.get("maximum")) for name, entry in shared.items()}
    for name, entry in shared.items():
        assert getattr(Limits.from_wire({name: entry["minimum"]}), name) == entry["minimum"]
        with pytest.raises(ValueError, match=name):
            Limits.from_wire({name: entry["minimum"] - 1})
        if "maximum" in entry:
            assert getattr(Limits.from_wire({name: entry["maximum"]}), name) == entry["maximum"]
            with pytest.raises(ValueError, match=name):
                Limits.from_wire({name: entry["maximum"] + 1})


def _handler_table_names() -> set[str]:
    """The operation names of the worker's one handler table (``Operations.__init__`` in ops.py), read from source."""
    import ast

    import ipython_mcp_worker.ops as ops

    tree = ast.parse(Path(ops.__file__).read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "handlers":
            assert isinstance(node.value, ast.Dict)
            return {key.value for key in node.value.keys if isinstance(key, ast.Constant)}
    raise AssertionError("ops.py has no `handlers: dict[...] = {...}` table")


def test_the_handler_table_and_the_catalogue_name_the_same_operations() -> None:
    # An operation served by Python but missing from operations.ts (or the reverse) fails here.
    assert _handler_table_names() == set(OPERATIONS)


def test_every_catalogued_operation_is_served_by_the_real_worker() -> None:
    # Bad params on purpose: nothing runs, and each answer must come from the operation's own handler.
    worker = WorkerProcess()
    try:
        responses = {op: worker.request(op, {"__not_a_param__": True}) for op in OPERATIONS}
    finally:
        worker.close()
    unserved = [op for op, response in responses.items()
                if "unknown operation" in str((response.get("error") or {}).get("message", ""))]
    assert unserved == []
