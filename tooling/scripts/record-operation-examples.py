"""Records one real answer per operation shape into fixtures/protocol/operations.json.

Run from python/ with the test venv: ../.venv/bin/python ../tooling/scripts/record-operation-examples.py
"""
import sys, json, pathlib
sys.path.insert(0, 'tests')
import test_operations_contract as t
from worker_process import WorkerProcess
w = WorkerProcess()
d = pathlib.Path('/tmp/contract_lib'); d.mkdir(exist_ok=True)
seen = t.scenario(w, d); w.close()
out = []; have = set()
for op, p, r in seen:
    res = r['result']
    key = (op, tuple(sorted(res)), res.get('status'), (res.get('error') or {}).get('kind') if isinstance(res.get('error'), dict) else None,
           (res.get('result') or {}).get('kind') if isinstance(res.get('result'), dict) else None)
    if key in have: continue
    have.add(key)
    if op == 'health': res = {**res, 'pid': 4242}
    out.append({"name": f"{op} #{sum(1 for e in out if e['op'] == op) + 1}", "op": op, "params": p, "result": res})
text = json.dumps({"description": "Real answers of the worker, one per operation shape, recorded from the scenario of python/tests/test_operations_contract.py. packages/protocol/src/operations.test.ts checks each against the zod catalogue, packages/mcp-server/src/output-schemas.test.ts checks their compact forms against the stable tools' output schemas; pytest checks the live worker against the generated schema.", "examples": out}, indent=1, ensure_ascii=False)
open('../fixtures/protocol/operations.json', 'w').write(text.replace(str(d), '/tmp/library') + "\n")
print(len(out), [e['name'] for e in out], len(text))
