// execute("1+1") on protocol 2026-07-28 against 2025-11-25, same run, same binary, alternated in rounds so that load
// drifts hit both alike. One stdio server per era: the 2025 era with the v2 SDK client in its default mode
// (`initialize`, 2025-11-25, so both eras have the same client library), the 2026 era with that client pinned to
// 2026-07-28 (`server/discover`, the per-request envelope). Also the composed floor of each era: a bare SDK server of
// the same generation (v1 `Server` for 2025-11-25, v2 `Server` through `serveStdio` for 2026-07-28) answering a
// fixed result, so the ratio of our servers can be read against the ratio of the bare ones.
//
//   node tooling/bench/era-ab.mjs [--calls 400] [--rounds 5] [--warm 100]
//
// (build first; IPYTHON_MCP_PYTHON or the repository's .venv is the worker's Python)
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, ROOT } from './lib/env.mjs';
import { cpuPerCall, cpuSnapshot } from './lib/procs.mjs';
import { quantile } from './lib/stats.mjs';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '400' }, rounds: { type: 'string', default: '5' }, warm: { type: 'string', default: '100' } } });
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const warm = Number(values.warm);
const python = process.env.IPYTHON_MCP_PYTHON ?? join(ROOT, '.venv/bin/python');
const clientDir = join(ROOT, 'apps/ipython-mcp/node_modules/@modelcontextprotocol/client/dist');
const { Client } = await import(join(clientDir, 'index.mjs'));
const { StdioClientTransport } = await import(join(clientDir, 'stdio.mjs'));
const FLOOR = join(ROOT, 'tooling/bench/lib/era-floor.mjs');

/** A connected client of `era` on `args` (our CLI, or the floor of that era). */
async function open(era, args, tool) {
  const options = era === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
  const client = new Client({ name: 'era-ab', version: '1' }, options);
  const transport = new StdioClientTransport({ command: process.execPath, args, env: { ...process.env, IPYTHON_MCP_PYTHON: python, BENCH_ERA: era }, stderr: 'ignore' });
  await client.connect(transport);
  await client.listTools();
  const call = () => client.callTool({ name: tool, arguments: { code: '1+1' } });
  if (era !== (client.getNegotiatedProtocolVersion() === '2026-07-28' ? '2026-07-28' : '2025-11-25')) throw new Error(`asked for ${era}, negotiated ${client.getNegotiatedProtocolVersion()}`);
  return { call, pid: transport.pid, close: () => client.close() };
}

/** Per-call wall time (µs) of `count` sequential calls. */
async function timed(target, count) {
  const samples = [];
  for (let index = 0; index < count; index++) {
    const start = process.hrtime.bigint();
    await target.call();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return samples;
}

const targets = {
  'ipython-mcp 2025-11-25': await open('2025-11-25', [CLI], 'execute'),
  'ipython-mcp 2026-07-28': await open('2026-07-28', [CLI], 'execute'),
  'bare SDK floor 2025-11-25 (v1 Server)': await open('2025-11-25', [FLOOR], 'execute'),
  'bare SDK floor 2026-07-28 (v2 Server)': await open('2026-07-28', [FLOOR], 'execute'),
};
const samples = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
// CPU of each server's Node process (scheduler time, all threads), per call: less hostage to a loaded machine than
// wall time. The Python worker behind our two servers is the same program in both eras, so it is left out.
const cpu = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
for (const target of Object.values(targets)) await timed(target, warm);
for (let round = 0; round < rounds; round++) {
  for (const [name, target] of Object.entries(targets)) {
    const before = { server: cpuSnapshot(target.pid) };
    samples[name].push(...(await timed(target, calls)));
    cpu[name].push(cpuPerCall(before, { server: cpuSnapshot(target.pid) }, calls).server.totalUs);
  }
}
for (const target of Object.values(targets)) await target.close();

const median = (name) => quantile(samples[name], 0.5);
const cpuMedian = (name) => quantile(cpu[name], 0.5);
console.log(`execute("1+1"), stdio, ${rounds} rounds × ${calls} calls per target, alternated (wall: median and p90 µs per call; server CPU: median of the rounds, µs per call):`);
for (const name of Object.keys(samples)) {
  console.log(`  ${name.padEnd(40)} wall ${median(name).toFixed(0).padStart(6)} µs  p90 ${quantile(samples[name], 0.9).toFixed(0).padStart(6)} µs  server CPU ${cpuMedian(name).toFixed(0).padStart(5)} µs  (rounds: ${cpu[name].map((value) => value.toFixed(0)).join(', ')})`);
}
const ratio = (of, a, b) => (of(a) / of(b)).toFixed(3);
const [ours, floor] = [['ipython-mcp 2026-07-28', 'ipython-mcp 2025-11-25'], ['bare SDK floor 2026-07-28 (v2 Server)', 'bare SDK floor 2025-11-25 (v1 Server)']];
console.log(`  ratio 2026-07-28 / 2025-11-25, wall: ipython-mcp ${ratio(median, ...ours)}×, bare SDK floors ${ratio(median, ...floor)}×`);
console.log(`  ratio 2026-07-28 / 2025-11-25, server CPU: ipython-mcp ${ratio(cpuMedian, ...ours)}×, bare SDK floors ${ratio(cpuMedian, ...floor)}×`);
