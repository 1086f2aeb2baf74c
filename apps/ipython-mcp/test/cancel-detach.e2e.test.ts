// A client's cancel of a call that detaches stops its cell, whenever the cancel comes (issue 51): before the detach,
// at it, as the handle is written, after the handle arrived. Real SDK clients over stdio on both protocol eras (the v1
// client on 2025-11-25, the v2 client pinned to 2026-07-28) and the v1 client over --http cancel a sleeping cell
// over a sweep of moments around the detach; each stop is one interrupt with the namespace kept, a name the cell
// would define later never appears, nothing is left running, a handle that reached the client reports the cell as
// cancelled by the client, and the server answers on. Then the MCP tasks of both eras, and the cancels that must do
// nothing. The outcome asserted is the same on either side of every race; only which side was taken varies.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, eventually, testPython, waitForExit } from './harness.js';
import { rawPost, startHttpServer, type HttpTestServer } from './http-harness.js';

type RequestId = string | number;

/** The server's settings for every client here: debug logs (one line per interrupt sent), room for long deadlines. */
const SERVER_ENV = { IPYTHON_MCP_LOG_LEVEL: 'debug', IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: '120', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '3' };
const serverEnv = (): Record<string, string> => ({ ...(process.env as Record<string, string>), IPYTHON_MCP_PYTHON: testPython(), ...SERVER_ENV });

const DETACH_MS = 300;
/** When the client cancels: ms after the call went out (around the detach at 300 ms), or after the handle arrived. */
type Plan = { after: 'sent'; ms: number } | { after: 'handle'; ms: number };
const AROUND_DETACH: Plan[] = [20, 200, 270, 290, 297, 299, 300, 301, 303, 310, 330, 400].map((ms) => ({ after: 'sent', ms }));
const AFTER_HANDLE: Plan[] = [0, 1, 5, 20, 100].map((ms) => ({ after: 'handle', ms }));
const SWEEP = [...AROUND_DETACH, ...AFTER_HANDLE];
const HTTP_SWEEP: Plan[] = [...[200, 299, 300, 301, 330].map((ms) => ({ after: 'sent' as const, ms })), ...[0, 5, 50].map((ms) => ({ after: 'handle' as const, ms }))];

/** A connected client, whichever SDK and transport. */
interface Driver {
  stderr(): string;
  /** Calls execute; `sent` resolves with the request's id as it goes out; `answer` with the result, or 'cancelled' once the SDK gave up on it. */
  start(args: Record<string, unknown>): { sent: Promise<RequestId>; answer: Promise<CallToolResult | 'cancelled'>; abort(): void };
  /** The client's own `notifications/cancelled` of `requestId` (as a client sends it when a cancel crosses the answer). */
  cancel(requestId: RequestId): Promise<void>;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Wraps `transport.send` so the next tools/call's id is known as the SDK hands it to the transport (over HTTP the
 * send settles only with the POST's answer, so the clock starts here, not there).
 */
function watchCalls(transport: { send: (message: any, options?: any) => Promise<void> }): () => Promise<RequestId> {
  let waiter: ((id: RequestId) => void) | undefined;
  const send = transport.send.bind(transport);
  transport.send = (message: any, options?: any) => {
    if (waiter !== undefined && message.method === 'tools/call') {
      waiter(message.id as RequestId);
      waiter = undefined;
    }
    return send(message, options);
  };
  return () => new Promise((resolve) => (waiter = resolve));
}

async function legacyStdio(): Promise<Driver> {
  const transport = new LegacyStdioClientTransport({ command: process.execPath, args: [CLI], env: serverEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new LegacyClient({ name: 'cancel-detach', version: '1' });
  await client.connect(transport);
  await client.listTools();
  const pid = transport.pid as number;
  return legacyDriver(client, transport, () => stderr, async () => {
    await client.close();
    await waitForExit(pid, 10_000);
  });
}

async function legacyHttp(server: HttpTestServer): Promise<Driver> {
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } });
  const client = new LegacyClient({ name: 'cancel-detach', version: '1' });
  await client.connect(transport);
  await client.listTools();
  return legacyDriver(client, transport, server.stderr, async () => {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  });
}

function legacyDriver(client: LegacyClient, transport: { send: (message: any, options?: any) => Promise<void> }, stderr: () => string, close: () => Promise<void>): Driver {
  const nextCall = watchCalls(transport);
  return {
    stderr,
    start(args) {
      const controller = new AbortController();
      const sent = nextCall();
      const answer = client
        .callTool({ name: 'execute', arguments: args }, undefined, { signal: controller.signal, timeout: 120_000 })
        .then((result) => result as CallToolResult, () => 'cancelled' as const);
      return { sent, answer, abort: () => controller.abort('the person pressed Esc') };
    },
    cancel: (requestId) => client.notification({ method: 'notifications/cancelled', params: { requestId, reason: 'the person pressed Esc' } }),
    call: async (name, args) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult,
    close,
  };
}

async function modernStdio(): Promise<Driver> {
  const transport = new ModernStdioClientTransport({ command: process.execPath, args: [CLI], env: serverEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new ModernClient({ name: 'cancel-detach', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as never);
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  await client.listTools();
  const pid = transport.pid as number;
  const nextCall = watchCalls(transport as never);
  return {
    stderr: () => stderr,
    start(args) {
      const controller = new AbortController();
      const sent = nextCall();
      const answer = client
        .callTool({ name: 'execute', arguments: args }, { signal: controller.signal, timeout: 120_000 })
        .then((result) => result as CallToolResult, () => 'cancelled' as const);
      return { sent, answer, abort: () => controller.abort('the person pressed Esc') };
    },
    cancel: (requestId) => client.notification({ method: 'notifications/cancelled', params: { requestId, reason: 'the person pressed Esc' } } as never),
    call: async (name, args) => (await client.callTool({ name, arguments: args }, { timeout: 120_000 })) as CallToolResult,
    close: async () => {
      await client.close();
      await waitForExit(pid, 10_000);
    },
  };
}

/** The server's JSON log lines of `event` for request `requestId`. */
function logged(stderr: string, event: string, requestId?: RequestId): Record<string, any>[] {
  return stderr
    .split('\n')
    .filter((line) => line.includes(`"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((line) => requestId === undefined || line.requestId === requestId);
}

const structured = (result: CallToolResult) => result.structuredContent as Record<string, any>;

/**
 * One cancel of a sleeping cell that detaches at 300 ms, as `plan` says; then everything a person expects of it.
 * Returns whether the handle reached the client (which side of the race this case took), and whether the cell ran.
 */
async function cancelOnce(driver: Driver, index: number, plan: Plan): Promise<{ handled: boolean; ran: boolean }> {
  const label = `case ${index}: cancel ${plan.ms} ms after the ${plan.after === 'sent' ? 'call went out' : 'handle arrived'}`;
  const call = driver.start({ code: `import time\ntime.sleep(600)\nlater_${index} = 1`, detach_after_seconds: DETACH_MS / 1000, timeout_seconds: 120 });
  const requestId = await call.sent;
  let arrived: CallToolResult | undefined;
  const answer = call.answer.then((result) => {
    if (result !== 'cancelled') arrived = result;
    return result;
  });
  if (plan.after === 'sent') {
    await sleep(plan.ms);
    // Still waiting: the SDK's own cancel (it sends notifications/cancelled); answered: the client's cancel after it.
    if (arrived === undefined) call.abort();
    else await driver.cancel(requestId);
  } else {
    const result = await answer;
    expect(result, label).not.toBe('cancelled');
    if (plan.ms > 0) await sleep(plan.ms);
    await driver.cancel(requestId);
  }
  // The server's outcome of that request: one interrupt, cancelled, the namespace kept; or, for a cancel a loaded
  // server read together with its call, cancelled before it ran (no interrupt to send).
  const [outcome] = await eventually(
    async () => [...logged(driver.stderr(), 'op.interrupted', requestId), ...logged(driver.stderr(), 'op.done', requestId)],
    (lines) => lines.length >= 1,
    15_000,
  );
  const ran = outcome?.interruption !== null;
  if (ran) expect(outcome, `${label}: the server's outcome (none: the cell runs on)`).toMatchObject({ interruption: 'cancelled', namespace: 'preserved', code: 'operation_cancelled' });
  else expect(outcome, `${label}: cancelled before it ran`).toMatchObject({ ok: false, code: 'operation_cancelled' });
  expect(logged(driver.stderr(), 'op.interrupt_sent', requestId), label).toHaveLength(ran ? 1 : 0);
  await answer;
  const handle = arrived === undefined ? undefined : (structured(arrived).job as string | undefined);
  if (arrived !== undefined) expect(structured(arrived), label).toMatchObject({ status: 'running', job: expect.any(String) });
  if (handle !== undefined) {
    // The handle reports the cell as cancelled by the client, naming the request.
    const done = await driver.call('job', { job: handle, wait_seconds: 30 });
    expect(done.isError, label).toBe(true);
    const error = structured(done).error;
    expect(error, label).toMatchObject({ code: 'operation_cancelled', details: { stopped_by: 'client' } });
    expect(error.message, label).toMatch(new RegExp(`^cancelled by the client \\(request ${requestId}: the person pressed Esc\\): the operation was cancelled; state was preserved`));
  }
  // Nothing runs or waits, and the namespace is the one from before: the cell never reached its next line.
  const status = structured(await driver.call('runtime_status', {}));
  expect(status.active ?? false, label).toBe(false);
  expect(status.queue_depth ?? 0, label).toBe(0);
  const check = structured(await driver.call('execute', { code: `["later_${index}" in globals(), kept]` }));
  expect(check.result.value, label).toEqual([false, 'before']);
  return { handled: handle !== undefined, ran };
}

/** The sweep on one connected client: every plan, then what must hold over all of them. */
async function sweep(driver: Driver, plans: Plan[]): Promise<void> {
  await driver.call('execute', { code: 'kept = "before"' });
  const sides: string[] = [];
  let ran = 0;
  for (const [index, plan] of plans.entries()) {
    const outcome = await cancelOnce(driver, index, plan);
    sides.push(`${plan.after}+${plan.ms}:${outcome.handled ? 'handle' : 'no handle'}${outcome.ran ? '' : ' (never ran)'}`);
    if (outcome.ran) ran += 1;
  }
  console.log(`[sides] ${sides.join(' ')}`);
  // One interrupt per cancelled cell that ran and no more; no worker was replaced; still epoch 1, ready.
  expect(logged(driver.stderr(), 'op.interrupt_sent')).toHaveLength(ran);
  expect(logged(driver.stderr(), 'worker.replaced')).toEqual([]);
  expect(structured(await driver.call('runtime_status', {}))).toMatchObject({ epoch: 1, state: 'ready' });
}

/** The cancels that must do nothing: an unknown request id, one whose call finished, one whose detached cell ended. */
async function cancelsOfNothing(driver: Driver): Promise<void> {
  await driver.call('execute', { code: 'kept = "before"' });
  const interrupts = logged(driver.stderr(), 'op.interrupt_sent').length;
  const finished = driver.start({ code: '6 * 7' });
  const finishedId = await finished.sent;
  expect(structured((await finished.answer) as CallToolResult).result.value).toBe(42);
  const detached = driver.start({ code: 'import time\ntime.sleep(1)\nended = "yes"', detach_after_seconds: 0.2 });
  const detachedId = await detached.sent;
  const handle = structured((await detached.answer) as CallToolResult).job as string;
  const done = structured(await driver.call('job', { job: handle, wait_seconds: 30 }));
  expect(done.status ?? 'ok').toBe('ok');
  for (const requestId of [finishedId, detachedId, 999_999, 'never-sent']) await driver.cancel(requestId);
  // A call after them runs, in order behind them, and nothing was interrupted.
  expect(structured(await driver.call('execute', { code: '(kept, ended)' })).result.value).toEqual(['before', 'yes']);
  expect(logged(driver.stderr(), 'op.interrupt_sent')).toHaveLength(interrupts);
}

describe.each([
  ['stdio, v1 SDK client, 2025-11-25', legacyStdio],
  ['stdio, v2 SDK client, 2026-07-28', modernStdio],
] as const)('%s', (_label, connect) => {
  let driver: Driver;
  beforeAll(async () => {
    driver = await connect();
  }, 60_000);
  afterAll(async () => {
    await driver?.close();
  });

  it('a cancel before, at or after the detach stops the cell: one interrupt, the namespace kept, nothing left running', async () => {
    await sweep(driver, SWEEP);
  }, 180_000);

  it('a cancel sent twice after the handle is one interrupt', async () => {
    const before = logged(driver.stderr(), 'op.interrupt_sent').length;
    const call = driver.start({ code: 'import time\ntime.sleep(600)', detach_after_seconds: 0.2, timeout_seconds: 120 });
    const requestId = await call.sent;
    const look = structured((await call.answer) as CallToolResult);
    await Promise.all([driver.cancel(requestId), driver.cancel(requestId)]);
    const done = structured(await driver.call('job', { job: look.job, wait_seconds: 30 }));
    expect(done.error).toMatchObject({ code: 'operation_cancelled', details: { stopped_by: 'client' } });
    await driver.cancel(requestId);
    expect(structured(await driver.call('execute', { code: 'kept' })).result.value).toBe('before');
    expect(logged(driver.stderr(), 'op.interrupt_sent')).toHaveLength(before + 1);
  }, 60_000);

  it('a cancel of an unknown, a finished or an ended request does nothing', async () => {
    await cancelsOfNothing(driver);
  }, 60_000);
});

describe('--http, v1 SDK client, 2025-11-25', () => {
  let http: HttpTestServer;
  let driver: Driver;
  beforeAll(async () => {
    http = await startHttpServer(SERVER_ENV);
    driver = await legacyHttp(http);
  }, 60_000);
  afterAll(async () => {
    await driver?.close();
    expect(await http?.stop()).toBe(0);
  });

  it('a cancel before, at or after the detach stops the cell: one interrupt, the namespace kept, nothing left running', async () => {
    await sweep(driver, HTTP_SWEEP);
  }, 120_000);

  it('a cancel of an unknown, a finished or an ended request does nothing', async () => {
    await cancelsOfNothing(driver);
  }, 60_000);
});

describe('--http, 2026-07-28 on the wire (stateless: closing the stream is the cancel)', () => {
  let http: HttpTestServer;
  let nextId = 1;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'wire', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  const headers = (method: string, name: string) => ({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, 'Mcp-Name': name });
  const body = (id: number, method: string, params: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
  const execute = async (code: string): Promise<Record<string, any>> => {
    const answer = await rawPost(http, body(nextId++, 'tools/call', { name: 'execute', arguments: { code } }), headers('tools/call', 'execute'), '/wire');
    const json = answer.contentType.includes('text/event-stream') ? answer.text.split('\n').find((line) => line.startsWith('data: '))?.slice(6) : answer.text;
    return JSON.parse(json as string) as Record<string, any>;
  };
  beforeAll(async () => {
    http = await startHttpServer(SERVER_ENV);
  }, 60_000);
  afterAll(async () => {
    expect(await http?.stop()).toBe(0);
  });

  it('a POST whose stream closes before the detach interrupts its cell once and keeps the namespace', async () => {
    await execute('kept = "before"');
    for (const closeAtMs of [20, 100, 200]) {
      const id = nextId++;
      const payload = body(id, 'tools/call', { name: 'execute', arguments: { code: `import time\ntime.sleep(600)\nlater_${id} = 1`, detach_after_seconds: DETACH_MS / 1000, timeout_seconds: 120 } });
      const target = new URL(`${http.url}/wire`);
      const post = httpRequest({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${http.token}`, ...headers('tools/call', 'execute') },
      });
      post.on('error', () => undefined);
      post.end(payload);
      await sleep(closeAtMs);
      post.destroy();
      const [outcome] = await eventually(
        async () => logged(http.stderr(), 'op.interrupted', id),
        (lines) => lines.length >= 1,
        15_000,
      );
      expect(outcome, `closed at ${closeAtMs} ms`).toMatchObject({ interruption: 'cancelled', namespace: 'preserved' });
      expect(logged(http.stderr(), 'op.interrupt_sent', id)).toHaveLength(1);
      const check = await execute(`["later_${id}" in globals(), kept]`);
      expect(check.result.structuredContent.result.value).toEqual([false, 'before']);
    }
  }, 60_000);

  it('an answer written in full is the client\'s: the end of its request does not stop the cell that became a task', async () => {
    const created = await rawPost(http, body(nextId++, 'tools/call', { name: 'execute', arguments: { code: 'import time\ntime.sleep(1)\nfinished = 1', detach_after_seconds: 0.2 } }), headers('tools/call', 'execute'), '/wire');
    expect(created.text).toContain('"resultType":"task"');
    const check = await execute('finished');
    expect(check.result.structuredContent.result.value).toBe(1);
  }, 60_000);
});

describe('MCP tasks', () => {
  it('2025-11-25: the notifications/cancelled of a task-augmented call stops its task, which says the client cancelled it', async () => {
    const transport = new LegacyStdioClientTransport({ command: process.execPath, args: [CLI], env: serverEnv(), stderr: 'ignore' });
    const client = new LegacyClient({ name: 'cancel-detach', version: '1' });
    await client.connect(transport);
    const pid = transport.pid as number;
    try {
      await client.callTool({ name: 'execute', arguments: { code: 'kept = "before"' } });
      const nextCall = watchCalls(transport);
      const sent = nextCall();
      const created = await client.request({ method: 'tools/call', params: { name: 'execute', arguments: { code: 'import time\ntime.sleep(600)\nlater = 1' } } }, CreateTaskResultSchema, { task: {} });
      const requestId = await sent;
      await client.notification({ method: 'notifications/cancelled', params: { requestId } });
      let task = await client.experimental.tasks.getTask(created.task.taskId);
      for (let round = 0; task.status === 'working' && round < 300; round += 1) {
        await sleep(50);
        task = await client.experimental.tasks.getTask(created.task.taskId);
      }
      expect(task.status).toBe('cancelled');
      expect(task.statusMessage).toBe(`cancelled by the client (request ${requestId}): the call was interrupted (the namespace is kept); tasks/result returns its result`);
      const result = (await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
      expect(structured(result).error).toMatchObject({ code: 'operation_cancelled', details: { stopped_by: 'client' } });
      const check = (await client.callTool({ name: 'execute', arguments: { code: '["later" in globals(), kept]' } })) as CallToolResult;
      expect(structured(check).result.value).toEqual([false, 'before']);
    } finally {
      await client.close();
      await waitForExit(pid, 10_000);
    }
  }, 60_000);

  it('2026-07-28: the notifications/cancelled of a call that became a task stops it; tasks/get says the client cancelled it', async () => {
    const wire = new WireClient();
    try {
      await wire.request('tools/call', { name: 'execute', arguments: { code: 'kept = "before"' } });
      const { id, answer } = wire.send('tools/call', { name: 'execute', arguments: { code: 'import time\ntime.sleep(600)\nlater = 1', detach_after_seconds: 0.3 } });
      const created = await answer;
      expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
      const taskId = created.result.taskId as string;
      wire.notify('notifications/cancelled', { requestId: id, reason: 'Esc' });
      let got = await wire.request('tasks/get', { taskId });
      for (let round = 0; got.result?.status === 'working' && round < 300; round += 1) {
        await sleep(50);
        got = await wire.request('tasks/get', { taskId });
      }
      expect(got.result).toMatchObject({ status: 'cancelled', statusMessage: `cancelled by the client (request ${id}: Esc): the call was interrupted (the namespace is kept)` });
      const check = await wire.request('tools/call', { name: 'execute', arguments: { code: '["later" in globals(), kept]' } });
      expect(check.result.structuredContent.result.value).toEqual([false, 'before']);
    } finally {
      await wire.close();
    }
  }, 60_000);
});

/** A raw 2026-07-28 stdio client that declares the tasks extension (the v2 SDK client refuses task results). */
class WireClient {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly waiting = new Map<number, (message: Record<string, any>) => void>();
  private nextId = 1;
  private readonly meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'wire', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };

  constructor() {
    this.child = spawn(process.execPath, [CLI], { env: serverEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as Record<string, any>;
      if (typeof message.id === 'number') this.waiting.get(message.id)?.(message);
    });
  }

  send(method: string, params: Record<string, unknown>): { id: number; answer: Promise<Record<string, any>> } {
    const id = this.nextId++;
    const answer = new Promise<Record<string, any>>((resolve) => this.waiting.set(id, resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: this.meta } })}\n`);
    return { id, answer };
  }

  request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
    return this.send(method, params).answer;
  }

  notify(method: string, params: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta: this.meta } })}\n`);
  }

  async close(): Promise<void> {
    const pid = this.child.pid as number;
    this.child.stdin.end();
    await waitForExit(pid, 10_000);
  }
}
