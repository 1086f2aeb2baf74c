// Code Mode nested tool call: Python code calls a tool function, the call crosses to a TypeScript tool and the
// result comes back into Python. Timed inside the kernel around a loop of calls to a trivial echo tool.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/env.mjs';
import { cpuPerCall, cpuSnapshot, track } from '../lib/procs.mjs';
import { measureKernel } from './execute.mjs';

const WARMUP_CALLS = 300; // untimed calls in the same cell first: JIT and caches warm on both sides

function loopCode(count, call) {
  return [
    'import time as _bench_time',
    `for _bench_i in range(${WARMUP_CALLS}):`,
    `    ${call('_bench_i')}`,
    '_bench_started = _bench_time.perf_counter()',
    `for _bench_i in range(${count}):`,
    `    assert ${call('_bench_i')}["x"] == _bench_i`,
    '_bench_elapsed = _bench_time.perf_counter() - _bench_started',
    '_bench_elapsed',
  ].join('\n');
}

/** Which Code Mode path exists in this checkout right now. */
export function detectEngine() {
  // The worker copy the Runtime actually runs (copied at build time).
  const bridge = join(ROOT, 'packages/worker-supervisor/dist/python/ipython_mcp_worker/code_mode/bridge.py');
  const hasBridge = existsSync(bridge) && /def run_code/.test(readFileSync(bridge, 'utf8')) && /def define_tools/.test(readFileSync(bridge, 'utf8'));
  const engineDist = join(ROOT, 'packages/code-mode/dist/index.js');
  return { hasBridge, engineDist: existsSync(engineDist) ? engineDist : null };
}

/**
 * The Code Mode engine's public API (`CodeMode` from @ipython-mcp/code-mode): one run_code call whose loop calls the
 * trivial `echo` tool; the engine validates each call's input against the tool's JSON Schema, runs `execute` and
 * records the call, as it does for an agent.
 */
async function measureEngine(ctx, engineDist) {
  const engine = await import(pathToFileURL(engineDist).href);
  if (typeof engine.CodeMode !== 'function') return null;
  const count = ctx.n.toolCalls;
  let served = 0;
  const tool = {
    name: 'echo',
    description: 'Echo the arguments.',
    inputSchema: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
    execute: async (input) => {
      served += 1;
      return input;
    },
  };
  const codeMode = new engine.CodeMode({ tools: [tool], maxToolCalls: count + WARMUP_CALLS, timeout: null, kernelOptions: { python: ctx.python } });
  try {
    const pidRun = await codeMode.runCode({ code: 'import os as _bench_os\n_bench_os.getpid()' });
    const workerPid = pidRun.return.value;
    track(workerPid, 'code-mode engine kernel');
    const pids = { 'client (CodeMode)': process.pid, worker: workerPid };
    const snapshot = () => Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, cpuSnapshot(pid)]));
    served = 0;
    const before = snapshot();
    const started = performance.now();
    const result = await codeMode.runCode({ code: loopCode(count, (arg) => `echo(x=${arg})`) });
    const wallS = (performance.now() - started) / 1000;
    const cpuPerCallUs = cpuPerCall(before, snapshot(), count + WARMUP_CALLS);
    const elapsedS = result.return.kind === 'value' ? Number(result.return.value) : NaN;
    if (!Number.isFinite(elapsedS)) throw new Error(`CodeMode run returned ${JSON.stringify(result.return).slice(0, 200)}`);
    return {
      mechanism: 'CodeMode.runCode (packages/code-mode public API): echo(*, x: int) defined from a JSON Schema tool; each call validated and recorded by the engine',
      calls: count,
      served,
      recorded: result.metadata.toolCalls.length,
      loopS: elapsedS,
      perCallMs: (elapsedS * 1000) / count,
      callsPerSecond: count / elapsedS,
      wallS,
      cpuPerCallUs,
    };
  } finally {
    await codeMode.close();
  }
}

/**
 * Measures the nested call through the Runtime with the worker's own Code Mode ops: `define_tools` binds
 * `echo(*, x: int)` in the kernel; `run_code` runs the loop; every call is a tool_call frame answered by
 * RunOptions.onToolCall in TypeScript (the trivial tool echoes its arguments).
 */
export async function measureCodeMode(ctx) {
  const engine = detectEngine();
  // ABBA order (bridge, engine, engine, bridge): both paths see the same drift in machine load; each figure is the
  // mean of its two rounds.
  const rounds = { bridge: [], engine: [] };
  let engineError = null;
  const engineRound = async () => {
    if (!engine.engineDist || engineError) return;
    try {
      const result = await measureEngine(ctx, engine.engineDist);
      if (result) rounds.engine.push(result);
    } catch (error) {
      engineError = String(error?.message ?? error).slice(0, 500);
    }
  };
  // The alternative, the Jupyter stdin channel (ipykernel + jupyter_client, bench venv), runs in the middle.
  let stdin = null;
  let stdinError = null;
  rounds.bridge.push(await measureBridge(ctx, engine));
  await engineRound();
  try {
    stdin = (await measureKernel({ ...ctx, n: { ...ctx.n, kernel: 0 } })).stdin;
  } catch (error) {
    stdinError = String(error?.message ?? error).slice(0, 500);
  }
  await engineRound();
  rounds.bridge.push(await measureBridge(ctx, engine));
  const bridge = combine(rounds.bridge);
  const viaEngine = rounds.engine.length > 0 ? combine(rounds.engine) : null;
  let consent = null;
  let consentError = null;
  if (engine.engineDist) {
    try {
      consent = await measureConsentGate(ctx, engine.engineDist);
    } catch (error) {
      consentError = String(error?.message ?? error).slice(0, 500);
    }
  }
  return { ...(viaEngine ?? bridge), engine: viaEngine, bridge, engineError, consent, consentError, stdin, stdinError };
}

/**
 * The consent gate's cost on the path it takes most: a nested call whose policy allows the tool (`ipython-mcp
 * code-mode`'s read-only tools, or tools the servers file allows). Two CodeModes on one kernel, the same tool, one
 * with a gate whose policy is "run"; short loops alternate between them (none first, then the gate first), and the
 * ratio is the median of the per-pair ratios, so load drift touches both sides of each pair alike.
 */
async function measureConsentGate(ctx, engineDist) {
  const engine = await import(pathToFileURL(engineDist).href);
  if (typeof engine.ConsentGate !== 'function') return null;
  // Loops long enough (a second or so each) that one scheduler hiccup on a loaded machine is a small part of one.
  const count = Math.max(1000, Math.round(ctx.n.toolCalls / 2));
  const rounds = Math.max(4, ctx.n.rounds ?? 7);
  const tool = {
    name: 'echo',
    inputSchema: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
    execute: (input) => input,
  };
  const kernel = new engine.IPythonKernel({ python: ctx.python, warmStandby: false });
  const gate = new engine.ConsentGate({ policyOf: () => ({ policy: 'run', source: 'servers file', reason: 'bench' }), howToAllow: () => '' });
  const limits = { maxToolCalls: count + WARMUP_CALLS, timeout: null };
  const modes = { none: new engine.CodeMode({ tools: [tool], kernel, ...limits }), gate: new engine.CodeMode({ tools: [tool], kernel, ...limits, consent: gate }) };
  const samples = { none: [], gate: [] };
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const name of round % 2 === 0 ? ['none', 'gate'] : ['gate', 'none']) {
        const cpu = process.cpuUsage();
        const result = await modes[name].runCode({ code: loopCode(count, (arg) => `echo(x=${arg})`) });
        const used = process.cpuUsage(cpu);
        const elapsedS = Number(result.return.value);
        if (!Number.isFinite(elapsedS)) throw new Error(`CodeMode run returned ${JSON.stringify(result.return).slice(0, 200)}`);
        samples[name].push({ perCallMs: (elapsedS * 1000) / count, clientCpuUs: (used.user + used.system) / (count + WARMUP_CALLS) });
      }
    }
  } finally {
    await kernel.shutdown();
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const paired = (pick) => median(samples.gate.map((item, index) => pick(item) / pick(samples.none[index])));
  const ratios = samples.gate.map((item, index) => item.perCallMs / samples.none[index].perCallMs).sort((a, b) => a - b);
  return {
    // The middle half of the per-pair ratios: the verdict says "noise" when it straddles the target.
    quartiles: [ratios[Math.floor(ratios.length / 4)], ratios[Math.floor((3 * ratios.length) / 4)]],
    calls: count,
    rounds,
    noneMs: median(samples.none.map((item) => item.perCallMs)),
    gateMs: median(samples.gate.map((item) => item.perCallMs)),
    ratio: paired((item) => item.perCallMs),
    clientCpuRatio: paired((item) => item.clientCpuUs),
    samples,
  };
}

/** Mean of the rounds' per-call figures (and CPU split); the rounds themselves are kept. */
function combine(list) {
  const mean = (pick) => list.reduce((sum, item) => sum + pick(item), 0) / list.length;
  const perCallMs = mean((item) => item.perCallMs);
  const cpuPerCallUs = {};
  for (const label of Object.keys(list[0].cpuPerCallUs ?? {})) {
    const threads = {};
    for (const name of new Set(list.flatMap((item) => Object.keys(item.cpuPerCallUs[label]?.threadsUs ?? {})))) {
      threads[name] = Number(mean((item) => item.cpuPerCallUs[label]?.threadsUs?.[name] ?? 0).toFixed(1));
    }
    cpuPerCallUs[label] = { totalUs: Number(mean((item) => item.cpuPerCallUs[label]?.totalUs ?? 0).toFixed(1)), threadsUs: threads };
  }
  return {
    ...list[0],
    perCallMs,
    callsPerSecond: 1000 / perCallMs,
    loopS: mean((item) => item.loopS),
    wallS: mean((item) => item.wallS),
    cpuPerCallUs,
    rounds: list.map((item) => ({ perCallMs: item.perCallMs, callsPerSecond: item.callsPerSecond, cpuPerCallUs: item.cpuPerCallUs })),
  };
}

async function measureBridge(ctx, engine) {
  const { Runtime } = ctx.modules.supervisor;
  const runtime = new Runtime({ python: ctx.python, warmStandby: false });
  const count = ctx.n.toolCalls;
  let served = 0;
  const onToolCall = async (call) => {
    served += 1;
    if (call.name !== 'echo') return { ok: false, message: `unknown tool ${call.name}` };
    return { ok: true, valueJson: JSON.stringify(call.arguments) };
  };
  try {
    runtime.start();
    const first = await runtime.run('execute', { code: '0' });
    if (!first.ok) throw new Error(`worker failed to start: ${JSON.stringify(first.error)}`);
    for (const pid of runtime.workerPids()) track(pid, 'code-mode worker');
    let mechanism;
    let outcome;
    const pids = { 'client (Runtime)': process.pid, worker: runtime.workerPids()[0] };
    const snapshot = () => Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, cpuSnapshot(pid)]));
    let before = snapshot();
    const started = performance.now();
    if (engine.hasBridge) {
      mechanism =
        'Runtime.run("run_code") with the worker bridge (define_tools → echo(*, x: int)); each call is a tool_call frame answered by ' +
        'RunOptions.onToolCall in TypeScript';
      const defined = await runtime.run('define_tools', {
        tools: [{ python_name: 'echo', tool_name: 'echo', doc: 'Echo the arguments.', parameters: [{ name: 'x', key: 'x', annotation: 'int', required: true }] }],
      });
      if (!defined.ok) throw new Error(`define_tools failed: ${JSON.stringify(defined.error)}`);
      before = snapshot();
      outcome = await runtime.run(
        'run_code',
        { code: loopCode(count, (arg) => `echo(x=${arg})`), max_tool_calls: count + WARMUP_CALLS },
        { onToolCall, timeoutMs: 600_000 },
      );
    } else {
      // No bridge op in this checkout: send the same tool_call frames from the cell through the worker's channel.
      mechanism = 'raw tool_call frames from an execute cell through the worker channel (no bridge op available), answered by RunOptions.onToolCall';
      const code = [
        'import gc as _bench_gc, itertools as _bench_it',
        'from ipython_mcp_worker.ipc.channel import Channel as _BenchChannel',
        '_bench_ch = next(o for o in _bench_gc.get_objects() if isinstance(o, _BenchChannel))',
        '_bench_rid = _bench_ch.interrupter._armed',
        '_bench_ids = _bench_it.count(1)',
        'def echo(**kwargs):',
        '    cid = next(_bench_ids)',
        '    _bench_ch.send({"type": "tool_call", "id": _bench_rid, "call_id": cid, "name": "echo", "arguments": kwargs})',
        '    answer = _bench_ch.tool_results.get()',
        '    return answer["value"]',
        loopCode(count, (arg) => `echo(x=${arg})`),
      ].join('\n');
      outcome = await runtime.run('execute', { code }, { onToolCall, timeoutMs: 600_000 });
    }
    const wallS = (performance.now() - started) / 1000;
    const cpuPerCallUs = cpuPerCall(before, snapshot(), count + WARMUP_CALLS);
    if (!outcome.ok || outcome.result.status !== 'ok') {
      throw new Error(`code mode loop failed: ${JSON.stringify(outcome.ok ? outcome.result.error : outcome.error).slice(0, 400)}`);
    }
    const elapsedS = outcome.result.result.value;
    return {
      mechanism,
      engineDist: engine.engineDist,
      calls: count,
      served,
      loopS: elapsedS,
      perCallMs: (elapsedS * 1000) / count,
      callsPerSecond: count / elapsedS,
      wallS,
      cpuPerCallUs,
    };
  } finally {
    await runtime.close();
  }
}
