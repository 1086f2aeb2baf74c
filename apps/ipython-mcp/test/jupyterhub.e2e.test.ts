// ipython-mcp on a JupyterHub user's server, at the hub's defaults: a real JupyterHub (test .venv) with its
// configurable-http-proxy (devDependencies) and a local spawner on loopback (jupyterhub-harness.ts), the built binary
// over stdio with a real SDK client, and a token of the user's with `access:servers!user=NAME` from the hub's REST
// API. Attach by each kernel flag (and a named server); doctor fails where the attach would (a route that refuses
// WebSocket upgrades) and leaves no kernel behind; the proxy restarted, the hub restarted (its servers keep running)
// and every connection cut, each recovered with the names kept, the owned kernel included.
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { testPython } from '@ipython-mcp/test-support';
import { CLI, eventually, taggedProcesses, type TestServer } from './harness.js';
import { kernelIds, relayTo, runCli, startHumanKernel, startKernelServer, type KernelFlags, type RunningJupyter } from './jupyter-harness.js';
import { startHub, type RunningHub } from './jupyterhub-harness.js';

const TAG = randomUUID();
const BASE_ENV = {
  IPYTHON_MCP_TEST_RUN_TAG: TAG,
  IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '20',
  IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '20',
};

let hub: RunningHub;
let servers: TestServer[] = [];
/** Kernels the person started (REST): theirs; deleted after each test. */
let personKernels: string[] = [];

beforeAll(async () => {
  hub = await startHub();
}, 420_000);

afterEach(async () => {
  for (const server of servers) await server.close();
  servers = [];
  const left = await eventually(() => kernelIds(hub.server), (ids) => ids.every((id) => personKernels.includes(id)), 20_000);
  const leaked = left.filter((id) => !personKernels.includes(id));
  // Every kernel goes before the check: one test's leak must fail that test, not every test after it.
  for (const id of left) await hub.server.rest('DELETE', `api/kernels/${id}`);
  personKernels = [];
  expect(leaked).toEqual([]);
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
}, 60_000);

afterAll(async () => {
  await hub?.stop();
}, 60_000);

const body = (result: CallToolResult): Record<string, any> => (result.structuredContent ?? {}) as Record<string, any>;

async function attach(kernel: KernelFlags, server: RunningJupyter = hub.server, env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startKernelServer(server, kernel, { ...BASE_ENV, ...env });
  servers.push(started);
  return started;
}

async function value(agent: TestServer, code: string): Promise<unknown> {
  const answer = await agent.call('execute', { code });
  if (answer.isError === true) throw new Error(`execute failed: ${JSON.stringify(body(answer)).slice(0, 600)}`);
  return body(answer).result?.value;
}

/** Calls until one answers ok, waiting what the answer says (else 200 ms), as an agent would. */
async function untilOk(agent: TestServer, code: string, boundMs = 60_000): Promise<{ answer: CallToolResult; failed: string[] }> {
  const started = performance.now();
  const failed: string[] = [];
  for (;;) {
    const answer = await agent.call('execute', { code });
    if (answer.isError !== true) return { answer, failed };
    failed.push(String(body(answer).error?.code));
    if (performance.now() - started > boundMs) throw new Error(`no recovery within ${boundMs} ms: ${JSON.stringify(body(answer)).slice(0, 600)}\n${hub.log().slice(-3000)}`);
    const after = body(answer).error?.retry_after_ms;
    await new Promise((resolve) => setTimeout(resolve, typeof after === 'number' ? Math.min(after, 1_000) : 200));
  }
}

/** A notebook file on the user's server (contents API), as the person saved it. */
async function notebook(server: RunningJupyter): Promise<string> {
  const path = `hub-${randomUUID().slice(0, 8)}.ipynb`;
  const saved = await server.rest('PUT', `api/contents/${path}`, { type: 'notebook', content: { cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 } });
  expect(saved.status).toBe(201);
  return path;
}

/** Shuts down the notebook sessions a test left (an --notebook session is the person's, left running by design). */
async function closeSessions(server: RunningJupyter): Promise<void> {
  const sessions = await server.rest('GET', 'api/sessions');
  for (const session of (sessions.body as Array<{ id: string }>) ?? []) await server.rest('DELETE', `api/sessions/${session.id}`);
}

/**
 * An HTTP front for the hub that passes every REST request and refuses every WebSocket upgrade (403): what a
 * misconfigured ingress does, and what the hub's servers did to a token in the URL. REST checks pass there; the
 * kernel's channel does not open.
 */
async function refusingWebSockets(server: RunningJupyter): Promise<{ jupyter: RunningJupyter; close: () => Promise<void> }> {
  const target = new URL(server.url);
  const sockets = new Set<Socket>();
  // A TCP front that reads each connection's first request: an upgrade is answered 403, anything else is relayed.
  const front: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    client.once('data', (first: Buffer) => {
      if (/^upgrade:\s*websocket/im.test(first.toString('latin1'))) {
        client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return;
      }
      const upstream = connect(Number(target.port), target.hostname);
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      upstream.write(first);
      client.pipe(upstream).pipe(client);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as { port: number }).port;
  return {
    jupyter: { ...server, url: `http://127.0.0.1:${port}${target.pathname}`, rest: server.rest, descendants: server.descendants, stop: server.stop },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        front.close(() => resolve());
      }),
  };
}

/** The built binary run to its end without blocking this process (a front in this process relays for it). */
function runCliAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...(process.env as Record<string, string>), IPYTHON_MCP_PYTHON: testPython(), IPYTHON_MCP_JUPYTER_TOKEN: '', IPYTHON_MCP_JUPYTER_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('close', (status) => resolve({ status, stdout }));
  });
}

describe('attach at the hub’s defaults (token in the WebSocket upgrade’s Authorization header)', () => {
  it('--kernel ID, --notebook PATH and --kernel-name NAME each run the agent’s code on /user/NAME/', async () => {
    const kernelId = await startHumanKernel(hub.server);
    personKernels.push(kernelId);
    const byId = await attach(['--kernel', kernelId]);
    expect(await value(byId, 'x = 41\nx + 1')).toBe(42);
    const path = await notebook(hub.server);
    const byNotebook = await attach(['--notebook', path]);
    expect(await value(byNotebook, 'y = 6\ny * 7')).toBe(42);
    const byName = await attach(['--kernel-name', 'python3']);
    expect(await value(byName, 'z = 40\nz + 2')).toBe(42);
    expect((await byName.structured('runtime_status')).backend).toMatchObject({ kind: 'jupyter', policy: 'owned' });
    await byNotebook.close();
    await closeSessions(hub.server);
  });

  it('a named server /user/NAME/SERVER/', async () => {
    const named = await hub.namedServer('second');
    const agent = await attach(['--kernel-name', 'python3'], named);
    expect(await value(agent, '2 * 21')).toBe(42);
    await agent.close();
    expect(await eventually(() => kernelIds(named), (ids) => ids.length === 0, 20_000)).toEqual([]);
  });

  it('doctor opens the kernel channel: ok at the hub, FAIL where WebSocket upgrades are refused, and no kernel left', async () => {
    const good = runCli(['doctor', '--jupyter', hub.server.url, '--kernel-name', 'python3'], { JUPYTER_TOKEN: hub.server.token }, 90_000);
    expect(good.stdout).toMatch(/ok {3}kernel channel: /);
    expect(good.status).toBe(0);
    const front = await refusingWebSockets(hub.server);
    try {
      // Not runCli: its spawnSync would stop this process's event loop, and the front runs in it.
      const bad = await runCliAsync(['doctor', '--jupyter', front.jupyter.url, '--kernel-name', 'python3'], { JUPYTER_TOKEN: hub.server.token });
      expect(bad.stdout).toMatch(/ok {3}jupyter token: accepted/);
      expect(bad.stdout).toMatch(/FAIL kernel channel: /);
      expect(bad.status).toBe(1);
      // The attach fails where doctor did, and leaves no kernel behind either.
      const agent = await attach(['--kernel-name', 'python3'], front.jupyter, { IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '5' });
      const answer = await agent.call('execute', { code: '1' });
      expect(body(answer).error?.code).toBe('runtime_unavailable');
      await agent.close();
      servers = servers.filter((each) => each !== agent);
    } finally {
      await front.close();
    }
    expect(await eventually(() => kernelIds(hub.server), (ids) => ids.length === 0, 20_000)).toEqual([]);
  }, 240_000);
});

describe('the route away and back: the names kept, the owned kernel too', () => {
  for (const flag of ['--kernel-name', '--notebook'] as const) {
    it(`${flag}: the proxy restarted, with a call during the outage`, async () => {
      const agent = await attach(flag === '--notebook' ? ['--notebook', await notebook(hub.server)] : ['--kernel-name', 'python3']);
      expect(await value(agent, 'x = "kept"\nx')).toBe('kept');
      const kernelBefore = (await agent.structured('runtime_status')).backend.kernel_id;
      const restarted = hub.restartProxy();
      // A call while the proxy is down: answered (nothing run), not taken for a dead kernel.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const during = await agent.call('execute', { code: 'x' });
      const { downMs } = await restarted;
      const after = await untilOk(agent, 'x');
      console.log(`[measure] hub proxy restarted (${downMs} ms down), ${flag} -> during: ${during.isError ? body(during).error?.code : 'ok'}; after: ok, failed before: ${after.failed.join(', ') || 'none'}`);
      expect(body(after.answer).result.value).toBe('kept');
      const status = await agent.structured('runtime_status');
      expect(status.epoch).toBe(1);
      expect(status.backend.kernel_id).toBe(kernelBefore);
      await agent.close();
      if (flag === '--notebook') await closeSessions(hub.server);
    }, 120_000);
  }

  it('the hub restarted (its servers keep running): --kernel-name keeps its kernel and names', async () => {
    const agent = await attach(['--kernel-name', 'python3']);
    expect(await value(agent, 'x = 7\nx')).toBe(7);
    await hub.restartHub();
    const after = await untilOk(agent, 'x * 6');
    console.log(`[measure] hub restarted, --kernel-name -> ok, failed before: ${after.failed.join(', ') || 'none'}`);
    expect(body(after.answer).result.value).toBe(42);
    expect((await agent.structured('runtime_status')).epoch).toBe(1);
  }, 180_000);

  for (const flag of ['--kernel-name', '--kernel'] as const) {
    it(`${flag}: every connection cut; the first call after it answers within 1 s, names kept`, async () => {
      const relay = await relayTo(hub.server);
      try {
        let kernel: KernelFlags = ['--kernel-name', 'python3'];
        if (flag === '--kernel') {
          const kernelId = await startHumanKernel(hub.server);
          personKernels.push(kernelId);
          kernel = ['--kernel', kernelId];
        }
        const agent = await attach(kernel, relay.jupyter);
        expect(await value(agent, 'x = 5\nx')).toBe(5);
        expect(relay.drop()).toBeGreaterThan(0);
        const startedAt = performance.now();
        const answer = await agent.call('execute', { code: 'x + 1' });
        const tookMs = performance.now() - startedAt;
        console.log(`[measure] connections cut (hub), ${flag} -> first call answered in ${Math.round(tookMs)} ms: ${answer.isError ? body(answer).error?.code : 'ok'}`);
        expect(answer.isError ?? false).toBe(false);
        expect(body(answer).result.value).toBe(6);
        // A generous bound for a loaded machine; the route was back at once (only the connections were cut).
        expect(tookMs).toBeLessThan(1_000 * 3);
        await agent.close();
      } finally {
        await relay.close();
      }
    }, 120_000);
  }
});
