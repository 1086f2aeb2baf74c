#!/usr/bin/env node
// Where a nested Code Mode call's time goes: one CodeMode engine (packages/code-mode/dist) with a trivial `echo`
// tool, one cell making N nested calls, profiled on both sides at once: this process (the engine, Node) with V8's
// sampling profiler (node:inspector), the kernel with cProfile around the loop. Prints the top self and inclusive
// frames of each side and their CPU time per call (schedstat), so a missed nested-call ratio can be read as code.
//   node tooling/bench/profile-nested.mjs [--calls 3000] [--python .venv/bin/python]
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/env.mjs';
import { treeCpu, treeCpuDelta } from './lib/noise.mjs';
import { summarizeCpuProfile } from './lib/profile.mjs';
import { killAll, track } from './lib/procs.mjs';
import { detectEngine } from './sections/code-mode.mjs';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '3000' }, python: { type: 'string', default: join(ROOT, '.venv/bin/python') } } });
const calls = Number(values.calls);
const { engineDist } = detectEngine();
if (!engineDist) throw new Error('packages/code-mode/dist is missing: build first');
const { CodeMode } = await import(pathToFileURL(engineDist).href);
const tool = {
  name: 'echo',
  description: 'Echo the arguments.',
  inputSchema: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
  execute: async (input) => input,
};
const codeMode = new CodeMode({ tools: [tool], maxToolCalls: 10_000_000, timeout: null, kernelOptions: { python: values.python } });
const loop = (count, profiled) =>
  [
    'import cProfile as _p, pstats as _s, io as _io',
    '_prof = _p.Profile()',
    profiled ? '_prof.enable()' : '',
    `for _i in range(${count}):`,
    '    assert echo(x=_i)["x"] == _i',
    '_prof.disable()',
    '_out = _io.StringIO()',
    profiled ? "_s.Stats(_prof, stream=_out).sort_stats('tottime').print_stats(12)" : '',
    "'\\n'.join(line for line in _out.getvalue().splitlines() if line.strip())",
  ].join('\n');
try {
  const pid = await codeMode.runCode({ code: 'import os\nos.getpid()' });
  track(pid.return.value, 'Code Mode kernel');
  await codeMode.runCode({ code: loop(500, false) });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const before = treeCpu({ self: false });
  const self = process.cpuUsage();
  const started = performance.now();
  await session.post('Profiler.start');
  const run = await codeMode.runCode({ code: loop(calls, true) });
  const { profile } = await session.post('Profiler.stop');
  const wallMs = performance.now() - started;
  const selfUs = process.cpuUsage(self);
  const children = treeCpuDelta(before, treeCpu({ self: false }));
  session.disconnect();
  const summary = summarizeCpuProfile(profile, { top: 12 });
  const out = [];
  out.push(`${calls} nested echo calls in one cell: ${((wallMs * 1000) / calls).toFixed(0)} µs wall per call (with cProfile on in the kernel)`);
  out.push(`CPU per call: engine process ${(((selfUs.user + selfUs.system) / calls)).toFixed(0)} µs; ` +
    Object.entries(children.byLabel).map(([label, ns]) => `${label} ${(ns / 1000 / calls).toFixed(0)} µs`).join('; '));
  out.push('', `engine (Node, V8 samples; busy ${summary.busyMs} ms of ${summary.totalMs} ms):`);
  out.push(`  by layer: ${summary.layers.map((item) => `${item.name} ${(item.shareOfBusy * 100).toFixed(0)}%`).join(', ')}`);
  out.push('  top self:');
  for (const item of summary.self) out.push(`    ${(item.shareOfBusy * 100).toFixed(1).padStart(5)}%  ${item.name}`);
  out.push('  top inclusive:');
  for (const item of summary.inclusive) out.push(`    ${(item.shareOfBusy * 100).toFixed(1).padStart(5)}%  ${item.name}`);
  out.push('', 'kernel (cProfile, sorted by own time):', ...String(run.return?.value ?? JSON.stringify(run.return)).split('\n').map((line) => `  ${line}`));
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await codeMode.close();
  killAll();
}
