// Helpers for end-to-end tests of ipython-mcp on a Jupyter kernel: the real servers and the human-side clients of
// packages/jupyter-kernel/test, and the built binary started with --jupyter. Reusable by every Jupyter suite.
import { spawnSync } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { CLI, startServer, testPython, type TestServer } from './harness.js';
import type { RunningJupyter } from '../../../packages/jupyter-kernel/test/jupyter-servers.js';

export {
  connectionFileOf,
  enterpriseGatewayPython,
  freePort,
  stablePort,
  humanCellMarkers,
  humanExecute,
  startHumanExecute,
  startHumanKernel,
  startJupyter,
  tokenRest,
  watchKernel,
} from '../../../packages/jupyter-kernel/test/jupyter-servers.js';
export type { HumanWatch, JupyterServerKind, RunningJupyter } from '../../../packages/jupyter-kernel/test/jupyter-servers.js';

/** The flags that name a kernel on `server`. */
export type KernelFlags = [] | ['--kernel', string] | ['--notebook', string] | ['--kernel-name', string];

/** Starts the built server over stdio on a kernel of `server`, the token in JUPYTER_TOKEN, with a real SDK client (named `clientName`). */
export function startKernelServer(server: RunningJupyter, kernel: KernelFlags, env: Record<string, string> = {}, extraArgs: string[] = [], clientName?: string): Promise<TestServer> {
  return startServer({ JUPYTER_TOKEN: server.token, ...env }, ['--jupyter', server.url, ...kernel, ...extraArgs], clientName);
}

/** Runs the built binary to its end (bad flags, doctor) and returns its exit code and output. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): { status: number | null; stdout: string; stderr: string; ms: number } {
  const started = Date.now();
  const done = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
    input: '',
    env: { ...(process.env as Record<string, string>), IPYTHON_MCP_PYTHON: testPython(), JUPYTER_TOKEN: '', IPYTHON_MCP_JUPYTER_TOKEN: '', IPYTHON_MCP_JUPYTER_URL: '', ...env },
  });
  return { status: done.status, stdout: done.stdout, stderr: done.stderr, ms: Date.now() - started };
}

/** The kernels the server runs now (ids). */
export async function kernelIds(server: RunningJupyter): Promise<string[]> {
  const listed = await server.rest('GET', 'api/kernels');
  // A Kernel Gateway answers 403 here unless it was started with --KernelGatewayApp.list_kernels=True.
  if (listed.status !== 200 || !Array.isArray(listed.body)) throw new Error(`the ${server.kind} does not list its kernels (HTTP ${listed.status})`);
  return (listed.body as Array<{ id: string }>).map((kernel) => kernel.id);
}

/**
 * A TCP relay in front of the Jupyter server: ipython-mcp talks to the relay, and `drop()` cuts every connection
 * through it (the kernel's WebSocket among them) while the relay keeps accepting new ones, as a flaky network would.
 */
export async function relayTo(server: RunningJupyter): Promise<{ jupyter: RunningJupyter; drop: () => number; close: () => Promise<void> }> {
  const target = new URL(server.url);
  const sockets = new Set<Socket>();
  const relay: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const port = (relay.address() as { port: number }).port;
  const drop = () => {
    const count = sockets.size;
    for (const socket of sockets) socket.destroy();
    return count;
  };
  const close = () => new Promise<void>((resolve) => {
    drop();
    relay.close(() => resolve());
  });
  // The server's path is kept (a hub user's server is at /user/NAME/).
  return { jupyter: { ...server, url: `http://127.0.0.1:${port}${target.pathname}`, rest: server.rest, descendants: server.descendants, stop: server.stop }, drop, close };
}
