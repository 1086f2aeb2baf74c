// Interleaved ratio rounds: the issue-18 goal ratios, with numerator and denominator measured close together in
// time. On a shared 2-vCPU guest the floors drift by 2× between loops run seconds apart (the pipe round trip
// 23–738 µs), so a ratio of medians from loops run one after another says little. Here every process the loops
// need is started once and kept warm; then R rounds each run a short block of every loop, in an order rotated per
// round, and every ratio is computed per round from that round's block medians. The report gives the median of the
// per-round ratios and their spread (min–max, p25–p75).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PY_DIR } from '../lib/env.mjs';
import { minimalToolCalls, startFrameChild, startPipeCall, startPipeEcho } from '../lib/pipe-echo.mjs';
import { evaluate, settle, startHttpServer, startServer } from '../lib/mcp.mjs';
import { addCpu, perCallByLabel, withTreeCpu } from '../lib/noise.mjs';
import { track, untrack } from '../lib/procs.mjs';
import { quantile, spread, summarize } from '../lib/stats.mjs';
import { detectEngine } from './code-mode.mjs';
import { CELL, COMPOSED_SERVER, MINIMAL_SERVER, checkExecuteResult, startComposed, timeLoop, writeShapeFile } from './execute.mjs';

/** Untimed calls at the start of every block: the first call after another loop ran pays for cold caches. */
const BLOCK_WARMUP = 2;

/** Per-round ratios: [key, numerator keys, denominator keys]; a ratio whose parts did not all run is left out. */
export const ROUND_RATIOS = [
  ['executeOverFloors', ['executeMcp'], ['floor', 'mcpFloor']],
  ['executeOverRuntimeShaped', ['executeMcp'], ['executeRuntime', 'mcpShapedFloor']],
  ['executeOverArchitecture', ['executeMcp'], ['floor', 'pipeFloor', 'mcpShapedFloor']],
  ['executeOverComposed', ['executeMcp'], ['composedFloor']],
  ['runtimeOverFloorPipe', ['executeRuntime'], ['floor', 'pipeFloor']],
  ['runtimeOverComposed', ['executeRuntime'], ['composedRuntimeFloor']],
  ['nestedOverPipe', ['nested'], ['pipeFloor']],
  ['nestedOverPipeCall', ['nested'], ['pipeCallFloor']],
  ['nestedOverMinimalCall', ['nested'], ['minimalCallFloor']],
  ['engineOverBridge', ['nestedEngine'], ['nestedBridge']],
  ['httpOverStdio', ['executeMcpHttp'], ['executeMcp']],
  ['httpFloorOverStdioFloor', ['httpShapedFloor'], ['mcpShapedFloor']],
  ['httpOverComposedHttp', ['executeMcpHttp'], ['httpComposedFloor']],
];

/** Times `count` sequential calls of `fn` after `warmup` untimed ones; samples in ms. */
const block = (fn, count, warmup = BLOCK_WARMUP) => timeLoop(fn, count, warmup);

/** A child that answers one stdout line per stdin line (floor.py --serve). */
function lineChild(command, args, label) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  track(child.pid, label);
  let buffer = '';
  let stderr = '';
  const waiting = [];
  const lines = [];
  let exited = null;
  const fail = (error) => {
    for (const entry of waiting.splice(0)) entry.reject(error);
  };
  child.stdout.on('data', (chunk) => {
    buffer += chunk.toString('utf8');
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      const entry = waiting.shift();
      if (entry) entry.resolve(line);
      else lines.push(line);
    }
  });
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  child.on('exit', (code, signal) => {
    exited = new Error(`${label} exited (${signal ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-5).join('\n')}`);
    fail(exited);
  });
  const next = () =>
    lines.length > 0
      ? Promise.resolve(lines.shift())
      : exited
        ? Promise.reject(exited)
        : new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  return {
    pid: child.pid,
    next,
    async ask(text) {
      child.stdin.write(`${text}\n`);
      return next();
    },
    async close() {
      child.stdin.end();
      await new Promise((resolve) => {
        if (exited) return resolve();
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, 5_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      untrack(child.pid);
    },
  };
}

/** InteractiveShell.run_cell in one persistent process (python/floor.py --serve); samples timed in Python. */
async function startFloor(ctx) {
  const child = lineChild(ctx.python, [join(PY_DIR, 'floor.py'), '--serve', String(ctx.n.warmup), CELL], 'floor.py --serve');
  const ready = JSON.parse(await child.next());
  return {
    key: 'floor',
    facts: { ipython: ready.ipython, python: ready.python },
    run: async (count) => JSON.parse(await child.ask(`${count} ${BLOCK_WARMUP}`)).samples_ms,
    close: () => child.close(),
  };
}

/** The 64-byte Node → Python → Node ping-pong over plain pipes (python/pipe_echo.py). */
async function startPipe(ctx) {
  const echo = startPipeEcho(ctx.python, 'pipe_echo.py (rounds)');
  const once = echo.once;
  await block(once, 0, ctx.n.warmup);
  return {
    key: 'pipeFloor',
    run: (count) => block(once, count),
    close: async () => echo.close(),
  };
}

/**
 * A floor in the nested call's direction, timed per call in Python (python/pipe_call.py): the round trip alone, or
 * with `calls` the least a nested tool call can be over the same pipe.
 */
async function startPythonDrivenFloor(ctx, key, calls = null) {
  const floor = startPipeCall(ctx.python, `pipe_call.py${calls ? ' --calls' : ''} (rounds)`, { calls });
  await floor.run(0, ctx.n.warmup);
  return { key, warmup: NESTED_WARMUP, run: (count) => floor.run(count, NESTED_WARMUP), close: async () => floor.close() };
}

/** A tools/call loop against a started stdio MCP server. */
function mcpLoop(key, server, call) {
  return { key, pid: server.pid, run: (count) => block(call, count), close: () => server.close() };
}

async function startOurs(ctx) {
  const server = await startServer(ctx.modules, { env: ctx.serverEnv(), label: 'ipython-mcp server (rounds)' });
  try {
    const workerPid = await evaluate(server, 'import os as _bench_os\n_bench_os.getpid()');
    track(workerPid, 'rounds worker');
    await settle(server);
    let last;
    const call = async () => {
      last = await server.call('execute', { code: CELL });
      checkExecuteResult(last);
    };
    await block(call, 0, ctx.n.warmup);
    const { tools } = await server.client.listTools();
    const tool = tools.find((entry) => entry.name === 'execute');
    return { ...mcpLoop('executeMcp', server, call), shape: { tool, result: last } };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** Ours over Streamable HTTP (`--http`), the SDK's HTTP client. */
async function startOursHttp(ctx) {
  const server = await startHttpServer(ctx.modules, { env: ctx.serverEnv(), label: 'ipython-mcp http server (rounds)' });
  try {
    const workerPid = await evaluate(server, 'import os as _bench_os\n_bench_os.getpid()');
    track(workerPid, 'rounds http worker');
    await settle(server);
    const call = async () => checkExecuteResult(await server.call('execute', { code: CELL }));
    await block(call, 0, ctx.n.warmup);
    return mcpLoop('executeMcpHttp', server, call);
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** The shaped floor over HTTP: the SDK's own HTTP server (JSON answers) with our recorded result, nothing of ours. */
async function startShapedSdkHttp(ctx, shape, file) {
  const server = await startHttpServer(ctx.modules, { args: [MINIMAL_SERVER], env: { BENCH_HTTP: '1', BENCH_SHAPED_RESULT: file }, label: 'minimal SDK HTTP server, shaped (rounds)' });
  const call = async () => checkExecuteResult(await server.call(shape.tool.name, { code: CELL }));
  await block(call, 0, ctx.n.warmup);
  return mcpLoop('httpShapedFloor', server, call);
}

async function startBareSdk(ctx) {
  const server = await startServer(ctx.modules, { args: [MINIMAL_SERVER], label: 'minimal SDK server (rounds)' });
  const call = () => server.call('echo', { code: CELL });
  await block(call, 0, ctx.n.warmup);
  return mcpLoop('mcpFloor', server, call);
}

async function startShapedSdk(ctx, shape, file) {
  const server = await startServer(ctx.modules, { args: [MINIMAL_SERVER], env: { BENCH_SHAPED_RESULT: file }, label: 'minimal SDK server, shaped (rounds)' });
  const call = async () => checkExecuteResult(await server.call(shape.tool.name, { code: CELL }));
  await block(call, 0, ctx.n.warmup);
  return mcpLoop('mcpShapedFloor', server, call);
}

/** The composed floor (bare SDK server → pipe → run_cell child), answering in our recorded result's shape. */
async function startComposedFloor(ctx, file) {
  const { server, call } = await startComposed(ctx, file, 'composed floor (rounds)');
  await block(call, 0, ctx.n.warmup);
  return mcpLoop('composedFloor', server, call);
}

/**
 * The composed floor over HTTP: the same bare SDK server → pipe → run_cell child, served by the SDK's own Streamable
 * HTTP transport (JSON answers) and called by the same SDK HTTP client as ours: the SDK's HTTP floor for our call.
 */
async function startComposedHttpFloor(ctx, file) {
  const server = await startHttpServer(ctx.modules, {
    args: [COMPOSED_SERVER],
    env: { BENCH_HTTP: '1', BENCH_SHAPED_RESULT: file, BENCH_PYTHON: ctx.python },
    label: 'composed floor over SDK HTTP (rounds)',
  });
  try {
    const call = async () => checkExecuteResult(await server.call('execute', { code: CELL }));
    await server.client.listTools();
    await block(call, 0, ctx.n.warmup);
    for (const pid of server.children()) track(pid, 'composed HTTP floor: run_cell child');
    return mcpLoop('httpComposedFloor', server, call);
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** Runtime.run's composed floor: this process writes one frame to a bare run_cell child and awaits its reply. */
async function startComposedRuntimeFloor(ctx) {
  const child = startFrameChild(ctx.python, 'floor.py', ['--frames'], 'composed Runtime floor child (rounds)');
  const body = Buffer.from(JSON.stringify({ code: CELL }));
  const call = async () => {
    if (JSON.parse((await child.request(body)).toString('utf8')).value !== 2) throw new Error('composed Runtime floor: wrong value');
  };
  await block(call, 0, ctx.n.warmup);
  return { key: 'composedRuntimeFloor', run: (count) => block(call, count), close: async () => child.close() };
}

async function startRuntime(ctx) {
  const { Runtime } = ctx.modules.supervisor;
  const runtime = new Runtime({ python: ctx.python, warmStandby: false });
  runtime.start();
  const call = async () => {
    const outcome = await runtime.run('execute', { code: CELL });
    if (!outcome.ok || outcome.result.result?.value !== 2) throw new Error(`runtime execute failed: ${JSON.stringify(outcome).slice(0, 300)}`);
  };
  try {
    const first = await runtime.run('execute', { code: '0' });
    if (!first.ok) throw new Error(`runtime execute failed: ${JSON.stringify(first.error)}`);
    for (const pid of runtime.workerPids()) track(pid, 'rounds runtime worker');
    await block(call, 0, ctx.n.warmup);
  } catch (error) {
    await runtime.close();
    throw error;
  }
  return { key: 'executeRuntime', run: (count) => block(call, count), close: () => runtime.close() };
}

/**
 * One nested-call block: a cell that makes `warmup` untimed echo calls, then `count` calls each timed in the kernel
 * (perf_counter around the call), and returns the samples in ms.
 */
function nestedCode(count, warmup) {
  return [
    'import time as _bench_time',
    `for _bench_i in range(${warmup}):`,
    '    echo(x=_bench_i)',
    '_bench_samples = []',
    `for _bench_i in range(${count}):`,
    '    _bench_t = _bench_time.perf_counter()',
    '    _bench_r = echo(x=_bench_i)',
    '    _bench_samples.append((_bench_time.perf_counter() - _bench_t) * 1000)',
    '    assert _bench_r["x"] == _bench_i',
    '_bench_samples',
  ].join('\n');
}

const NESTED_WARMUP = 20;

/** The Code Mode engine's public API (CodeMode.runCode), one kernel kept for every round. */
async function startEngine(ctx, engineDist) {
  const engine = await import(pathToFileURL(engineDist).href);
  if (typeof engine.CodeMode !== 'function') return null;
  const tool = {
    name: 'echo',
    description: 'Echo the arguments.',
    inputSchema: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
    execute: async (input) => input,
  };
  const codeMode = new engine.CodeMode({ tools: [tool], maxToolCalls: 1_000_000, timeout: null, kernelOptions: { python: ctx.python } });
  const run = async (count, warmup = NESTED_WARMUP) => {
    const result = await codeMode.runCode({ code: nestedCode(count, warmup) });
    if (result.return?.kind !== 'value' || !Array.isArray(result.return.value)) throw new Error(`CodeMode run returned ${JSON.stringify(result.return).slice(0, 200)}`);
    return result.return.value;
  };
  try {
    const pidRun = await codeMode.runCode({ code: 'import os as _bench_os\n_bench_os.getpid()' });
    track(pidRun.return.value, 'rounds code-mode engine kernel');
    await run(0, 300);
  } catch (error) {
    await codeMode.close();
    throw error;
  }
  return { key: 'nestedEngine', warmup: NESTED_WARMUP, run, close: () => codeMode.close() };
}

/** Runtime.run("run_code") with the worker bridge (define_tools → echo), answered by a bare onToolCall. */
async function startBridge(ctx) {
  const { Runtime } = ctx.modules.supervisor;
  const runtime = new Runtime({ python: ctx.python, warmStandby: false });
  runtime.start();
  const onToolCall = async (call) => (call.name === 'echo' ? { ok: true, valueJson: JSON.stringify(call.arguments) } : { ok: false, message: `unknown tool ${call.name}` });
  const run = async (count, warmup = NESTED_WARMUP) => {
    const outcome = await runtime.run('run_code', { code: nestedCode(count, warmup), max_tool_calls: count + warmup }, { onToolCall, timeoutMs: 600_000 });
    if (!outcome.ok || outcome.result.status !== 'ok' || !Array.isArray(outcome.result.result?.value)) {
      throw new Error(`bridge loop failed: ${JSON.stringify(outcome.ok ? outcome.result.error ?? outcome.result : outcome.error).slice(0, 400)}`);
    }
    return outcome.result.result.value;
  };
  try {
    const first = await runtime.run('execute', { code: '0' });
    if (!first.ok) throw new Error(`worker failed to start: ${JSON.stringify(first.error)}`);
    for (const pid of runtime.workerPids()) track(pid, 'rounds code-mode worker');
    const defined = await runtime.run('define_tools', {
      tools: [{ python_name: 'echo', tool_name: 'echo', doc: 'Echo the arguments.', parameters: [{ name: 'x', key: 'x', annotation: 'int', required: true }] }],
    });
    if (!defined.ok) throw new Error(`define_tools failed: ${JSON.stringify(defined.error)}`);
    await run(0, 300);
  } catch (error) {
    await runtime.close();
    throw error;
  }
  return { key: 'nestedBridge', warmup: NESTED_WARMUP, run, close: () => runtime.close() };
}


/**
 * Starts every participant once, warms it, runs `ctx.n.rounds` rounds of short blocks and returns per-round medians,
 * per-round ratios (with their median and spread) and the pooled samples of each loop.
 */
export async function measureRounds(ctx, { withCodeMode = true, withExecute = true } = {}) {
  const rounds = ctx.n.rounds;
  const executeBlock = Math.max(5, Math.round(ctx.n.execute / rounds));
  const nestedBlock = Math.max(20, Math.round(ctx.n.toolCalls / rounds));
  const directory = mkdtempSync(join(tmpdir(), 'bench-rounds-'));
  const participants = [];
  try {
    const engine = detectEngine();
    const starts = [() => startPipe(ctx)];
    if (withCodeMode) starts.push(() => startPythonDrivenFloor(ctx, 'pipeCallFloor'), async () => startPythonDrivenFloor(ctx, 'minimalCallFloor', await minimalToolCalls()));
    if (withExecute) starts.push(() => startOurs(ctx), () => startOursHttp(ctx), () => startRuntime(ctx), () => startComposedRuntimeFloor(ctx), () => startFloor(ctx), () => startBareSdk(ctx));
    if (withCodeMode) {
      if (engine.engineDist) starts.push(() => startEngine(ctx, engine.engineDist));
      if (engine.hasBridge) starts.push(() => startBridge(ctx));
    }
    // One after another: parallel start-ups on 2 cores would only slow each other down and change nothing measured.
    let failure = null;
    for (const start of starts) {
      if (failure) break;
      try {
        const participant = await start();
        if (participant) participants.push(participant);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure) throw failure;
    const ours = participants.find((item) => item.key === 'executeMcp');
    if (ours) {
      const file = writeShapeFile(directory, ours.shape);
      participants.push(await startShapedSdk(ctx, ours.shape, file));
      participants.push(await startComposedFloor(ctx, file));
      participants.push(await startShapedSdkHttp(ctx, ours.shape, file));
      if (participants.some((item) => item.key === 'executeMcpHttp')) participants.push(await startComposedHttpFloor(ctx, file));
    }

    const nestedSized = ['pipeFloor', 'pipeCallFloor', 'minimalCallFloor'];
    const blockSize = (key) => (nestedSized.includes(key) || key.startsWith('nested') ? nestedBlock : executeBlock);
    // Units are what the rotation moves: one block each, except that the pipe round trip runs in two halves right
    // before and after the nested-call blocks, the figure whose goal is stated against it (the pipe's median flips
    // between ~20 and ~100 µs within seconds, with where the scheduler puts the two ends); the Python-driven round
    // trip likewise, inside those.
    const byKey = Object.fromEntries(participants.map((item) => [item.key, item]));
    const nestedKeys = ['nestedEngine', 'nestedBridge'].filter((key) => byKey[key]);
    const units = [];
    if (byKey.pipeFloor && nestedKeys.length > 0) {
      const half = Math.max(10, Math.round(nestedBlock / 2));
      const call = ['pipeCallFloor', 'minimalCallFloor'].filter((key) => byKey[key]).map((key) => [byKey[key], half]);
      units.push([[byKey.pipeFloor, half], ...call, ...nestedKeys.map((key) => [byKey[key], nestedBlock]), ...call, [byKey.pipeFloor, half]]);
    }
    // Ours and the composed floor, the same composition, always run back to back, which one first alternating; so do
    // Runtime.run and its composed floor.
    const pairs = [['executeMcp', 'composedFloor'], ['executeMcpHttp', 'httpComposedFloor'], ['executeRuntime', 'composedRuntimeFloor']]
      .filter(([a, b]) => byKey[a] && byKey[b])
      .map(([a, b]) => [[byKey[a], executeBlock], [byKey[b], executeBlock]]);
    units.push(...pairs);
    for (const item of participants) {
      if (units.some((unit) => unit.some(([member]) => member === item))) continue;
      units.push([[item, blockSize(item.key)]]);
    }
    const pooled = Object.fromEntries(participants.map((item) => [item.key, []]));
    const pooledCpu = {};
    const perRound = [];
    for (let round = 0; round < rounds; round += 1) {
      // The same fixed CPU work each round: how much of a CPU the bench got (lib/noise.mjs).
      ctx.calibrate?.();
      const order = units
        .map((_, offset) => units[(round + offset) % units.length])
        .map((unit) => (pairs.includes(unit) && round % 2 === 1 ? [...unit].reverse() : unit))
        .flat();
      const taken = Object.fromEntries(participants.map((item) => [item.key, []]));
      const cpu = {};
      const started = performance.now();
      for (const [participant, count] of order) {
        // CPU time of every process of ours over the block (the others wait idle meanwhile).
        const measured = await withTreeCpu(() => participant.run(count));
        const samples = measured.value;
        addCpu((cpu[participant.key] ??= { calls: 0, ns: 0, byLabel: {} }), measured, count + (participant.warmup ?? BLOCK_WARMUP));
        taken[participant.key].push(...samples);
        pooled[participant.key].push(...samples);
      }
      const cpuUs = Object.fromEntries(Object.entries(cpu).map(([key, entry]) => [key, entry.ns / 1000 / entry.calls]));
      cpuUs.nested = cpuUs.nestedEngine ?? cpuUs.nestedBridge;
      for (const [key, entry] of Object.entries(cpu)) addCpu((pooledCpu[key] ??= { calls: 0, ns: 0, byLabel: {} }), { totalNs: entry.ns, byLabel: entry.byLabel }, entry.calls);
      const medians = Object.fromEntries(Object.entries(taken).map(([key, samples]) => [key, quantile(samples, 0.5)]));
      medians.nested = medians.nestedEngine ?? medians.nestedBridge;
      const ratios = {};
      const cpuRatios = {};
      for (const [key, over, under] of ROUND_RATIOS) {
        const parts = [...over, ...under];
        const sum = (figures, names) => names.reduce((total, part) => total + figures[part], 0);
        if (parts.every((part) => typeof medians[part] === 'number')) ratios[key] = sum(medians, over) / sum(medians, under);
        if (parts.every((part) => typeof cpuUs[part] === 'number')) cpuRatios[key] = sum(cpuUs, over) / sum(cpuUs, under);
      }
      perRound.push({ order: order.map(([item]) => item.key), ms: Number((performance.now() - started).toFixed(1)), medians, ratios, cpuUs, cpuRatios });
    }
    if (pooled.nestedEngine ?? pooled.nestedBridge) pooled.nested = pooled.nestedEngine ?? pooled.nestedBridge;
    const ratioKeys = ROUND_RATIOS.map(([key]) => key).filter((key) => perRound.every((entry) => key in entry.ratios));
    const floor = participants.find((item) => item.key === 'floor');
    return {
      method:
        `${rounds} rounds; per round one block of every loop in an order rotated per round (${executeBlock} calls per execute-type block, ` +
        `${nestedBlock} per nested-call block timed per call in the kernel after ${NESTED_WARMUP} untimed, the pipe (both directions) in two halves around the ` +
        `nested-call blocks, ours and the composed floor, and Runtime.run and its composed floor, back to back in alternating order, ${BLOCK_WARMUP} untimed calls first in every ` +
        `other block); each ratio per round from that round's medians`,
      rounds,
      blockCalls: Object.fromEntries(participants.map((item) => [item.key, blockSize(item.key)])),
      units: units.map((unit) => unit.map(([item, count]) => `${item.key}×${count}`).join(' > ')),
      nestedPath: participants.some((item) => item.key === 'nestedEngine') ? 'engine' : participants.some((item) => item.key === 'nestedBridge') ? 'bridge' : null,
      ratios: Object.fromEntries(
        ratioKeys.map((key) => {
          const [, over, under] = ROUND_RATIOS.find(([name]) => name === key);
          return [key, { ...spread(perRound.map((entry) => entry.ratios[key])), over, under }];
        }),
      ),
      cpuRatios: Object.fromEntries(
        ratioKeys.filter((key) => perRound.every((entry) => key in entry.cpuRatios)).map((key) => [key, spread(perRound.map((entry) => entry.cpuRatios[key]))]),
      ),
      // CPU µs per call of each process over every block of a loop (warm-up calls of a block counted as calls).
      cpuPerCallUs: Object.fromEntries(Object.entries(pooledCpu).map(([key, account]) => [key, perCallByLabel(account)])),
      perRound,
      pooled: Object.fromEntries(Object.entries(pooled).map(([key, samples]) => [key, summarize(samples)])),
      floorFacts: floor?.facts ?? null,
    };
  } finally {
    for (const participant of participants.reverse()) await participant.close().catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
  }
}
