// CPU per call of each process, ours against a bare program of the same shape, alternated: Runtime.run against this
// process -> pipe -> a bare run_cell child (floor.py --frames), and the nested call (CodeMode engine, Runtime +
// worker bridge) against the minimal tool call (pipe_call.py --calls). Run it pinned to one CPU so that no wake-up
// crosses vCPUs and the figures are the programs' own work:
//
//   taskset -c 0 node tooling/bench/cpu-ab.mjs [--calls 5000] [--rounds 3] [--warm 300] [--layers]
//
// --layers prices the runtime's own checks on the execute path, each as a row beside the full Runtime.run: the
// worker's request without the runtime (no admission, deadline or memory guard), and Runtime.run with the memory
// guard off, then with no deadline too.
// (build first: the runtime runs the worker copy in packages/worker-supervisor/dist/python)
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './lib/env.mjs';
import { minimalToolCalls, startFrameChild, startPipeCall } from './lib/pipe-echo.mjs';
import { cpuPerCall, cpuSnapshot } from './lib/procs.mjs';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    warm: { type: 'string', default: '300' },
    layers: { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const python = process.env.IPYTHON_MCP_PYTHON ?? join(ROOT, '.venv/bin/python');
const { Runtime } = await import(join(ROOT, 'packages/worker-supervisor/dist/index.js'));
const { CodeMode } = await import(join(ROOT, 'packages/code-mode/dist/index.js'));
/** Runs `block(--warm)` untimed, then `block(--calls)` timed; CPU per call of this process and of `pid` (scheduler time). */
async function measure(label, block, pid) {
  await block(Number(values.warm));
  const snapshot = () => ({ node: cpuSnapshot(process.pid), python: cpuSnapshot(pid) });
  const before = snapshot();
  const started = performance.now();
  await block(calls);
  const wallUs = ((performance.now() - started) * 1000) / calls;
  const cpu = cpuPerCall(before, snapshot(), calls);
  console.log(`${label.padEnd(34)} wall ${wallUs.toFixed(0)} µs, Node CPU ${cpu.node.totalUs.toFixed(0)} µs, Python CPU ${cpu.python.totalUs.toFixed(0)} µs`);
}

const loop = (count) => `for _i in range(${count}):\n    echo(x=_i)`;
const echo = { name: 'echo', description: 'Echo.', inputSchema: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false }, execute: async (input) => input };
const runtime = new Runtime({ python, warmStandby: false });
const unguarded = values.layers ? new Runtime({ python, warmStandby: false, memoryLimitMb: null }) : undefined;
const codeMode = new CodeMode({ tools: [echo], maxToolCalls: 1_000_000_000, timeout: null, kernelOptions: { python } });
const child = startFrameChild(python, 'floor.py', ['--frames'], 'cpu-ab run_cell child');
const minimal = startPipeCall(python, 'cpu-ab minimal call', { calls: await minimalToolCalls() });
try {
  runtime.start();
  await runtime.run('execute', { code: '0' });
  await runtime.run('define_tools', { tools: [{ python_name: 'echo', tool_name: 'echo', doc: 'Echo.', parameters: [{ name: 'x', key: 'x', annotation: 'int', required: true }] }] });
  const workerPid = runtime.workerPids()[0];
  await unguarded?.run('execute', { code: '0' });
  const unguardedPid = unguarded?.workerPids()[0];
  // The active worker itself, for the row without the runtime around it (a private field: bench only).
  const worker = values.layers ? runtime['pool'].current : undefined;
  const kernelPid = (await codeMode.runCode({ code: 'import os\nos.getpid()' })).return.value;
  const cell = Buffer.from(JSON.stringify({ code: '1+1' }));
  const repeat = (once) => async (count) => {
    for (let index = 0; index < count; index += 1) await once();
  };
  const onToolCall = async (call) => ({ ok: true, valueJson: JSON.stringify(call.arguments) });
  for (let round = 0; round < Number(values.rounds); round += 1) {
    console.log(`round ${round + 1}`);
    await measure('execute("1+1") via Runtime.run', repeat(() => runtime.run('execute', { code: '1+1' })), workerPid);
    await measure('  bare client -> run_cell child', repeat(() => child.request(cell)), child.pid);
    if (values.layers) {
      await measure('  worker request, no runtime', repeat(() => worker.request('execute', { code: '1+1' }).reply), workerPid);
      await measure('  Runtime.run, memory guard off', repeat(() => unguarded.run('execute', { code: '1+1' })), unguardedPid);
      await measure('  Runtime.run, guard off, no deadline', repeat(() => unguarded.run('execute', { code: '1+1' }, { timeoutMs: null })), unguardedPid);
    }
    await measure('nested call, CodeMode engine', (count) => codeMode.runCode({ code: loop(count) }), kernelPid);
    await measure('nested call, Runtime + bridge', (count) => runtime.run('run_code', { code: loop(count), max_tool_calls: count + 1 }, { onToolCall, timeoutMs: 600_000 }), workerPid);
    await measure('  minimal tool call', (count) => minimal.run(count, 0), minimal.pid);
  }
} finally {
  minimal.close();
  child.close();
  await codeMode.close();
  await unguarded?.close();
  await runtime.close();
}
