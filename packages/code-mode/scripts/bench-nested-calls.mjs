// Nested tool-call round trips (Python -> TypeScript tool -> Python) per second, measured inside one run_code
// call: `node scripts/bench-nested-calls.mjs [calls=1000] [rounds=5]` after `pnpm build`. Prints one JSON line
// with the median of the rounds; set IPYTHON_MCP_PYTHON (or IPYTHON_MCP_TEST_PYTHON) to choose the interpreter.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CodeMode } from '../dist/index.js';

const calls = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 5);
const venv = fileURLToPath(new URL('../../../.venv/bin/python', import.meta.url));
const python = process.env.IPYTHON_MCP_TEST_PYTHON ?? process.env.IPYTHON_MCP_PYTHON ?? (existsSync(venv) ? venv : undefined);

const codeMode = new CodeMode({
  maxToolCalls: calls,
  kernelOptions: python === undefined ? {} : { python },
  tools: [
    {
      name: 'echo',
      description: 'Returns n.',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      execute: (input) => input.n,
    },
  ],
});
try {
  await codeMode.runCode({ code: 'echo(n=0)' });
  const code = `import time\nstarted = time.perf_counter()\nfor i in range(${calls}):\n    assert echo(n=i) == i\ntime.perf_counter() - started`;
  const seconds = [];
  for (let round = 0; round < rounds; round += 1) seconds.push((await codeMode.runCode({ code })).return.value);
  seconds.sort((a, b) => a - b);
  const median = seconds[Math.floor(seconds.length / 2)];
  process.stdout.write(
    `${JSON.stringify({
      benchmark: 'code_mode_nested_tool_calls',
      calls,
      rounds,
      median_seconds: Number(median.toFixed(4)),
      calls_per_second: Math.round(calls / median),
      microseconds_per_call: Number(((median * 1e6) / calls).toFixed(1)),
      rounds_calls_per_second: seconds.map((value) => Math.round(calls / value)),
    })}\n`,
  );
} finally {
  await codeMode.close();
}
