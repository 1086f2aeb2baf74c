"""Records one real answer per operation shape into fixtures/protocol/operations.json.

Run from python/ with the test venv: ../.venv/bin/python ../tooling/scripts/record-operation-examples.py
(the scenario is the contract test's own, python/tests/test_operations_contract.py).
"""

import json
import pathlib
import sys
import tempfile

sys.path.insert(0, "tests")
import test_operations_contract as contract  # noqa: E402
from worker_process import WorkerProcess  # noqa: E402

worker = WorkerProcess()
library = pathlib.Path(tempfile.mkdtemp(prefix="contract-library-"))
try:
    seen = contract.scenario(worker, library)
finally:
    worker.close()


def kind(value):
    return value.get("kind") if isinstance(value, dict) else None


examples, shapes = [], set()
for op, params, response in seen:
    result = response["result"]
    shape = (op, tuple(sorted(result)), result.get("status"), kind(result.get("error")), kind(result.get("result")))
    if shape in shapes:
        continue
    shapes.add(shape)
    if op == "health":
        result = {**result, "pid": 4242}
    number = sum(1 for example in examples if example["op"] == op) + 1
    examples.append({"name": f"{op} #{number}", "op": op, "params": params, "result": result})
text = json.dumps({
    "description": "Real answers of the worker, one per operation shape, recorded by "
                   "tooling/scripts/record-operation-examples.py from the scenario of "
                   "python/tests/test_operations_contract.py. packages/protocol/src/operations.test.ts checks each "
                   "against the zod catalogue, packages/mcp-server/src/results/output-schemas.test.ts their compact forms "
                   "against the stable tools' output schemas; pytest checks the live worker against the generated "
                   "schema.",
    "examples": examples,
}, indent=1, ensure_ascii=False)
pathlib.Path("../fixtures/protocol/operations.json").write_text(text.replace(str(library), "/tmp/library") + "\n", "utf-8")
print(f"recorded {len(examples)} examples", file=sys.stderr)
