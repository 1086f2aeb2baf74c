// Cancellation stress through the real Runtime: N cancellations at random moments (0-300 ms after the request is
// sent), every other one the first interrupt of a worker just promoted from standby after a crash, with CPU hogs
// running. Reports how many lost the namespace and the abort -> result times.
//
//   node tooling/bench/cancel-stress.mjs [--n 80] [--hogs 3] [--grace-ms 1000]
// (build first: the runtime runs the worker copy in packages/worker-supervisor/dist/python)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT as root } from './lib/env.mjs';
import { summarize } from './lib/stats.mjs';

const { values } = parseArgs({ options: { n: { type: 'string', default: '80' }, hogs: { type: 'string', default: '3' }, 'grace-ms': { type: 'string', default: '1000' } } });
const n = Number(values.n);
const { Runtime } = await import(join(root, 'packages/worker-supervisor/dist/index.js'));
const python = process.env.IPYTHON_MCP_PYTHON ?? join(root, '.venv/bin/python');
const hogs = Array.from({ length: Number(values.hogs) }, () => spawn(python, ['-c', 'while True: pass'], { stdio: 'ignore' }));
const runtime = new Runtime({ python, interruptionGraceMs: Number(values['grace-ms']) });
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const times = { first: [], later: [] };
let lost = 0;
try {
  runtime.start();
  for (let i = 0; i < n; i++) {
    const first = i % 2 === 0;
    if (first) {
      await runtime.run('execute', { code: 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)' });
      await runtime.run('execute', { code: 'after = 1' });
      await pause(300); // the promoted worker idles a moment, as between agent turns
    }
    const controller = new AbortController();
    const running = runtime.run('execute', { code: 'import time\ntime.sleep(10**6)' }, { signal: controller.signal });
    await pause(Math.random() * 300);
    const started = performance.now();
    controller.abort();
    const outcome = await running;
    (first ? times.first : times.later).push(performance.now() - started);
    if (outcome.meta.namespace !== 'preserved') {
      lost++;
      console.log(`cancellation ${i}: ${outcome.meta.interruption}, namespace ${outcome.meta.namespace}`);
    }
  }
} finally {
  await runtime.close();
  for (const hog of hogs) hog.kill();
}
const describe = (list) => {
  const { median, max } = summarize(list);
  return `median ${median.toFixed(1)} ms, max ${max.toFixed(1)} ms`;
};
console.log(`${n} cancellations, ${values.hogs} CPU hogs: namespace lost ${lost}; abort -> result: first interrupt of a promoted worker ${describe(times.first)}; later ${describe(times.later)}`);
