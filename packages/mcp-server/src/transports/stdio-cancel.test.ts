// The client's cancel of a call that detached, at moments a real pipe reaches only by chance, placed exactly: the
// server wired as serveStdio wires it (connectEras: the era router, the connection's RequestJobs), a v1 SDK client on
// an in-memory transport, and a worker with no Python whose cell sleeps until it is interrupted (and counts the
// interrupts). The e2e sweep over real stdio is apps/ipython-mcp/test/cancel-detach.e2e.test.ts.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ChannelWorker, InMemoryChannel } from '@ipython-mcp/worker-supervisor';
import { afterEach, describe, expect, it } from 'vitest';
import { createIpythonMcpServer, type IpythonMcpServer } from '../server/index.js';
import { defaultSettings } from '../settings/index.js';
import { connectEras } from './stdio.js';

type Message = Record<string, unknown> & { type: string };

/** The far end of the worker: `sleep` runs until interrupted; every other cell answers at once. */
function sleepingWorker(): { start: () => ChannelWorker; interrupts: number[]; executes: string[] } {
  const interrupts: number[] = [];
  const executes: string[] = [];
  return {
    interrupts,
    executes,
    start: () => {
      const [near, far] = InMemoryChannel.createLinkedPair();
      let sleeping: number | undefined;
      const answer = (id: unknown, body: Record<string, unknown>) => far.send({ type: 'response', id, ...body });
      far.onmessage = (raw) => {
        const message = raw as Message;
        if (message.type === 'shutdown') return far.close();
        if (message.type === 'interrupt') {
          interrupts.push(message.id as number);
          if (message.id === sleeping) {
            sleeping = undefined;
            answer(message.id, { ok: false, error: { code: 'operation_cancelled', message: 'KeyboardInterrupt' } });
          }
          return;
        }
        if (message.type !== 'request') return;
        if (message.op === 'execute') executes.push(String((message.params as { code?: unknown }).code));
        if (message.op === 'execute' && (message.params as { code?: unknown }).code === 'sleep') {
          sleeping = message.id as number;
          return;
        }
        if (message.op === 'discover') return answer(message.id, { ok: true, result: { revision: 0, tools: [], stale: [] } });
        if (message.op === 'execute') return answer(message.id, { ok: true, result: { status: 'ok', stdout: '', stderr: '', result: null, execution_count: 1 } });
        answer(message.id, { ok: true, result: { status: 'ok' } });
      };
      return new ChannelWorker(near);
    },
  };
}

const servers: IpythonMcpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/**
 * A server and a v1 client; `beforeAnswer(message, deliver)` sees each message the server writes before the client
 * does, and may put a client message into the server first (`deliver`), as a cancel that crosses it on the wire.
 */
async function connected(beforeAnswer: (message: JSONRPCMessage, deliver: (message: JSONRPCMessage) => void) => void) {
  const worker = sleepingWorker();
  const instance = createIpythonMcpServer({
    python: 'unused',
    settings: { ...defaultSettings(), memoryLimitMb: null, interruptionGraceSeconds: 2 },
    warmStandby: false,
    backend: { name: 'sleeping', capabilities: new Set(), start: worker.start },
  });
  servers.push(instance);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const send = serverSide.send.bind(serverSide);
  serverSide.send = async (message, options) => {
    beforeAnswer(message, (fromClient) => serverSide.onmessage?.(fromClient));
    return send(message, options);
  };
  await connectEras(instance, serverSide);
  const client = new Client({ name: 'stdio-cancel', version: '0' });
  await client.connect(clientSide);
  return { client, instance, interrupts: worker.interrupts, executes: worker.executes, serverSide };
}

const cancel = (requestId: unknown): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'Esc' } }) as JSONRPCMessage;
const isAnswer = (message: JSONRPCMessage): message is JSONRPCMessage & { id: number; result: Record<string, any> } => 'result' in message;

/** Waits until `check` holds, turn by turn (no clock: the in-memory parts answer within a few turns). */
async function until(check: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000 && !check(); turn += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

describe('a cancel that crosses the handle', () => {
  it('put into the server while it writes the handle (the SDK already past its own check): the cell stops once', async () => {
    let crossed: number | undefined;
    const { client, instance, interrupts } = await connected((message, deliver) => {
      if (isAnswer(message) && message.result.structuredContent?.status === 'running') {
        crossed = message.id;
        deliver(cancel(message.id));
      }
    });
    const look = (await client.callTool({ name: 'execute', arguments: { code: 'sleep', detach_after_seconds: 0.05 } })).structuredContent as Record<string, any>;
    expect(look).toMatchObject({ status: 'running', job: expect.any(String) });
    expect(crossed).toBeDefined();
    await until(() => interrupts.length > 0);
    const done = (await client.callTool({ name: 'job', arguments: { job: look.job, wait_seconds: 10 } })).structuredContent as Record<string, any>;
    expect(done.error).toMatchObject({ code: 'operation_cancelled', details: { stopped_by: 'client' } });
    expect(done.error.message).toBe(`cancelled by the client (request ${crossed}: Esc): the operation was cancelled; state was preserved`);
    expect(interrupts).toHaveLength(1);
    expect(instance.calls.size).toBe(0);
  });

  it('after the handle arrived, in the same turn: the cell stops once; a second cancel and one of another id do nothing', async () => {
    let answered: number | undefined;
    const { client, instance, interrupts } = await connected((message) => {
      if (isAnswer(message) && message.result.structuredContent?.status === 'running') answered = message.id;
    });
    const look = (await client.callTool({ name: 'execute', arguments: { code: 'sleep', detach_after_seconds: 0.05 } })).structuredContent as Record<string, any>;
    expect(instance.calls.size).toBe(1);
    await client.notification({ method: 'notifications/cancelled', params: { requestId: answered as number, reason: 'Esc' } });
    await client.notification({ method: 'notifications/cancelled', params: { requestId: answered as number } });
    await client.notification({ method: 'notifications/cancelled', params: { requestId: 99_999 } });
    await until(() => interrupts.length > 0);
    const done = (await client.callTool({ name: 'job', arguments: { job: look.job, wait_seconds: 10 } })).structuredContent as Record<string, any>;
    expect(done.error.message).toMatch(new RegExp(`^cancelled by the client \\(request ${answered}: Esc\\)`));
    expect(interrupts).toHaveLength(1);
    expect(instance.calls.size).toBe(0);
  });

  it('a call that ends before its detach holds nothing, and a later cancel of it does nothing', async () => {
    let answered: number | undefined;
    const { client, instance, interrupts } = await connected((message) => {
      if (isAnswer(message) && message.result.structuredContent !== undefined) answered = message.id;
    });
    const result = (await client.callTool({ name: 'execute', arguments: { code: '1', detach_after_seconds: 5 } })).structuredContent as Record<string, any>;
    expect(result.status ?? 'ok').toBe('ok');
    expect(instance.calls.size).toBe(0);
    await client.notification({ method: 'notifications/cancelled', params: { requestId: answered as number } });
    expect((await client.callTool({ name: 'execute', arguments: { code: '2' } })).isError).toBeFalsy();
    expect(interrupts).toEqual([]);
  });
});

describe('a cancel read together with its call', () => {
  it('in the same turn as the call (a loaded server reads both from one chunk): the cell never runs on; the next call runs', async () => {
    const { client, serverSide, interrupts, executes } = await connected(() => undefined);
    // The call and its cancel go into the server one after the other, in one turn, as one read of stdin gives them.
    const call = { jsonrpc: '2.0', id: 9_001, method: 'tools/call', params: { name: 'execute', arguments: { code: 'sleep', detach_after_seconds: 0.05 } } } as JSONRPCMessage;
    serverSide.onmessage?.(call);
    serverSide.onmessage?.(cancel(9_001));
    // Either it never ran, or it ran and was interrupted once; either way nothing holds the queue.
    const next = await client.callTool({ name: 'execute', arguments: { code: '2' } });
    expect(next.isError).toBeFalsy();
    expect(executes.at(-1)).toBe('2');
    expect(interrupts.length).toBe(executes.includes('sleep') ? 1 : 0);
  });
});
