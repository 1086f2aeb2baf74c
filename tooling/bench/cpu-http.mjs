#!/usr/bin/env node
// CPU per execute("1+1") of each process, ours over --http against the SDK's HTTP composed floor (bare SDK HTTP
// server → pipe → run_cell child), interleaved in blocks: where our HTTP path spends what the floor does not.
//   node tooling/bench/cpu-http.mjs [calls per block] [blocks]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModules } from './lib/env.mjs';
import { evaluate, settle, startHttpServer } from './lib/mcp.mjs';
import { cpuPerCall, cpuSnapshot, killAll } from './lib/procs.mjs';
import { CELL, COMPOSED_SERVER, checkExecuteResult, writeShapeFile } from './sections/execute.mjs';

const calls = Number(process.argv[2] ?? 300);
const blocks = Number(process.argv[3] ?? 6);
const modules = await loadModules();
const python = process.env.IPYTHON_MCP_PYTHON ?? join(process.cwd(), '.venv/bin/python');
const ours = await startHttpServer(modules, { env: { IPYTHON_MCP_PYTHON: python } });
const workerPid = await evaluate(ours, 'import os as _o\n_o.getpid()');
await settle(ours);
const first = await ours.call('execute', { code: CELL });
const { tools } = await ours.client.listTools();
const file = writeShapeFile(mkdtempSync(join(tmpdir(), 'cpu-http-')), { tool: tools.find((tool) => tool.name === 'execute'), result: first });
const floor = await startHttpServer(modules, { args: [COMPOSED_SERVER], env: { BENCH_HTTP: '1', BENCH_SHAPED_RESULT: file, BENCH_PYTHON: python } });
await floor.client.listTools();
await floor.call('execute', { code: CELL });
const [childPid] = floor.children();
const sides = {
  ours: { server: ours, pids: { client: process.pid, server: ours.pid, worker: workerPid }, cpu: {}, wall: [] },
  floor: { server: floor, pids: { client: process.pid, server: floor.pid, child: childPid }, cpu: {}, wall: [] },
};
for (let warm = 0; warm < 300; warm += 1) for (const side of Object.values(sides)) checkExecuteResult(await side.server.call('execute', { code: CELL }));
for (let round = 0; round < blocks; round += 1) {
  for (const side of round % 2 === 0 ? [sides.ours, sides.floor] : [sides.floor, sides.ours]) {
    const snap = () => Object.fromEntries(Object.entries(side.pids).map(([label, pid]) => [label, cpuSnapshot(pid)]));
    const before = snap();
    const started = performance.now();
    for (let index = 0; index < calls; index += 1) checkExecuteResult(await side.server.call('execute', { code: CELL }));
    side.wall.push(((performance.now() - started) * 1000) / calls);
    const per = cpuPerCall(before, snap(), calls);
    for (const [label, value] of Object.entries(per)) (side.cpu[label] ??= []).push(value.totalUs);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, side] of Object.entries(sides)) {
  const parts = Object.entries(side.cpu).map(([label, values]) => `${label} ${JSON.stringify(median(values))}`);
  process.stdout.write(`${name}: wall ${median(side.wall).toFixed(0)} µs/call; cpu ${parts.join(', ')}\n`);
}
process.stdout.write(`wall ratio ours/floor per block: ${sides.ours.wall.map((w, i) => (w / sides.floor.wall[i]).toFixed(2)).join(' ')}\n`);
await ours.close();
await floor.close();
killAll();
