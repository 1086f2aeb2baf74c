#!/usr/bin/env node
// Two builds of ipython-mcp, A and B, measured in one run: execute("1+1") round trips through the same SDK client,
// over stdio and over --http, in alternating blocks (which one first alternating too), so load drift hits both.
// Prints the median per block for each and the per-block ratio B/A with its median and range.
//   node tooling/bench/ab-servers.mjs --a OLD/apps/ipython-mcp/dist/cli.js --b NEW/apps/ipython-mcp/dist/cli.js \
//        [--calls 200] [--blocks 12] [--warm 300] [--http]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadModules, ROOT } from './lib/env.mjs';
import { settle, startHttpServer, startServer } from './lib/mcp.mjs';
import { killAll } from './lib/procs.mjs';
import { quantile } from './lib/stats.mjs';
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
  { name: 'A', server: await start(values.a, 'A'), medians: [] },
  { name: 'B', server: await start(values.b, 'B'), medians: [] },
];
const call = (server) => async () => checkExecuteResult(await server.call('execute', { code: CELL }));
try {
  for (const side of sides) {
    await settle(side.server);
    await timeLoop(call(side.server), 0, Number(values.warm));
  }
  for (let block = 0; block < Number(values.blocks); block += 1) {
    for (const side of block % 2 === 0 ? sides : [...sides].reverse()) {
      const samples = await timeLoop(call(side.server), Number(values.calls), 5);
      side.medians.push(quantile([...samples].sort((x, y) => x - y), 0.5));
    }
  }
} finally {
  for (const side of sides) await side.server.close();
  killAll();
}
const ratios = sides[1].medians.map((value, index) => value / sides[0].medians[index]);
const sorted = (list) => [...list].sort((x, y) => x - y);
const ms = (value) => `${(value * 1000).toFixed(0)} µs`;
process.stdout.write(
  `${values.http ? 'http' : 'stdio'} execute("1+1"), ${values.blocks} blocks × ${values.calls} calls\n` +
    `A median of block medians ${ms(quantile(sorted(sides[0].medians), 0.5))}; B ${ms(quantile(sorted(sides[1].medians), 0.5))}\n` +
    `B/A per block: median ${quantile(sorted(ratios), 0.5).toFixed(3)}× (range ${sorted(ratios)[0].toFixed(3)}–${sorted(ratios).at(-1).toFixed(3)}×; ` +
    `p25–p75 ${quantile(sorted(ratios), 0.25).toFixed(3)}–${quantile(sorted(ratios), 0.75).toFixed(3)}×)\n`,
);
