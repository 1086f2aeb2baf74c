// A namespace's narrow options, its restore follow-up, and the tool caller's refusals before admission, over a worker
// backend with no Python (a recording in-memory worker).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { StateReport } from '@ipython-mcp/protocol';
import { ChannelWorker, InMemoryChannel, type RuntimeStatus } from '@ipython-mcp/worker-supervisor';
import { afterEach, describe, expect, it } from 'vitest';
import { createIpythonMcpServer, namespaceOptionsOf, type IpythonMcpServer } from './namespace.js';
import { defaultSettings } from '../settings/index.js';
import { RestoreFollowUp } from '../tools/index.js';

describe('namespaceOptionsOf', () => {
  it('passes no listener, token, TLS or HTTP setting to a namespace', () => {
    const settings = { ...defaultSettings(), httpMaxSessions: 7, maxNamespaces: 3 };
    const http = { python: 'py', settings, host: '127.0.0.1', port: 0, token: 'SECRET-TOKEN', tls: { cert: 'C', key: 'K' }, allowedHosts: ['h'] };
    const narrowed = namespaceOptionsOf(http);
    expect(JSON.stringify(narrowed)).not.toMatch(/SECRET-TOKEN|allowedHosts|"tls"|"port"|"host"/);
    expect(narrowed.settings).not.toHaveProperty('httpMaxSessions');
    expect(narrowed.settings).not.toHaveProperty('maxNamespaces');
    expect(narrowed.settings.maxOperationTimeoutSeconds).toBe(settings.maxOperationTimeoutSeconds);
    expect(narrowed.python).toBe('py');
  });
});

function report(overrides: Partial<StateReport> = {}): StateReport {
  return { kind: 'restore', ok: true, error: null, names: ['a', 'b'], names_count: 2, skipped: [], skipped_count: 0, tools: [], bytes: 10, ms: 1, ...overrides };
}

function statusWith(lastRestore: StateReport | null): { status: () => RuntimeStatus } {
  return { status: () => ({ snapshot: { file: 'f', lastRestore, lastSave: null } }) as RuntimeStatus };
}

describe('RestoreFollowUp', () => {
  it('owes the restore line once, to the first cell result on the first worker', () => {
    const owed = new RestoreFollowUp(statusWith(report()), true);
    expect(owed.takeLine(1)).toMatch(/restored 2 name\(s\): a, b/);
    expect(owed.takeLine(1)).toBeUndefined();
  });

  it('a first cell result on a replacement worker gets no line, and none is owed after it', () => {
    const owed = new RestoreFollowUp(statusWith(report()), true);
    expect(owed.takeLine(2)).toBeUndefined();
    expect(owed.takeLine(1)).toBeUndefined();
  });

  it('owes nothing without --state, and the tool listing once with it', () => {
    const none = new RestoreFollowUp(statusWith(report()), false);
    expect(none.toolsDue).toBe(false);
    expect(none.takeLine(1)).toBeUndefined();
    const owed = new RestoreFollowUp(statusWith(null), true);
    expect(owed.toolsDue).toBe(true);
    owed.toolsListed();
    expect(owed.toolsDue).toBe(false);
    expect(owed.takeLine(1)).toBeUndefined();
  });
});

const servers: IpythonMcpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A server over a worker that records every operation and answers each with an empty success. */
async function recordingServer(): Promise<{ client: Client; ops: string[] }> {
  const ops: string[] = [];
  const instance = createIpythonMcpServer({
    python: 'unused',
    settings: { ...defaultSettings(), memoryLimitMb: null },
    warmStandby: false,
    backend: {
      name: 'recording',
      capabilities: new Set(),
      start: () => {
        const [near, far] = InMemoryChannel.createLinkedPair();
        far.onmessage = (raw) => {
          const message = raw as Record<string, unknown>;
          if (message.type === 'shutdown') return far.close();
          if (message.type !== 'request') return;
          ops.push(message.op as string);
          far.send({ type: 'response', id: message.id, ok: true, result: message.op === 'discover' ? { revision: 0, tools: [], stale: [] } : {} });
        };
        return new ChannelWorker(near);
      },
    },
  });
  servers.push(instance);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await instance.server.connect(serverTransport);
  const client = new Client({ name: 'namespace-test', version: '0' });
  await client.connect(clientTransport);
  return { client, ops };
}

describe('the tool caller refuses before admission', () => {
  it('a bad deadline and invalid arguments fail without reaching the worker', async () => {
    const { client, ops } = await recordingServer();
    const late = await client.callTool({ name: 'execute', arguments: { code: '1', timeout_seconds: -1 } });
    expect(late.isError).toBe(true);
    expect(late.structuredContent).toMatchObject({ error: { code: 'invalid_arguments' } });
    const wrong = await client.callTool({ name: 'execute', arguments: { code: 5 } });
    expect(wrong.structuredContent).toMatchObject({ error: { code: 'invalid_arguments', message: expect.stringMatching(/^invalid arguments for execute: code/) } });
    expect(ops.filter((op) => op === 'execute')).toEqual([]);
  });

  it('runtime_status is answered by the server itself, and an unknown tool is a JSON-RPC error', async () => {
    const { client, ops } = await recordingServer();
    const status = await client.callTool({ name: 'runtime_status', arguments: {} });
    expect(status.isError).toBeFalsy();
    expect(ops).not.toContain('runtime_status');
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool: no_such_tool/);
  });
});
