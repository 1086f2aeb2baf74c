// Every kernel ipython-mcp starts is shut down, whatever the route says meanwhile: against a real `jupyter server`
// behind a relay that plays a hub's proxy restarting (WebSocket upgrades held, a "not found" page of its own), a
// start request cut after it reached the server, and a server still making a kernel (it answers 404 for it).
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jupyterKernelBackend, shutdownKernel } from '../src/index.js';
import { startHumanKernel, startJupyter } from './jupyter-servers.js';
import type { RunningJupyter } from './jupyter-servers.js';
import { startOptions } from './worker-options.js';

let server: RunningJupyter;
let relay: Relay;

beforeAll(async () => {
  server = await startJupyter('server');
});

afterEach(async () => {
  await relay?.close();
  for (const id of await kernelIds()) await server.rest('DELETE', `api/kernels/${id}`);
});

afterAll(async () => {
  await server.stop();
});

async function kernelIds(): Promise<string[]> {
  const listed = await server.rest('GET', 'api/kernels');
  return (listed.body as Array<{ id: string }>).map((kernel) => kernel.id);
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, boundMs = 20_000): Promise<T> {
  const deadline = performance.now() + boundMs;
  for (;;) {
    const value = await read();
    if (done(value) || performance.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** How the relay answers one request instead of passing it on; undefined passes it on. */
type Answer = 'hub-not-found' | 'start-pending' | 'cut-after-server' | undefined;

/** A relay in front of the server: REST passed on unless `answer` says otherwise; WebSocket upgrades held unanswered. */
interface Relay {
  readonly url: string;
  /** The requests it saw, as `METHOD path`. */
  readonly seen: string[];
  answer: (method: string, path: string) => Answer;
  close(): Promise<void>;
}

async function startRelay(): Promise<Relay> {
  const target = new URL(server.url);
  const held = new Set<Socket>();
  const seen: string[] = [];
  const relayed: Relay = { url: '', seen, answer: () => undefined, close: async () => undefined };
  const pass = (incoming: IncomingMessage, outgoing: ServerResponse, cut: boolean): void => {
    const upstream = request({ host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
      if (cut) {
        // The server made the kernel; its answer is lost on the way back (a proxy killed mid-request).
        answer.resume();
        answer.once('end', () => outgoing.socket?.destroy());
        return;
      }
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    upstream.once('error', () => outgoing.socket?.destroy());
    incoming.pipe(upstream);
  };
  const http: Server = createServer((incoming, outgoing) => {
    const method = incoming.method ?? 'GET';
    const path = new URL(incoming.url ?? '/', 'http://relay').pathname;
    seen.push(`${method} ${path}`);
    const answer = relayed.answer(method, path);
    if (answer === 'hub-not-found') {
      // What a hub answers for a user's server while the proxy has no route to it yet: its own HTML page.
      incoming.resume();
      outgoing.writeHead(404, { 'Content-Type': 'text/html' }).end('<html><body>404 : Not Found</body></html>');
    } else if (answer === 'start-pending') {
      // What jupyter_server answers for a kernel whose start is still under way.
      incoming.resume();
      outgoing.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: 'Kernel does not exist', reason: null }));
    } else {
      pass(incoming, outgoing, answer === 'cut-after-server');
    }
  });
  // The proxy is away for the channels: an upgrade is never answered.
  http.on('upgrade', (incoming: IncomingMessage, socket: Socket) => {
    seen.push(`UPGRADE ${new URL(incoming.url ?? '/', 'http://relay').pathname}`);
    held.add(socket);
    socket.once('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return Object.assign(relayed, {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    close: async () => {
      for (const socket of held) socket.destroy();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  });
}

describe('every kernel started is shut down', () => {
  it('a kernel still opening its channels when the backend closes is shut down at once, not after the connect bound', async () => {
    relay = await startRelay();
    const backend = jupyterKernelBackend({ server: { url: relay.url, token: server.token }, target: { kernelName: 'python3' } });
    const before = await kernelIds();
    const worker = backend.start(startOptions());
    worker.ready.catch(() => undefined);
    // The server made the kernel; its channels wait for a proxy that holds every upgrade.
    const made = await until(kernelIds, (ids) => ids.some((id) => !before.includes(id)));
    const kernelId = made.find((id) => !before.includes(id));
    expect(kernelId).toBeDefined();
    await until(async () => relay.seen.some((line) => line.startsWith('UPGRADE') && line.endsWith('/channels')), Boolean);
    const startedAt = performance.now();
    // A client gives a closing server about 4 s before it kills it: the shutdown must be sent well within that.
    const bound = new Promise<'bound'>((resolve) => setTimeout(() => resolve('bound'), 3_000).unref());
    expect(await Promise.race([backend.close().then(() => 'closed' as const), bound])).toBe('closed');
    expect(performance.now() - startedAt).toBeLessThan(3_000);
    expect(await kernelIds()).not.toContain(kernelId);
    worker.kill();
    await worker.exited;
  });

  it("a hub's own not-found page is not the kernel gone: the shutdown is asked again until the server answers", async () => {
    relay = await startRelay();
    const kernelId = await startHumanKernel(server);
    let pages = 3;
    relay.answer = (method) => (method === 'DELETE' && pages-- > 0 ? 'hub-not-found' : undefined);
    await shutdownKernel({ url: relay.url, token: server.token }, kernelId);
    expect(relay.seen.filter((line) => line.startsWith('DELETE')).length).toBe(4);
    expect(await kernelIds()).not.toContain(kernelId);
  });

  it('a start request cut after it reached the server, the kernel still being made at close: shut down, not taken for gone', async () => {
    relay = await startRelay();
    const backend = jupyterKernelBackend({ server: { url: relay.url, token: server.token }, target: { kernelName: 'python3' } });
    const before = await kernelIds();
    let pending = 2;
    relay.answer = (method, path) => {
      if (method === 'POST' && path.endsWith('/api/kernels')) return 'cut-after-server';
      // The server still making the kernel answers 404 for it (jupyter_server registers a kernel once it started).
      if (method === 'DELETE' && pending-- > 0) return 'start-pending';
      return undefined;
    };
    const worker = backend.start(startOptions());
    await expect(worker.ready).rejects.toThrow();
    const made = await until(kernelIds, (ids) => ids.some((id) => !before.includes(id)));
    const kernelId = made.find((id) => !before.includes(id));
    expect(kernelId).toBeDefined();
    await backend.close();
    expect(relay.seen.filter((line) => line.startsWith('DELETE')).length).toBe(3);
    expect(await kernelIds()).not.toContain(kernelId);
    await worker.exited;
  });
});
