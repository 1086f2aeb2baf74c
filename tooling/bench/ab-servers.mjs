#!/usr/bin/env node
// Two builds of ipython-mcp, A and B, measured in one run: execute("1+1") round trips through the same SDK client,
// over stdio and over --http, in alternating blocks (which one first alternating too), so load drift hits both.
// Prints the median per block for each, the per-block ratio B/A with its median, range and bootstrap 95 % interval,
// the same for the CPU time per call of each side's processes (server and worker), the machine's noise in the run
// (a calibration loop between the blocks, load, steal, other processes' CPU), and a verdict: B slower, B faster, or
// cannot tell apart, with the bootstrap's confidence.
//   node tooling/bench/ab-servers.mjs --a OLD/apps/ipython-mcp/dist/cli.js --b NEW/apps/ipython-mcp/dist/cli.js \
//        [--calls 200] [--blocks 12] [--warm 300] [--http]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadModules, ROOT } from './lib/env.mjs';
import { settle, startHttpServer, startServer } from './lib/mcp.mjs';
import { SAME, calibrate, compareVerdict, describeMachine, treeCpu, treeCpuDelta, watchMachine } from './lib/noise.mjs';
import { descendants, killAll } from './lib/procs.mjs';
import { quantile, spread } from './lib/stats.mjs';
import { CELL, checkExecuteResult, timeLoop } from './sections/execute.mjs';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    calls: { type: 'string', default: '200' },
    blocks: { type: 'string', default: '12' },
    warm: { type: 'string', default: '300' },
    http: { type: 'boolean', default: false },
  },
});
if (!values.a || !values.b) throw new Error('--a and --b name the two builds\' dist/cli.js');
const python = process.env.IPYTHON_MCP_PYTHON ?? join(ROOT, '.venv/bin/python');
const modules = await loadModules();
const start = (cli, label) =>
  values.http
    ? startHttpServer(modules, { args: [cli, '--http', '127.0.0.1:0'], env: { IPYTHON_MCP_PYTHON: python }, label })
    : startServer(modules, { args: [cli], env: { IPYTHON_MCP_PYTHON: python }, label });
const sides = [
  { name: 'A', server: await start(values.a, 'A'), medians: [], cpuUs: [] },
  { name: 'B', server: await start(values.b, 'B'), medians: [], cpuUs: [] },
];
const calibrations = [];
let machine = null;
const call = (server) => async () => checkExecuteResult(await server.call('execute', { code: CELL }));
try {
  for (const side of sides) {
    await settle(side.server);
    await timeLoop(call(side.server), 0, Number(values.warm));
  }
  const watch = watchMachine();
  for (let block = 0; block < Number(values.blocks); block += 1) {
    calibrations.push(calibrate());
    for (const side of block % 2 === 0 ? sides : [...sides].reverse()) {
      // CPU of this side's server and its workers over the block: a busy neighbour moves it less than wall time.
      const pids = new Set([side.server.pid, ...descendants(side.server.pid)]);
      const before = treeCpu({ self: false });
      const samples = await timeLoop(call(side.server), Number(values.calls), 5);
      const { totalNs } = treeCpuDelta(
        new Map([...before].filter(([pid]) => pids.has(pid))),
        new Map([...treeCpu({ self: false })].filter(([pid]) => pids.has(pid))),
      );
      side.medians.push(quantile([...samples].sort((x, y) => x - y), 0.5));
      side.cpuUs.push(totalNs / 1000 / (Number(values.calls) + 5));
    }
  }
  machine = watch.end(calibrations);
} finally {
  for (const side of sides) await side.server.close();
  killAll();
}
const sorted = (list) => [...list].sort((x, y) => x - y);
const ms = (value) => `${(value * 1000).toFixed(0)} µs`;
const wall = spread(sides[1].medians.map((value, index) => value / sides[0].medians[index]));
const cpu = spread(sides[1].cpuUs.map((value, index) => value / sides[0].cpuUs[index]));
const describe = (entry) =>
  `median ${entry.median.toFixed(3)}× (95 % CI ${entry.ci?.lo.toFixed(3) ?? '?'}–${entry.ci?.hi.toFixed(3) ?? '?'}×; range ${entry.min.toFixed(3)}–${entry.max.toFixed(3)}×)`;
const verdict = (entry) => {
  const said = compareVerdict(entry.ci, machine);
  if (!entry.ci) return said;
  const confidence = said === SAME ? Math.max(entry.ci.aboveOne, 1 - entry.ci.aboveOne) : entry.median > 1 ? entry.ci.aboveOne : 1 - entry.ci.aboveOne;
  const direction = entry.ci.aboveOne >= 0.5 ? 'B slower' : 'B faster';
  return `${said} (bootstrap: ${(confidence * 100).toFixed(0)} % of resampled medians say ${direction})`;
};
process.stdout.write(
  `${values.http ? 'http' : 'stdio'} execute("1+1"), ${values.blocks} blocks × ${values.calls} calls\n` +
    `A median of block medians ${ms(quantile(sorted(sides[0].medians), 0.5))}; B ${ms(quantile(sorted(sides[1].medians), 0.5))}\n` +
    `B/A wall per block: ${describe(wall)}\n` +
    `  verdict: ${verdict(wall)}\n` +
    `server + worker CPU per call: A ${quantile(sorted(sides[0].cpuUs), 0.5).toFixed(0)} µs, B ${quantile(sorted(sides[1].cpuUs), 0.5).toFixed(0)} µs; B/A per block: ${describe(cpu)}\n` +
    `  verdict: ${verdict(cpu)}\n` +
    `machine: ${describeMachine(machine)}\n`,
);
