// Real Jupyter servers for the tests: `jupyter server` and `jupyter kernelgateway` from the test .venv, each on a
// free 127.0.0.1 port with a random token and its own temporary root, runtime, config and IPython directories.
// stop() ends the server and every process under it (kernels included), so a test file leaves nothing behind.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPids, isAlive, survivors, testPython } from '@ipython-mcp/test-support';

/**
 * Which Jupyter server to start: `server` is a plain jupyter_server (the collaboration and JupyterLab extensions the
 * test environment also holds are switched off for it), `jupyterlab` is JupyterLab with jupyter-collaboration (a
 * person's notebook, with its shared documents), `gateway` a Kernel Gateway, `enterprise-gateway` an Enterprise
 * Gateway (from its own environment, below).
 */
export type JupyterServerKind = 'server' | 'jupyterlab' | 'gateway' | 'enterprise-gateway';

/** The server extensions a plain `server` runs without: what JupyterLab and jupyter-collaboration add. */
const LAB_EXTENSIONS = ['jupyterlab', 'jupyter_server_ydoc', 'jupyter_server_fileid', 'jupyter_lsp', 'notebook_shim', 'jupyter_collaboration'];

/**
 * The Python environment of Enterprise Gateway: its own (`.venv-eg`, made by tooling/scripts/bootstrap.sh --dev),
 * because jupyter-enterprise-gateway 3.x pins jupyter_client 6 and jupyter_server 1, which the other servers'
 * `.venv` has newer. Undefined when it was not made (the Enterprise Gateway tests are then skipped, saying so).
 */
export function enterpriseGatewayPython(): string | undefined {
  const python = new URL('../../../.venv-eg/bin/python', import.meta.url).pathname;
  return existsSync(python) ? python : undefined;
}

/** A started server; `stop()` must be called (afterAll). */
export interface RunningJupyter {
  readonly kind: JupyterServerKind;
  readonly url: string;
  readonly token: string;
  /** The notebook root (jupyter server only; the gateway's working directory otherwise). */
  readonly rootDir: string;
  /** Where the kernels' connection files are (`kernel-<id>.json`). */
  readonly runtimeDir: string;
  /** The server's process id (a new one after {@link RunningJupyter.restart}). */
  readonly pid: number;
  /** Kills the server and its kernels (SIGKILL) and starts it again on the same port, token and directories. */
  restart(): Promise<void>;
  /**
   * Ends the server with `signal` (SIGTERM lets it shut its kernels down; SIGKILL does not), then whatever of its
   * kernels is left; {@link RunningJupyter.up} starts it again. Only for a plain server or JupyterLab.
   */
  down?(signal: NodeJS.Signals): Promise<void>;
  /** Starts the server again after {@link RunningJupyter.down}, on the same port, token and directories; resolves once it answers. */
  up?(): Promise<void>;
  /** The server's last stderr lines (its log), for a failing test's message. */
  stderr(): string;
  /** Calls the REST API with the token; returns the status and the parsed body (or `undefined`). */
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** Every process under the server (kernels), recursively. */
  descendants(): number[];
  stop(): Promise<void>;
}

/**
 * A REST caller for the API under `baseUrl` with `token` in the Authorization header: each call returns the status and
 * the parsed JSON body (undefined when there is none).
 */
export function tokenRest(baseUrl: string, token: string, timeoutMs = 10_000): (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }> {
  return async (method, path, body) => {
    const response = await fetch(`${baseUrl}${path.replace(/^\//, '')}`, {
      method,
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed };
  };
}

/** A port nobody listens on right now (the kernel picks it, then we let it go). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The kernel's range of ports handed out for port 0 (`ip_local_port_range`), or Linux's default. */
function ephemeralRange(): [number, number] {
  try {
    const [low = NaN, high = NaN] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low > 1024) return [low, high];
  } catch {
    // not Linux: the default below
  }
  return [32768, 60999];
}

function listensFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A free port below the range the kernel hands out for port 0, for a server a test stops and starts again on the same
 * port: while it is down, no kernel, client socket or server of another test file (they all bind port 0) can take it.
 * Random, so files side by side rarely try the same one; a port in use is passed over.
 */
export async function stablePort(): Promise<number> {
  const [low] = ephemeralRange();
  const floor = Math.max(10_000, low - 16_000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await listensFree(port)) return port;
  }
  throw new Error(`no free port between ${floor} and ${low - 1} after 100 tries`);
}

function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    for (const child of childPids(next)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * Starts a Jupyter server or Kernel Gateway and waits until its REST API answers with the token.
 *
 * @param kind - `server` (jupyter_server 2.x, with sessions), `gateway` (jupyter-kernel-gateway 3.x) or
 *   `enterprise-gateway` (jupyter-enterprise-gateway 3.x from `.venv-eg`, its kernels local processes)
 */
export async function startJupyter(kind: JupyterServerKind): Promise<RunningJupyter> {
  const scratch = mkdtempSync(join(tmpdir(), `ipython-mcp-jupyter-${kind}-`));
  const rootDir = join(scratch, 'root');
  const runtimeDir = join(scratch, 'runtime');
  spawnSync('mkdir', ['-p', rootDir, runtimeDir, join(scratch, 'config'), join(scratch, 'data'), join(scratch, 'ipython')]);
  if (kind === 'server') {
    // The server's own config directory (JUPYTER_CONFIG_DIR) outranks the environment's, which enables them.
    const off = { ServerApp: { jpserver_extensions: Object.fromEntries(LAB_EXTENSIONS.map((name) => [name, false])) } };
    writeFileSync(join(scratch, 'config', 'jupyter_server_config.json'), JSON.stringify(off));
  }
  // Below the ephemeral range: RunningJupyter.restart/up start it again on this port, which no kernel can take meanwhile.
  const port = await stablePort();
  const token = randomBytes(24).toString('hex');
  const common = ['--no-browser', '--allow-root'];
  const serverArgs = [...common, '--ip=127.0.0.1', `--port=${port}`, '--port-retries=0', `--IdentityProvider.token=${token}`, `--ServerApp.root_dir=${rootDir}`];
  const args =
    kind === 'server'
      ? ['-m', 'jupyter', 'server', ...serverArgs]
      : kind === 'jupyterlab'
        ? ['-m', 'jupyter', 'lab', ...serverArgs]
      : kind === 'enterprise-gateway'
        ? [
            '-m',
            'enterprise_gateway',
            '--EnterpriseGatewayApp.ip=127.0.0.1',
            `--EnterpriseGatewayApp.port=${port}`,
            '--EnterpriseGatewayApp.port_retries=0',
            `--EnterpriseGatewayApp.auth_token=${token}`,
          ]
        : [
          '-m',
          'jupyter',
          'kernelgateway',
          '--KernelGatewayApp.ip=127.0.0.1',
          `--KernelGatewayApp.port=${port}`,
          '--KernelGatewayApp.port_retries=0',
          `--KernelGatewayApp.auth_token=${token}`,
        ];
  const python = kind === 'enterprise-gateway' ? enterpriseGatewayPython() : testPython();
  if (python === undefined) throw new Error('no .venv-eg: run tooling/scripts/bootstrap.sh --dev to make the Enterprise Gateway environment');
  let child: ChildProcess;
  let stderr = '';
  const launch = (): void => {
    stderr = '';
    child = spawn(python, kind === 'server' || kind === 'jupyterlab' ? args : args.filter((arg) => !common.includes(arg)), {
      cwd: rootDir,
      env: {
        ...process.env,
        JUPYTER_RUNTIME_DIR: runtimeDir,
        JUPYTER_CONFIG_DIR: join(scratch, 'config'),
        JUPYTER_DATA_DIR: join(scratch, 'data'),
        IPYTHONDIR: join(scratch, 'ipython'),
        JUPYTER_TOKEN: '',
        PYTHONUNBUFFERED: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-20_000);
    });
  };
  launch();
  const url = `http://127.0.0.1:${port}/`;
  const rest = tokenRest(url, token);
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const pid = child.pid as number;
    const everyone = [pid, ...descendantsOf(pid)];
    // SIGTERM lets the server shut its kernels down; whatever is left after that is killed.
    if (isAlive(pid)) process.kill(pid, signal);
    const left = await survivors(everyone, 8_000);
    for (const survivor of left) {
      try {
        process.kill(survivor, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await survivors(everyone, 3_000);
  };
  const stop = async (): Promise<void> => {
    await end('SIGTERM');
    rmSync(scratch, { recursive: true, force: true });
  };
  const ready = async (): Promise<void> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`jupyter ${kind} exited before it was ready:\n${stderr}`);
      try {
        const probe = await rest('GET', 'api/kernelspecs');
        if (probe.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`jupyter ${kind} was not ready within 60 s:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  };
  try {
    await ready();
  } catch (error) {
    await stop();
    throw error;
  }
  const restart = async (): Promise<void> => {
    await end('SIGKILL');
    launch();
    await ready();
  };
  return {
    kind,
    url,
    token,
    rootDir,
    runtimeDir,
    get pid() {
      return child.pid as number;
    },
    restart,
    down: (signal: NodeJS.Signals) => end(signal),
    up: async () => {
      launch();
      await ready();
    },
    stderr: () => stderr,
    rest,
    descendants: () => descendantsOf(child.pid as number),
    stop,
  };
}

/**
 * Runs code in a kernel as a second, human-side client would: Python's jupyter_client on the kernel's connection
 * file, outside the Jupyter server's WebSocket. Returns the script's stdout (the reply status, then any output).
 */
export function humanExecute(server: RunningJupyter, kernelId: string, code: string): string {
  const done = spawnSync(testPython(), [humanClientScript(), connectionFileOf(server, kernelId), code], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (done.status !== 0) throw new Error(`human-client.py failed (${done.status}): ${done.stderr}`);
  return done.stdout;
}

/** The human-side client script (jupyter_client), for tests that drive it themselves. */
export function humanClientScript(): string {
  return new URL('./human-client.py', import.meta.url).pathname;
}

/** The kernel's connection file on this server; fails clearly if the server keeps its connection files elsewhere. */
export function connectionFileOf(server: RunningJupyter, kernelId: string): string {
  const connectionFile = join(server.runtimeDir, `kernel-${kernelId}.json`);
  readFileSync(connectionFile);
  return connectionFile;
}

/**
 * {@link humanExecute} without blocking: the human's cell runs while the test goes on (a long cell the agent's call
 * must wait for). Resolves with the script's stdout once the cell is done.
 */
export function startHumanExecute(server: RunningJupyter, kernelId: string, code: string): Promise<string> {
  const child = spawn(testPython(), [humanClientScript(), connectionFileOf(server, kernelId), code], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`human-client.py failed (${String(code)}): ${stderr}`));
    });
  });
}

/** A human watching the kernel's IOPub (every client's cells and output), as `jupyter console --existing` does. */
export interface HumanWatch {
  /** Resolves once the watcher is subscribed. */
  readonly listening: Promise<void>;
  /** Resolves with what it saw (one object per execute_input or stream message) when it stops. */
  readonly seen: Promise<Array<{ type: string; code?: string; text?: string; execution_count?: number }>>;
}

/**
 * Starts a watcher on the kernel's IOPub; it stops when a stream text contains `needle` or after `seconds`.
 */
export function watchKernel(server: RunningJupyter, kernelId: string, needle: string, seconds = 30): HumanWatch {
  const script = new URL('./human-watch.py', import.meta.url).pathname;
  const child = spawn(testPython(), [script, connectionFileOf(server, kernelId), String(seconds), needle], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let onListening: (() => void) | undefined;
  const listening = new Promise<void>((resolve) => (onListening = resolve));
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('listening\n')) onListening?.();
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 30) * 1000);
  const seen = new Promise<Array<{ type: string; code?: string; text?: string; execution_count?: number }>>((resolve, reject) => {
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`human-watch.py failed (${String(code)}): ${stderr}`));
        return;
      }
      resolve(
        stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { type: string; code?: string; text?: string; execution_count?: number }),
      );
    });
  });
  seen.catch(() => undefined);
  return { listening, seen };
}

/** Starts a kernel on the server as a human would (JupyterLab's "new kernel"); returns its id. */
export async function startHumanKernel(server: RunningJupyter, name = 'python3'): Promise<string> {
  const started = await server.rest('POST', 'api/kernels', { name });
  if (started.status !== 201) throw new Error(`could not start a ${name} kernel: HTTP ${started.status}`);
  return (started.body as { id: string }).id;
}

/**
 * Marker files that say when a human cell has started running (the kernel is busy with it from then on), so a test
 * acts on the kernel's state instead of on a guess of how long start-up takes. `remove()` in afterAll.
 */
export function humanCellMarkers(): {
  startedMarker: (name: string) => string;
  humanCellRunning: (name: string) => Promise<void>;
  remove: () => void;
} {
  const directory = mkdtempSync(join(tmpdir(), 'ipython-mcp-cell-markers-'));
  return {
    /** A line for a human cell that creates `name`'s marker as it starts running. */
    startedMarker: (name) => `open(${JSON.stringify(join(directory, name))}, "w").close()`,
    /** Waits (at most 30 s) until the human cell that writes `name`'s marker runs. */
    humanCellRunning: async (name) => {
      const deadline = Date.now() + 30_000;
      while (!existsSync(join(directory, name))) {
        if (Date.now() > deadline) throw new Error(`the human cell that marks ${name} never started`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    },
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
