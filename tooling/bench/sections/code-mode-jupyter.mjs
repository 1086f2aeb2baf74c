// Code Mode nested tool call on a Jupyter kernel: a run_code cell in a kernel a `jupyter server` runs calls a trivial
// TypeScript echo tool; each call is an input_request on the kernel's stdin channel, answered by an input_reply
// (docs/jupyter.md). The floor is the bare stdin-channel round trip on the same kernel (python/jupyter_stdin_floor.py
// "ws": input() answered at once by jupyter_client's Session over the server's WebSocket, the path our call takes),
// with ZeroMQ jupyter_client (skips the server) and our local nested call (the worker's pipe) as figures. All timed
// inside the kernel around a loop, in interleaved rounds; each ratio is taken per round.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PY_DIR, ROOT } from '../lib/env.mjs';
import { track, untrack, waitForExit } from '../lib/procs.mjs';
import { ratio, spread, summarize } from '../lib/stats.mjs';
import { startJupyterServer } from './jupyter.mjs';

const WARMUP_CALLS = 100;

function loopCode(count) {
  return [
    'import time as _bench_time',
    `for _bench_i in range(${WARMUP_CALLS}):`,
    '    echo(x=_bench_i)',
    '_bench_started = _bench_time.perf_counter()',
    `for _bench_i in range(${count}):`,
    '    assert echo(x=_bench_i)["x"] == _bench_i',
    '(_bench_time.perf_counter() - _bench_started) * 1000 / ' + String(count),
  ].join('\n');
}

function startStdinFloor(python, server, kernelId) {
  const child = spawn(python, [join(PY_DIR, 'jupyter_stdin_floor.py'), server.url, kernelId, join(server.runtimeDir, `kernel-${kernelId}.json`)], {
    env: { ...process.env, JUPYTER_TOKEN: server.token },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  track(child.pid, 'jupyter_stdin_floor.py');
  const lines = createInterface({ input: child.stdout });
  let pending = null;
  lines.on('line', (line) => {
    const waiting = pending;
    pending = null;
    const answer = JSON.parse(line);
    if (answer.error) waiting?.reject(new Error(`jupyter_stdin_floor.py: ${answer.error}`));
    else waiting?.resolve(answer.per_call_ms);
  });
  child.on('exit', (code, signal) => {
    pending?.reject(new Error(`jupyter_stdin_floor.py exited (${signal ?? `exit ${code}`})`));
    pending = null;
  });
  return {
    run: (kind, count) =>
      new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.stdin.write(`${kind} ${count} ${WARMUP_CALLS}\n`);
      }),
    close: async () => {
      child.stdin.end('quit\n');
      if (!(await waitForExit(child.pid, 5_000))) child.kill('SIGKILL');
      untrack(child.pid);
    },
  };
}

function echoTool() {
  return {
    name: 'echo',
    description: 'Echo the arguments.',
    inputSchema: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
    execute: async (input) => input,
  };
}

/** Per-call ms of one run_code loop of `count` calls (timed in the kernel). */
async function codeModeLoop(codeMode, count) {
  const result = await codeMode.runCode({ code: loopCode(count) });
  const value = result.return.kind === 'value' ? Number(result.return.value) : NaN;
  if (!Number.isFinite(value)) throw new Error(`run_code returned ${JSON.stringify(result.return).slice(0, 300)}`);
  return value;
}

/** Ours on a kernel, the stdin-channel floors and our local nested call, on a stock server and with TCP_NODELAY. */
export async function measureCodeModeJupyter(ctx) {
  return { stock: await measureOn(ctx, false), nodelay: await measureOn(ctx, true) };
}

async function measureOn(ctx, nodelay) {
  const server = await startJupyterServer(ctx.python, { nodelay });
  const engine = await import(pathToFileURL(join(ROOT, 'packages/code-mode/dist/index.js')).href);
  const { jupyterKernelBackend } = await import(pathToFileURL(join(ROOT, 'packages/jupyter-kernel/dist/index.js')).href);
  let onKernel;
  let local;
  let floor;
  let backend;
  let kernelId;
  try {
    const started = await server.rest('POST', 'api/kernels', { name: 'python3' });
    if (started.status !== 201) throw new Error(`could not start a kernel: HTTP ${started.status}`);
    kernelId = started.body.id;
    const rounds = ctx.n.rounds;
    const block = Math.max(50, Math.round(ctx.n.toolCalls / rounds));
    const maxToolCalls = block + WARMUP_CALLS;
    backend = jupyterKernelBackend({ server: { url: server.url, token: server.token }, target: { kernelId } });
    onKernel = new engine.CodeMode({ tools: [echoTool()], maxToolCalls, timeout: null, kernelOptions: { backend, warmStandby: false } });
    local = new engine.CodeMode({ tools: [echoTool()], maxToolCalls, timeout: null, kernelOptions: { python: ctx.python } });
    floor = startStdinFloor(ctx.python, server, kernelId);
    const loops = {
      kernel: (count) => codeModeLoop(onKernel, count),
      ws: (count) => floor.run('ws', count),
      zmq: (count) => floor.run('zmq', count),
      local: (count) => codeModeLoop(local, count),
    };
    const names = Object.keys(loops);
    for (const name of names) await loops[name](WARMUP_CALLS);
    const samples = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < rounds; round += 1) {
      // The same fixed CPU work each round: how much of a CPU the bench got (lib/noise.mjs).
      ctx.calibrate?.();
      for (let index = 0; index < names.length; index += 1) {
        const name = names[(index + round) % names.length];
        samples[name].push(await loops[name](block));
      }
    }
    const perRound = (a, b) => spread(samples[a].map((value, index) => ratio(value, samples[b][index])));
    return {
      nodelay,
      rounds,
      callsPerRound: block,
      loops: Object.fromEntries(names.map((name) => [name, { perCallMs: samples[name], summary: summarize(samples[name]) }])),
      ratios: { kernelOverWs: perRound('kernel', 'ws'), kernelOverLocal: perRound('kernel', 'local'), wsOverZmq: perRound('ws', 'zmq') },
    };
  } finally {
    await onKernel?.close().catch(() => undefined);
    await local?.close().catch(() => undefined);
    await floor?.close().catch(() => undefined);
    await backend?.close().catch(() => undefined);
    if (kernelId) await server.rest('DELETE', `api/kernels/${kernelId}`).catch(() => undefined);
    await server.stop();
  }
}

/** The report's rows (lib/report.mjs): ours against the stdin floor (≤ 1.25×), the rest as figures. */
export function codeModeJupyterRows(measured, { row, formatRatio, judge, ciText }) {
  if (!measured) return [];
  return [...serverRows(measured.stock, 'stock jupyter server'), ...serverRows(measured.nodelay, 'same server, TCP_NODELAY on its WebSockets')].map(
    (fields) => row(fields.label, fields),
  );

  function serverRows(on, flavour) {
    const { loops, ratios, rounds, callsPerRound } = on;
    const over = ratios.kernelOverWs.median;
    return [
      {
        label: `Code Mode nested call on a Jupyter kernel, ${flavour} (ours)`,
        median: loops.kernel.summary.median,
        goal: '≤ 1.25× stdin floor',
        verdict: judge(ratios.kernelOverWs, 1.25),
        comparison: `${formatRatio(over)}${ciText(ratios.kernelOverWs)} the floor (median of ${rounds} per-round ratios of ${callsPerRound} calls; rounds ${formatRatio(ratios.kernelOverWs.min)}–${formatRatio(ratios.kernelOverWs.max)}); ${formatRatio(ratios.kernelOverLocal.median)} our local nested call`,
        raw: { ratios },
      },
      {
        label: '  floor: input_request → input_reply over the server\'s WebSocket',
        median: loops.ws.summary.median,
        goal: '(reference)',
        comparison: `jupyter_client's Session answering input() at once; ${formatRatio(ratios.wsOverZmq.median)} the ZeroMQ round trip`,
      },
      { label: '  same with jupyter_client over ZeroMQ (skips the server)', median: loops.zmq.summary.median, goal: '(reference)', comparison: 'only from the kernel\'s own machine' },
      { label: '  our local nested call (worker pipe), same run', median: loops.local.summary.median, goal: '(figure)', comparison: 'CodeMode with a local kernel' },
    ];
  }
}
