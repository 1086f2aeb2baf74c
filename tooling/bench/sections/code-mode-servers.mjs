// `ipython-mcp code-mode --servers FILE`: an upstream tool call made from Python inside run_code, against the same
// call made directly by an MCP client (the SDK's Client over stdio), for two upstreams: the bare SDK server's
// no-op tool (the MCP floor) and ipython-mcp's execute("1+1"). Inside run_code each call is timed in the kernel
// (Python -> our server -> upstream -> back into Python); directly, each call is a client round trip.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT } from '../lib/env.mjs';
import { startServer } from '../lib/mcp.mjs';
import { summarize } from '../lib/stats.mjs';

const MINIMAL = join(ROOT, 'tooling/bench/lib/minimal-server.mjs');
const WARMUP_CALLS = 50;

async function direct(server, tool, args, count) {
  for (let index = 0; index < WARMUP_CALLS; index += 1) await server.call(tool, args);
  const samples = [];
  const started = performance.now();
  for (let index = 0; index < count; index += 1) {
    const before = performance.now();
    const result = await server.call(tool, args);
    samples.push(performance.now() - before);
    if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content).slice(0, 200)}`);
  }
  return { summary: summarize(samples), totalMs: performance.now() - started };
}

function loopCode(call, count) {
  return [
    'import time as _bench_time',
    `for _bench_i in range(${WARMUP_CALLS}):`,
    `    ${call}`,
    '_bench_samples = []',
    `for _bench_i in range(${count}):`,
    '    _bench_before = _bench_time.perf_counter()',
    `    ${call}`,
    '    _bench_samples.append((_bench_time.perf_counter() - _bench_before) * 1000)',
    '_bench_samples',
  ].join('\n');
}

async function viaRunCode(server, call, count) {
  const started = performance.now();
  const result = await server.call('run_code', { code: loopCode(call, count) });
  const wallMs = performance.now() - started;
  const text = result.content.map((part) => part.text ?? '').join('');
  if (result.isError) throw new Error(`run_code failed: ${text.slice(0, 300)}`);
  // The value is the first block; the summary of the nested calls' consent decisions follows it.
  const samples = JSON.parse(result.content[0]?.text ?? '');
  if (!Array.isArray(samples) || samples.length !== count) throw new Error(`run_code returned ${text.slice(0, 200)}`);
  return { summary: summarize(samples), runCodeWallMs: wallMs };
}

/** Measures upstream calls through code-mode against direct client calls (medians per call, in ms). */
export async function measureCodeModeServers(ctx) {
  const count = Math.max(100, Math.round(ctx.n.toolCalls / 5));
  const ipythonEnv = ctx.serverEnv();
  const results = { calls: count };

  const minimal = await startServer(ctx.modules, { command: process.execPath, args: [MINIMAL], label: 'bare SDK server (direct)' });
  try {
    results.floorDirect = await direct(minimal, 'echo', { code: '1+1' }, count);
  } finally {
    await minimal.close();
  }
  const ipython = await startServer(ctx.modules, { env: ipythonEnv, label: 'ipython-mcp (direct)' });
  try {
    results.executeDirect = await direct(ipython, 'execute', { code: '1+1' }, count);
  } finally {
    await ipython.close();
  }

  const directory = mkdtempSync(join(tmpdir(), 'bench-code-mode-servers-'));
  const file = join(directory, 'servers.json');
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        floor: { command: process.execPath, args: [MINIMAL] },
        ipython: { command: process.execPath, args: [CLI], env: ipythonEnv },
      },
      // Both upstreams allowed in the file (a trusted run): the calls pass the consent gate on its "run" path.
      codeMode: { maxToolCalls: 2 * (count + WARMUP_CALLS), timeoutSeconds: null, consent: 'run' },
    }),
  );
  const codeMode = await startServer(ctx.modules, { args: [CLI, 'code-mode', '--servers', file], env: ipythonEnv, label: 'code-mode server' });
  try {
    // The first run_code starts nothing new: upstreams and the kernel start with the server; this waits for them.
    await codeMode.call('run_code', { code: 'execute(code="1+1")' });
    results.floorRunCode = await viaRunCode(codeMode, 'echo(code="1+1")', count);
    results.executeRunCode = await viaRunCode(codeMode, 'execute(code="1+1")', count);
  } finally {
    await codeMode.close();
  }
  return results;
}
