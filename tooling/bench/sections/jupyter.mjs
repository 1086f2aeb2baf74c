// execute("1+1") in a kernel a Jupyter server runs: ours over MCP (`ipython-mcp --jupyter URL --kernel ID`) beside
// bare execute_request round trips on the same kernel, all warm at once and measured in interleaved rounds.
//
// The floor of the goal ratio is a bare execute_request over the server's WebSocket (python/jupyter_floor.py "ws":
// jupyter_client's Session builds the message, the server's JSON wire format carries it): the path ipython-mcp
// itself takes, so what remains above it is ours (MCP, the Node client library, the kernel-side hooks). Two
// references: the same round trip from Node through @ipython-mcp/jupyter-kernel (the @jupyterlab/services client
// we use, no MCP), and jupyter_client's BlockingKernelClient over ZeroMQ on the connection file, which skips the
// server: a client on the kernel's own machine can do that, a remote one (a gateway's kernel) cannot.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, PY_DIR, ROOT } from '../lib/env.mjs';
import { startServer } from '../lib/mcp.mjs';
import { descendants, isAlive, sleep, track, untrack, waitForExit } from '../lib/procs.mjs';
import { addCpu, perCallByLabel, withTreeCpu } from '../lib/noise.mjs';
import { ratio, spread, summarize } from '../lib/stats.mjs';
import { CELL, checkExecuteResult, timeLoop } from './execute.mjs';

/**
 * jupyter_server (2.21, on tornado 6) leaves Nagle's algorithm on for its WebSockets: after the first small message
 * of a reply (the kernel's `busy`), the next ones wait for the client's delayed ACK, about 40 ms on Linux, on every
 * execute of every client. This server configuration turns TCP_NODELAY on for each WebSocket the server accepts, so
 * a second pair of rows shows what is left once that stall is gone.
 */
const NODELAY_CONFIG = `import tornado.websocket

_detach = tornado.websocket.WebSocketHandler._detach_stream


def _detach_without_nagle(self):
    stream = _detach(self)
    stream.set_nodelay(True)
    return stream


tornado.websocket.WebSocketHandler._detach_stream = _detach_without_nagle
`;

async function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `jupyter server` from `python` on a free loopback port with a random token and scratch directories; `stop()`
 * ends it and every kernel under it.
 */
export async function startJupyterServer(python, { nodelay = false } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-jupyter-'));
  const dirs = Object.fromEntries(['root', 'runtime', 'config', 'data', 'ipython'].map((name) => [name, join(scratch, name)]));
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  if (nodelay) writeFileSync(join(dirs.config, 'jupyter_server_config.py'), NODELAY_CONFIG);
  const port = await freePort();
  const token = randomBytes(24).toString('hex');
  const url = `http://127.0.0.1:${port}/`;
  const child = spawn(
    python,
    ['-m', 'jupyter', 'server', '--no-browser', '--allow-root', '--ip=127.0.0.1', `--port=${port}`, '--port-retries=0', `--IdentityProvider.token=${token}`, `--ServerApp.root_dir=${dirs.root}`],
    {
      cwd: dirs.root,
      env: { ...process.env, JUPYTER_RUNTIME_DIR: dirs.runtime, JUPYTER_CONFIG_DIR: dirs.config, JUPYTER_DATA_DIR: dirs.data, IPYTHONDIR: dirs.ipython, JUPYTER_TOKEN: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  track(child.pid, 'jupyter server');
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk.toString()).slice(-10_000);
  });
  const rest = async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const stop = async () => {
    const family = [child.pid, ...descendants(child.pid)];
    if (isAlive(child.pid)) child.kill('SIGTERM');
    await waitForExit(child.pid, 8_000);
    for (const pid of family) {
      if (isAlive(pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    untrack(child.pid);
    rmSync(scratch, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`jupyter server exited before it was ready: ${stderr.slice(-1000)}`);
    try {
      if ((await rest('GET', 'api/kernelspecs')).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`jupyter server not ready within 60 s: ${stderr.slice(-1000)}`);
    }
    await sleep(150);
  }
  return { url, token, rootDir: dirs.root, runtimeDir: dirs.runtime, pid: child.pid, rest, stop, stderr: () => stderr };
}

/** python/jupyter_floor.py, kept running; `run(kind, count, warmup)` resolves with its samples in ms. */
function startFloorChild(python, server, kernelId) {
  const child = spawn(python, [join(PY_DIR, 'jupyter_floor.py'), server.url, kernelId, join(server.runtimeDir, `kernel-${kernelId}.json`), CELL], {
    env: { ...process.env, JUPYTER_TOKEN: server.token },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  track(child.pid, 'jupyter_floor.py');
  const lines = createInterface({ input: child.stdout });
  let pending = null;
  lines.on('line', (line) => {
    const waiting = pending;
    pending = null;
    const answer = JSON.parse(line);
    if (answer.error) waiting?.reject(new Error(`jupyter_floor.py: ${answer.error}`));
    else waiting?.resolve(answer.samples_ms);
  });
  child.on('exit', (code, signal) => {
    pending?.reject(new Error(`jupyter_floor.py exited (${signal ?? `exit ${code}`})`));
    pending = null;
  });
  return {
    pid: child.pid,
    run: (kind, count, warmup) =>
      new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.stdin.write(`${kind} ${count} ${warmup}\n`);
      }),
    close: async () => {
      child.stdin.end('quit\n');
      if (!(await waitForExit(child.pid, 5_000))) child.kill('SIGKILL');
      untrack(child.pid);
    },
  };
}

/** The jupyter server needs a Python with jupyter_server and websocket-client: the worker's (.venv has both). */
function checkPython(python) {
  return new Promise((resolve, reject) => {
    const probe = spawn(python, ['-c', 'import jupyter_server, jupyter_client, websocket, ipykernel'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    probe.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    probe.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${python} lacks jupyter_server/jupyter_client/websocket-client/ipykernel (the .venv test extras): ${stderr.trim().split('\n').pop()}`)),
    );
  });
}

/**
 * Ours against the floors, `ctx.n.rounds` interleaved rounds (order rotated per round), `ctx.n.jupyter` calls per loop
 * split over them; every ratio is taken per round from that round's medians.
 */
export async function measureJupyter(ctx) {
  await checkPython(ctx.python);
  return { stock: await measureOn(ctx, false), nodelay: await measureOn(ctx, true) };
}

async function measureOn(ctx, nodelay) {
  const server = await startJupyterServer(ctx.python, { nodelay });
  let mcp;
  let services;
  let floor;
  let kernelId;
  try {
    const started = await server.rest('POST', 'api/kernels', { name: 'python3' });
    if (started.status !== 201) throw new Error(`could not start a kernel: HTTP ${started.status}`);
    kernelId = started.body.id;
    const { openJupyterKernel } = await import(pathToFileURL(join(ROOT, 'packages/jupyter-kernel/dist/index.js')).href);
    services = await openJupyterKernel({ server: { url: server.url, token: server.token }, target: { kernelId } });
    floor = startFloorChild(ctx.python, server, kernelId);
    mcp = await startServer(ctx.modules, {
      args: [CLI, '--jupyter', server.url, '--kernel', kernelId],
      env: { ...ctx.serverEnv(), JUPYTER_TOKEN: server.token },
      label: 'ipython-mcp --jupyter',
    });
    const total = ctx.n.jupyter;
    const rounds = ctx.n.rounds;
    const block = Math.max(1, Math.round(total / rounds));
    const loops = {
      mcp: (count, warmup) => timeLoop(async () => checkExecuteResult(await mcp.call('execute', { code: CELL })), count, warmup),
      services: (count, warmup) =>
        timeLoop(
          async () => {
            const result = await services.execute(CELL);
            if (result.status !== 'ok') throw new Error(`services execute: ${result.status}`);
          },
          count,
          warmup,
        ),
      ws: (count, warmup) => floor.run('ws', count, warmup),
      zmq: (count, warmup) => floor.run('zmq', count, warmup),
    };
    const names = Object.keys(loops);
    for (const name of names) await loops[name](0, ctx.n.warmup);
    const samples = Object.fromEntries(names.map((name) => [name, []]));
    const perRound = [];
    const cpuPerRound = [];
    const cpu = Object.fromEntries(names.map((name) => [name, { calls: 0, ns: 0, byLabel: {} }]));
    for (let round = 0; round < rounds; round += 1) {
      // The same fixed CPU work each round: how much of a CPU the bench got (lib/noise.mjs).
      ctx.calibrate?.();
      const medians = {};
      const cpuUs = {};
      for (let index = 0; index < names.length; index += 1) {
        const name = names[(index + round) % names.length];
        // CPU of every process of ours over the block (Jupyter server and kernel included: the bench starts them).
        const measured = await withTreeCpu(() => loops[name](block, 0));
        addCpu(cpu[name], measured, block);
        samples[name].push(...measured.value);
        medians[name] = summarize(measured.value).median;
        cpuUs[name] = measured.totalNs / 1000 / block;
      }
      perRound.push(medians);
      cpuPerRound.push(cpuUs);
    }
    const over = (a, b) => spread(perRound.map((medians) => ratio(medians[a], medians[b])));
    const cpuOver = (a, b) => spread(cpuPerRound.map((cpuUs) => ratio(cpuUs[a], cpuUs[b])));
    const versions = await mcp.structured('execute', {
      code: 'import sys, IPython, ipykernel\n{"python": sys.version.split()[0], "ipython": IPython.__version__, "ipykernel": ipykernel.__version__}',
    });
    return {
      nodelay,
      rounds,
      perLoop: total,
      loops: Object.fromEntries(names.map((name) => [name, { samples: samples[name], summary: summarize(samples[name]) }])),
      ratios: { mcpOverWs: over('mcp', 'ws'), servicesOverWs: over('services', 'ws'), mcpOverServices: over('mcp', 'services'), wsOverZmq: over('ws', 'zmq') },
      cpuRatios: { mcpOverWs: cpuOver('mcp', 'ws'), servicesOverWs: cpuOver('services', 'ws') },
      // CPU µs per call of each process (the kernel, the Jupyter server, our server, the clients) in each loop.
      cpuPerCallUs: Object.fromEntries(names.map((name) => [name, perCallByLabel(cpu[name])])),
      kernel: versions?.result?.value ?? null,
    };
  } finally {
    await mcp?.close().catch(() => undefined);
    await services?.close().catch(() => undefined);
    await floor?.close().catch(() => undefined);
    if (kernelId) await server.rest('DELETE', `api/kernels/${kernelId}`).catch(() => undefined);
    await server.stop();
  }
}
