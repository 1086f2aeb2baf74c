// execute("1+1") round trips: our server through a real MCP stdio client, the Runtime alone (no MCP), the
// in-process floor, an ipykernel round trip through jupyter_client, the composed floor, and any peer MCP server
// from --compare.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PY_DIR, ROOT } from '../lib/env.mjs';
import { evaluate, settle, splitCommand, startHttpServer, startServer } from '../lib/mcp.mjs';
import { startPipeEcho } from '../lib/pipe-echo.mjs';
import { cpuPerCall, cpuSnapshot, run, track } from '../lib/procs.mjs';
import { summarize } from '../lib/stats.mjs';

export const CELL = '1+1';

/** Times `count` sequential calls of `fn` after `warmup` unmeasured ones; samples in ms. */
export async function timeLoop(fn, count, warmup, onStart) {
  for (let index = 0; index < warmup; index += 1) await fn(index);
  onStart?.();
  const samples = new Array(count);
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await fn(index);
    samples[index] = performance.now() - started;
  }
  return samples;
}

export function checkExecuteResult(result) {
  const structured = result.structuredContent;
  if (result.isError || !structured || (structured.status ?? 'ok') !== 'ok' || structured.result?.value !== 2) {
    throw new Error(`execute("1+1") did not return 2: ${JSON.stringify(result).slice(0, 300)}`);
  }
}

function snapshot(pids) {
  return Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, cpuSnapshot(pid)]));
}

/**
 * `timeLoop` plus what every process in `pids` spent on CPU per call and the wall time per call, both over the
 * measured calls only (the warm-up is excluded).
 */
async function accountedLoop(fn, pids, ctx) {
  let before;
  let loopStarted;
  const samples = await timeLoop(fn, ctx.n.execute, ctx.n.warmup, () => {
    before = snapshot(pids);
    loopStarted = performance.now();
  });
  const wallPerCallUs = ((performance.now() - loopStarted) * 1000) / ctx.n.execute;
  return { samples, summary: summarize(samples), cpuPerCallUs: cpuPerCall(before, snapshot(pids), ctx.n.execute), wallPerCallUs };
}

/** Our server, warm, N sequential execute calls; plus the exact CPU time each process and thread spent per call. */
export async function measureMcpExecute(ctx) {
  const server = await startServer(ctx.modules, { env: ctx.serverEnv() });
  try {
    const workerPid = await evaluate(server, 'import os as _bench_os\n_bench_os.getpid()');
    track(workerPid, 'execute worker');
    await settle(server);
    const pids = { client: process.pid, server: server.pid, worker: workerPid };
    let last;
    const measured = await accountedLoop(async () => {
      last = await server.call('execute', { code: CELL });
      checkExecuteResult(last);
    }, pids, ctx);
    // What the shaped MCP floor replays: our execute tool's definition and one of its real results.
    const { tools } = await server.client.listTools();
    const tool = tools.find((entry) => entry.name === 'execute');
    return { ...measured, shape: tool && last ? { tool, result: last, resultBytes: Buffer.byteLength(JSON.stringify(last)) } : undefined };
  } finally {
    await server.close();
  }
}

/** The same loop as {@link measureMcpExecute}, over Streamable HTTP (`--http`) instead of stdio. */
export async function measureMcpHttpExecute(ctx) {
  const server = await startHttpServer(ctx.modules, { env: ctx.serverEnv() });
  try {
    const workerPid = await evaluate(server, 'import os as _bench_os\n_bench_os.getpid()');
    track(workerPid, 'http execute worker');
    await settle(server);
    const pids = { client: process.pid, server: server.pid, worker: workerPid };
    return await accountedLoop(async () => checkExecuteResult(await server.call('execute', { code: CELL })), pids, ctx);
  } finally {
    await server.close();
  }
}

/** The same operation through Runtime.run directly (no MCP, no JSON-RPC): what the IPC + worker path costs. */
export async function measureRuntimeExecute(ctx) {
  const { Runtime } = ctx.modules.supervisor;
  const runtime = new Runtime({ python: ctx.python, warmStandby: false });
  try {
    runtime.start();
    const first = await runtime.run('execute', { code: '0' });
    if (!first.ok) throw new Error(`runtime execute failed: ${JSON.stringify(first.error)}`);
    for (const pid of runtime.workerPids()) track(pid, 'runtime worker');
    const pids = { 'client (Runtime)': process.pid, worker: runtime.workerPids()[0] };
    return await accountedLoop(
      async () => {
        const outcome = await runtime.run('execute', { code: CELL });
        if (!outcome.ok || outcome.result.result?.value !== 2) throw new Error(`runtime execute failed: ${JSON.stringify(outcome).slice(0, 300)}`);
      },
      pids,
      ctx,
    );
  } finally {
    await runtime.close();
  }
}

/** InteractiveShell.run_cell in process, on the worker's interpreter. */
export async function measureFloor(ctx, count = ctx.n.execute) {
  const { stdout } = await run(ctx.python, [join(PY_DIR, 'floor.py'), String(count), String(ctx.n.warmup), CELL], { label: 'floor.py' });
  const data = JSON.parse(stdout.trim().split('\n').pop());
  return { samples: data.samples_ms, summary: summarize(data.samples_ms), ipython: data.ipython, python: data.python };
}

/** ipykernel through jupyter_client (bench venv): the execute round trip and the stdin-channel tool calls. */
export async function measureKernel(ctx) {
  if (!ctx.benchPython) throw new Error(`no bench venv (ipykernel, jupyter_client): ${ctx.venvError ?? 'not created'}`);
  const { stdout } = await run(
    ctx.benchPython,
    [join(PY_DIR, 'kernel_bench.py'), String(ctx.n.kernel), String(ctx.n.stdinCalls ?? 0), CELL],
    {
      label: 'kernel_bench.py',
      timeoutMs: 300_000,
      onStdoutLine: (line) => {
        const match = /^pid (\d+)$/.exec(line);
        if (match) track(Number(match[1]), 'ipykernel');
      },
    },
  );
  const data = JSON.parse(stdout.trim().split('\n').pop());
  return {
    roundtrip: data.roundtrip_ms.length > 0 ? { samples: data.roundtrip_ms, summary: summarize(data.roundtrip_ms) } : null,
    stdin: data.stdin,
    versions: data.versions,
  };
}

/** Fills string values of the template: "{code}" becomes the cell. */
function fillTemplate(template, code) {
  if (typeof template === 'string') return template.replaceAll('{code}', code);
  if (Array.isArray(template)) return template.map((item) => fillTemplate(item, code));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, fillTemplate(value, code)]));
  return template;
}

/** A peer stdio MCP server, measured with the same client and loop. */
export async function measurePeer(ctx, peer) {
  const words = splitCommand(peer.command);
  const server = await startServer(ctx.modules, { command: words[0], args: words.slice(1), label: `peer: ${peer.command}` });
  try {
    const tools = await server.client.listTools();
    if (!tools.tools.some((tool) => tool.name === peer.tool)) {
      throw new Error(`peer has no tool ${peer.tool} (it has: ${tools.tools.map((tool) => tool.name).join(', ')})`);
    }
    const args = fillTemplate(peer.argTemplate, CELL);
    const first = await server.call(peer.tool, args);
    if (tools.tools.some((tool) => tool.name === 'runtime_status')) await settle(server);
    const samples = await timeLoop(async () => server.call(peer.tool, args), ctx.n.execute, ctx.n.warmup);
    return { command: peer.command, tool: peer.tool, args, firstResult: JSON.stringify(first.content ?? first).slice(0, 200), samples, summary: summarize(samples) };
  } finally {
    await server.close();
  }
}

/**
 * The transport floor: one Node → Python → Node round trip of a 64-byte frame over plain pipes (python/pipe_echo.py),
 * no protocol at all. The MCP execute path makes two such round trips (client↔server, server↔worker).
 */
export async function measurePipeFloor(ctx) {
  const echo = startPipeEcho(ctx.python, 'pipe_echo.py');
  try {
    const samples = await timeLoop(echo.once, ctx.n.execute, ctx.n.warmup);
    return { samples, summary: summarize(samples) };
  } finally {
    echo.close();
  }
}

export const MINIMAL_SERVER = join(ROOT, 'tooling/bench/lib/minimal-server.mjs');
export const COMPOSED_SERVER = join(ROOT, 'tooling/bench/lib/composed-server.mjs');

/** Writes a recorded execute shape ({tool, result}) as the file BENCH_SHAPED_RESULT names; returns its path. */
export function writeShapeFile(directory, shape) {
  const file = join(directory, 'shape.json');
  writeFileSync(file, JSON.stringify({ tool: shape.tool, result: shape.result }));
  return file;
}

/** Runs fn(file) with the recorded shape in a temporary file; needs the executeMcp step's recorded shape. */
async function withShapeFile(shape, fn) {
  if (!shape) throw new Error('no recorded execute result to replay (the executeMcp step failed)');
  const directory = mkdtempSync(join(tmpdir(), 'bench-shaped-'));
  try {
    return await fn(writeShapeFile(directory, shape));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * Starts the composed floor (lib/composed-server.mjs: bare SDK server → pipe → run_cell child) answering in the
 * shape of `shapeFile`; `call()` is one checked execute("1+1"). The first call is made here, so the child is up.
 */
export async function startComposed(ctx, shapeFile, label) {
  const server = await startServer(ctx.modules, { args: [COMPOSED_SERVER], env: { BENCH_SHAPED_RESULT: shapeFile, BENCH_PYTHON: ctx.python }, label });
  const call = async () => checkExecuteResult(await server.call('execute', { code: CELL }));
  try {
    // As for ours: the client knows the tool's output schema, and checks every result against it.
    await server.client.listTools();
    await call();
  } catch (error) {
    await server.close();
    throw error;
  }
  const [childPid] = server.children();
  track(childPid, `${label}: run_cell child`);
  return { server, call, childPid };
}

/**
 * The MCP floor for our result: the bare SDK server answering with a recorded result of our execute (same tool
 * definition, same bytes), so the SDK's per-result cost (JSON, framing, zod parse in the client) is in the floor and
 * what remains above it is ours. Needs the executeMcp step's recorded shape.
 */
export async function measureMcpShapedFloor(ctx, shape) {
  return withShapeFile(shape, async (file) => {
    const server = await startServer(ctx.modules, { args: [MINIMAL_SERVER], env: { BENCH_SHAPED_RESULT: file }, label: 'minimal SDK server (shaped)' });
    try {
      const pids = { client: process.pid, server: server.pid };
      const measured = await accountedLoop(async () => checkExecuteResult(await server.call(shape.tool.name, { code: CELL })), pids, ctx);
      return { ...measured, resultBytes: shape.resultBytes };
    } finally {
      await server.close();
    }
  });
}

/**
 * The composed floor: our three-process composition (client → SDK server → pipe → run_cell child) with none of our
 * code, answering in our result's shape; wall time per call and CPU per call of each of the three processes.
 */
export async function measureComposedFloor(ctx, shape) {
  return withShapeFile(shape, async (file) => {
    const { server, call, childPid } = await startComposed(ctx, file, 'composed floor');
    try {
      return await accountedLoop(call, { client: process.pid, server: server.pid, child: childPid }, ctx);
    } finally {
      await server.close();
    }
  });
}

/** The MCP floor: tools/call of a no-op tool on a bare SDK stdio server (lib/minimal-server.mjs), same client. */
export async function measureMcpFloor(ctx) {
  const server = await startServer(ctx.modules, { args: [MINIMAL_SERVER], label: 'minimal SDK server' });
  try {
    const pids = { client: process.pid, server: server.pid };
    return await accountedLoop(async () => server.call('echo', { code: CELL }), pids, ctx);
  } finally {
    await server.close();
  }
}
