// --state FILE: a save and a restore of the namespace snapshot (the worker's StateStore, in one Python process)
// against dill.dump / dill.load of the same objects in the same process, interleaved: 1 GiB of numpy arrays,
// 100,000 small objects in one list, and the same objects as 10,000 names (one record each).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PY_DIR, ROOT } from '../lib/env.mjs';
import { run } from '../lib/procs.mjs';

export async function measureState(ctx) {
  const directory = mkdtempSync(join(tmpdir(), 'ipython-mcp-bench-state-'));
  try {
    const args = [join(PY_DIR, 'state_bench.py'), directory, '--gib', String(ctx.n.stateGiB), '--small', String(ctx.n.stateSmall), '--reps', String(ctx.n.stateReps)];
    const { stdout } = await run(ctx.python, args, { label: 'state_bench.py', env: { ...process.env, PYTHONPATH: join(ROOT, 'python') } });
    return JSON.parse(stdout.trim().split('\n').pop());
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
