// Where the time goes, for the figures that miss their goal. Each profile runs a loop with profilers on all the
// processes involved: the MCP client or the Runtime (this process, via the inspector), the server
// (node --cpu-prof, samples kept only inside the loop's window) and the worker (py-spy, or cProfile from inside
// the worker when py-spy is unavailable). Figures measured with profilers on are slower than the table's.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, RESULTS_DIR, ROOT } from '../lib/env.mjs';
import { evaluate, settle, startServer } from '../lib/mcp.mjs';
import { summarizeCpuProfile, summarizePySpyRaw } from '../lib/profile.mjs';
import { sleep, track, untrack } from '../lib/procs.mjs';
import { CELL } from './execute.mjs';

const PY_SPY_RATE = 400;
// Profiles land next to latest.json as bench/results/profile-*.json (ignored by git like every results JSON).
const PROFILE_DIR = RESULTS_DIR;
const PREFIX = 'profile-';

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

function startPySpy(pySpy, pid, output) {
  const child = spawn(
    pySpy,
    ['record', '--pid', String(pid), '--rate', String(PY_SPY_RATE), '--format', 'raw', '--threads', '--function', '--nonblocking', '--output', output],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  track(child.pid, 'py-spy', { group: true });
  let text = '';
  child.stderr.on('data', (chunk) => {
    text += chunk.toString('utf8');
  });
  child.stdout.on('data', (chunk) => {
    text += chunk.toString('utf8');
  });
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  return {
    async stop() {
      try {
        process.kill(child.pid, 'SIGINT');
      } catch {
        // already gone
      }
      const code = await Promise.race([exited, sleep(15_000).then(() => 'timeout')]);
      if (code === 'timeout') {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      untrack(child.pid);
      return { code, output: text.trim().slice(-400) };
    },
  };
}

const CPROFILE_ON = 'import cProfile as _bench_cprofile\n_bench_profiler = _bench_cprofile.Profile()\n_bench_profiler.enable()';
const CPROFILE_OFF = [
  '_bench_profiler.disable()',
  'import io as _bench_io, pstats as _bench_pstats',
  '_bench_out = _bench_io.StringIO()',
  '_bench_pstats.Stats(_bench_profiler, stream=_bench_out).sort_stats("tottime").print_stats(20)',
  'print(_bench_out.getvalue())',
].join('\n');

/** Worker profiler: py-spy from the bench venv when available, else cProfile switched on by cells. */
async function workerProfiler(ctx, name, workerPid, runCell) {
  const pySpy = ctx.benchPython ? join(ctx.benchPython, '..', 'py-spy') : null;
  if (pySpy && existsSync(pySpy) && !ctx.noPySpy) {
    const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-bench-pyspy-'));
    const output = join(scratch, 'raw.txt');
    const spy = startPySpy(pySpy, workerPid, output);
    await sleep(1000); // attach
    return {
      async stop(durationS) {
        const stopped = await spy.stop();
        try {
          if (!existsSync(output)) return { tool: 'py-spy', error: `py-spy wrote no output (exit ${stopped.code}): ${stopped.output}` };
          const raw = readFileSync(output, 'utf8');
          // Kept as JSON (collapsed stacks → sample counts) beside latest.json.
          const stacks = raw.split('\n').filter(Boolean).map((line) => {
            const cut = line.lastIndexOf(' ');
            return [line.slice(0, cut), Number(line.slice(cut + 1))];
          });
          writeFileSync(join(PROFILE_DIR, `${PREFIX}${name}.worker.pyspy.json`), `${JSON.stringify({ rate: PY_SPY_RATE, format: 'py-spy raw (collapsed stacks)', stacks })}\n`);
          return { tool: 'py-spy', rate: PY_SPY_RATE, ...summarizePySpyRaw(raw, { rate: PY_SPY_RATE, durationS }) };
        } finally {
          rmSync(scratch, { recursive: true, force: true });
        }
      },
    };
  }
  if (!runCell) return { stop: async () => ({ tool: null, error: 'py-spy unavailable and no way to run cProfile here' }) };
  await runCell(CPROFILE_ON);
  return {
    async stop() {
      const text = await runCell(CPROFILE_OFF);
      return { tool: 'cProfile', text };
    },
  };
}

async function profileThisProcess(fn) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  let failure = null;
  try {
    await fn();
  } catch (error) {
    failure = error;
  }
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  if (failure) throw failure;
  return profile;
}

async function profiledServer(ctx, name, env = {}) {
  const file = join(PROFILE_DIR, `${PREFIX}${name}.server.cpuprofile.json`);
  const server = await startServer(ctx.modules, {
    args: ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR, '--cpu-prof-name', `${PREFIX}${name}.server.cpuprofile.json`, '--cpu-prof-interval', '250', CLI],
    env: ctx.serverEnv(env),
    label: `profiled server (${name})`,
  });
  return {
    server,
    /** Closes the server and summarizes its profile inside `windowUs` (it is written at exit). */
    async finish(windowUs) {
      await server.close();
      const deadline = Date.now() + 10_000;
      while (!existsSync(file) && Date.now() < deadline) await sleep(50);
      if (!existsSync(file)) return { error: 'the server wrote no CPU profile' };
      return summarizeCpuProfile(JSON.parse(readFileSync(file, 'utf8')), { windowUs });
    },
  };
}

/** A warm loop of MCP calls with client, server and worker profiled. */
async function profileServerLoop(ctx, name, { env, setup, call, calls }) {
  const { server, finish } = await profiledServer(ctx, name, env);
  let windowUs = null;
  let loop;
  let client;
  let worker = { tool: null, error: 'not reached' };
  let serverSummary;
  try {
    const workerPid = await evaluate(server, 'import os as _bench_os\n_bench_os.getpid()');
    track(workerPid, `profiled worker (${name})`);
    await settle(server);
    if (setup) await setup(server);
    for (let index = 0; index < ctx.n.warmup; index += 1) await call(server);
    const profiler = await workerProfiler(ctx, name, workerPid, async (code) => (await server.call('execute', { code })).structuredContent?.stdout ?? '');
    const started = performance.now();
    const profile = await profileThisProcess(async () => {
      const startUs = monotonicUs();
      for (let index = 0; index < calls; index += 1) await call(server);
      windowUs = [startUs, monotonicUs()];
    });
    const seconds = (performance.now() - started) / 1000;
    loop = { calls, seconds, perCallMs: (seconds * 1000) / calls };
    client = summarizeCpuProfile(profile, { windowUs });
    worker = await profiler.stop(seconds);
  } finally {
    serverSummary = await finish(windowUs);
  }
  return { loop, client, server: serverSummary, worker };
}

/** The Code Mode loop through the engine's public API when it is built, else through Runtime + the worker bridge. */
async function profileCodeMode(ctx) {
  const engineDist = join(ROOT, 'packages/code-mode/dist/index.js');
  const engine = existsSync(engineDist) ? await import(pathToFileURL(engineDist).href) : null;
  if (typeof engine?.CodeMode !== 'function') return profileCodeModeBridge(ctx);
  const calls = ctx.n.toolCalls;
  const tool = {
    name: 'echo',
    description: 'Echo the arguments.',
    inputSchema: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
    execute: async (input) => input,
  };
  const codeMode = new engine.CodeMode({ tools: [tool], maxToolCalls: calls + 100, timeout: null, kernelOptions: { python: ctx.python } });
  try {
    const workerPid = (await codeMode.runCode({ code: 'import os\nos.getpid()' })).return.value;
    track(workerPid, 'profiled code-mode kernel');
    await codeMode.runCode({ code: 'for _i in range(50):\n    echo(x=_i)' });
    const profiler = await workerProfiler(ctx, 'code-mode', workerPid, async (cell) => {
      const result = await codeMode.runCode({ code: cell });
      return typeof result.return.value?.output === 'string' ? result.return.value.output : '';
    });
    let windowUs;
    const started = performance.now();
    const profile = await profileThisProcess(async () => {
      const startUs = monotonicUs();
      await codeMode.runCode({ code: `for _i in range(${calls}):\n    echo(x=_i)` });
      windowUs = [startUs, monotonicUs()];
    });
    const seconds = (performance.now() - started) / 1000;
    return {
      loop: { calls, seconds, perCallMs: (seconds * 1000) / calls },
      client: summarizeCpuProfile(profile, { windowUs }),
      clientTitle: 'CodeMode engine + Runtime (this process)',
      worker: await profiler.stop(seconds),
    };
  } finally {
    await codeMode.close();
  }
}

/** The Code Mode loop through Runtime (in this process) with the worker bridge; Runtime side and worker profiled. */
async function profileCodeModeBridge(ctx) {
  const { Runtime } = ctx.modules.supervisor;
  const runtime = new Runtime({ python: ctx.python, warmStandby: false });
  const calls = ctx.n.toolCalls;
  try {
    runtime.start();
    const first = await runtime.run('execute', { code: 'import os\nos.getpid()' });
    if (!first.ok) throw new Error(`worker failed to start: ${JSON.stringify(first.error)}`);
    const workerPid = first.result.result.value;
    track(workerPid, 'profiled code-mode worker');
    const defined = await runtime.run('define_tools', {
      tools: [{ python_name: 'echo', tool_name: 'echo', doc: 'Echo.', parameters: [{ name: 'x', key: 'x', annotation: 'int', required: true }] }],
    });
    if (!defined.ok) throw new Error(`define_tools failed (no Code Mode bridge in this worker?): ${JSON.stringify(defined.error)}`);
    const onToolCall = async (call) => ({ ok: true, valueJson: JSON.stringify(call.arguments) });
    const code = `for _i in range(${calls}):\n    echo(x=_i)`;
    await runtime.run('run_code', { code: 'for _i in range(50):\n    echo(x=_i)', max_tool_calls: 100 }, { onToolCall });
    const profiler = await workerProfiler(ctx, 'code-mode', workerPid, async (cell) => {
      const outcome = await runtime.run('execute', { code: cell });
      return outcome.ok ? outcome.result.stdout : '';
    });
    let windowUs;
    const started = performance.now();
    const profile = await profileThisProcess(async () => {
      const startUs = monotonicUs();
      const outcome = await runtime.run('run_code', { code, max_tool_calls: calls }, { onToolCall, timeoutMs: 600_000 });
      windowUs = [startUs, monotonicUs()];
      if (!outcome.ok || outcome.result.status !== 'ok') throw new Error(`run_code failed: ${JSON.stringify(outcome).slice(0, 300)}`);
    });
    const seconds = (performance.now() - started) / 1000;
    return {
      loop: { calls, seconds, perCallMs: (seconds * 1000) / calls },
      client: summarizeCpuProfile(profile, { windowUs }),
      clientTitle: 'Runtime + onToolCall (this process)',
      worker: await profiler.stop(seconds),
    };
  } finally {
    await runtime.close();
  }
}

/** Server start-up up to the answered initialize, over a few spawns (each profile windowed to spawn → initialize). */
async function profileColdStart(ctx) {
  const spawns = [];
  for (let rep = 0; rep < 3; rep += 1) {
    const spawnUs = monotonicUs();
    const { server, finish } = await profiledServer(ctx, `cold-start-${rep}`);
    const initializedUs = monotonicUs();
    void server;
    spawns.push({ server: await finish([spawnUs, initializedUs]), spawnToInitializeMs: (initializedUs - spawnUs) / 1000 });
  }
  // The busiest of the three stands for all (they are alike); the list keeps every one's busy time.
  const best = spawns.reduce((a, b) => (a.server.busyMs ?? 0) >= (b.server.busyMs ?? 0) ? a : b);
  return {
    loop: { calls: spawns.length, seconds: spawns.reduce((sum, item) => sum + item.spawnToInitializeMs, 0) / 1000, perCallMs: spawns.reduce((sum, item) => sum + item.spawnToInitializeMs, 0) / spawns.length },
    server: best.server,
    spawns: spawns.map((item) => ({ spawnToInitializeMs: Number(item.spawnToInitializeMs.toFixed(1)), serverBusyMs: item.server.busyMs })),
  };
}

const TOOLS = [
  'def _bench_tool_make(i):',
  '    def tool(a: int, b: str = "x", scale: float = 1.0) -> dict:',
  '        return {"a": a, "b": b, "scale": scale, "i": i}',
  '    tool.__name__ = tool.__qualname__ = f"tool_{i:03d}"',
  '    tool.__doc__ = f"Dynamic tool number {i}."',
  '    return tool',
  'for _bench_i in range(100):',
  '    globals()[f"tool_{_bench_i:03d}"] = _bench_tool_make(_bench_i)',
].join('\n');

// Deterministic split of the worker's main thread per execute: instruments (in its own server) the worker's
// request wait, Worker.handle, ShellOwner.execute, InteractiveShell.run_cell and the response's encode and write.
const SPLIT_PATCH = `
import gc as _bs_gc, os as _bs_os, time as _bs_time
from ipython_mcp_worker.ipc.channel import Channel as _BsChannel
from ipython_mcp_worker.ipc.codec import encode_frame as _bs_encode
from ipython_mcp_worker.worker import Worker as _BsWorker
_bs_ch = next(o for o in _bs_gc.get_objects() if isinstance(o, _BsChannel))
_bs_wk = next(o for o in _bs_gc.get_objects() if isinstance(o, _BsWorker))
_bs = {k: [] for k in ("wait", "handle", "execute", "run_cell", "encode", "write")}
def _bs_timed(key, fn):
    def timed(*args, **kwargs):
        started = _bs_time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _bs[key].append(_bs_time.perf_counter() - started)
    return timed
def _bs_send(message):
    started = _bs_time.perf_counter()
    frame = _bs_encode(message, _bs_ch.codec, _bs_ch.limit)
    encoded = _bs_time.perf_counter()
    view = memoryview(frame)
    while view:
        view = view[_bs_os.write(_bs_ch.fd_out, view):]
    _bs["encode"].append(encoded - started)
    _bs["write"].append(_bs_time.perf_counter() - encoded)
_bs_ch.send = _bs_send
_bs_ch.next_request = _bs_timed("wait", _bs_ch.next_request)
_bs_wk.handle = _bs_timed("handle", _bs_wk.handle)
_bs_wk.owner.execute = _bs_timed("execute", _bs_wk.owner.execute)
_bs_wk.shell.run_cell = _bs_timed("run_cell", _bs_wk.shell.run_cell)
0`;
const SPLIT_RESET = 'for _bs_k in _bs:\n    _bs[_bs_k].clear()';
const SPLIT_READ = [
  'def _bs_summary(values):',
  '    ordered = sorted(values)',
  '    pick = lambda q: ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1e6',
  '    return {"n": len(ordered), "mean_us": sum(ordered) / max(len(ordered), 1) * 1e6, "median_us": pick(0.5), "p90_us": pick(0.9), "p99_us": pick(0.99)}',
  '{key: _bs_summary(values[:-1] if key in ("wait",) else values) for key, values in _bs.items() if values}',
].join('\n');

async function profileWorkerSplit(ctx) {
  const server = await startServer(ctx.modules, { env: ctx.serverEnv(), label: 'worker-split server' });
  try {
    await evaluate(server, SPLIT_PATCH);
    await settle(server);
    for (let index = 0; index < ctx.n.warmup; index += 1) await server.call('execute', { code: CELL });
    await evaluate(server, SPLIT_RESET);
    const started = performance.now();
    for (let index = 0; index < ctx.n.profileCalls; index += 1) await server.call('execute', { code: CELL });
    const perCallMs = (performance.now() - started) / ctx.n.profileCalls;
    const split = await evaluate(server, SPLIT_READ);
    return { calls: ctx.n.profileCalls, perCallMs, split, note: 'instrumented in the worker (perf_counter); "wait" is the main thread blocked between requests, i.e. everything outside the worker' };
  } finally {
    await server.close();
  }
}

export async function measureProfile(ctx) {
  mkdirSync(PROFILE_DIR, { recursive: true });
  for (const name of readdirSync(PROFILE_DIR)) if (name.startsWith(PREFIX) && name.endsWith('.json')) rmSync(join(PROFILE_DIR, name));
  const profiles = { directory: `${PROFILE_DIR}/${PREFIX}*.json` };
  const errors = {};
  const attempt = async (name, fn) => {
    try {
      profiles[name] = await fn();
    } catch (error) {
      errors[name] = String(error?.message ?? error).slice(0, 500);
    }
  };
  await attempt('execute', () =>
    profileServerLoop(ctx, 'execute', { call: (server) => server.call('execute', { code: CELL }), calls: ctx.n.profileCalls }),
  );
  await attempt('workerSplit', () => profileWorkerSplit(ctx));
  await attempt('codeMode', () => profileCodeMode(ctx));
  await attempt('coldStart', () => profileColdStart(ctx));
  await attempt('executeWithDynamicTools', () =>
    profileServerLoop(ctx, 'execute-dynamic-tools', {
      setup: async (server) => {
        await evaluate(server, TOOLS);
        for (let index = 0; index < 100; index += 1) await server.call('register_tool', { name: `tool_${String(index).padStart(3, '0')}` });
      },
      call: (server) => server.call('execute', { code: CELL }),
      calls: Math.max(50, Math.round(ctx.n.profileCalls / 10)),
    }),
  );
  if (Object.keys(errors).length > 0) profiles.errors = errors;
  return profiles;
}
