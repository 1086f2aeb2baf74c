// Catalog reconciliation by tool policy and by the worker's catalog_revision, through a real MCP client over an
// in-memory transport against the real server, with a scripted worker on an in-memory channel (no Python): it
// counts exactly which `discover` requests the server sends.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { schemaFingerprint } from '@ipython-mcp/schema-fingerprint';
import { ChannelWorker, InMemoryChannel } from '@ipython-mcp/worker-supervisor';
import { afterEach, describe, expect, it } from 'vitest';
import { createIpythonMcpServer, type IpythonMcpServer } from '../server/index.js';
import { defaultSettings } from '../settings/index.js';

type Message = Record<string, unknown>;

/** A worker with a registry, that sends `catalog_revision` on every response when `sendsRevision`. */
class FakeWorker {
  readonly ops: string[] = [];
  revision = 0;
  private registrations = new Map<string, Message>();
  constructor(
    private readonly channel: InMemoryChannel,
    private readonly sendsRevision: boolean,
  ) {
    channel.onmessage = (raw) => this.onMessage(raw as Message);
  }

  private onMessage(message: Message): void {
    if (message.type === 'shutdown') return this.channel.close();
    if (message.type !== 'request') return;
    const op = message.op as string;
    const params = message.params as Message;
    this.ops.push(op);
    const result = this.answer(op, params);
    const revision = this.sendsRevision && (this.registrations.size > 0 || op === 'register_tool') ? { catalog_revision: this.revision } : {};
    this.channel.send({ type: 'response', id: message.id, ok: true, result, ...revision });
  }

  private answer(op: string, params: Message): Message {
    switch (op) {
      case 'register_tool': {
        const name = params.name as string;
        const inputSchema = { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] };
        const registration = { tool_name: name, name, description: `tool ${name}`, input_schema: inputSchema, fingerprint: schemaFingerprint(inputSchema) };
        this.registrations.set(name, registration);
        this.revision += 1;
        return { ...registration, revision: this.revision };
      }
      case 'discover':
        if (params.known_revision === this.revision) return { revision: this.revision, unchanged: true };
        return { revision: this.revision, tools: [...this.registrations.values()], stale: [] };
      case 'execute':
        if (params.code === 'redefine') this.revision += 1; // an edit that makes a registration stale moves the revision
        return { status: 'ok', execution_count: 1, result: { kind: 'json', value: 2 } };
      case 'call_tool':
        return { value: 3 };
      case 'remove':
        return { removed: params.names, refused: [], unknown: [] };
      case 'list':
        // A catalogued answer: in tests the server checks every result against its tool's output schema.
        return { functions: [], total: 0, truncated: false };
      default:
        return {};
    }
  }
}

const servers: IpythonMcpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function connect(sendsRevision: boolean): Promise<{ client: Client; worker: () => FakeWorker }> {
  const workers: FakeWorker[] = [];
  const instance = createIpythonMcpServer({
    python: 'unused',
    settings: { ...defaultSettings(), memoryLimitMb: null },
    warmStandby: false,
    backend: {
      name: 'scripted',
      capabilities: new Set(),
      start: () => {
        const [near, far] = InMemoryChannel.createLinkedPair();
        workers.push(new FakeWorker(far, sendsRevision));
        return new ChannelWorker(near);
      },
    },
  });
  servers.push(instance);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await instance.server.connect(serverTransport);
  const client = new Client({ name: 'reconcile-test', version: '0' });
  await client.connect(clientTransport);
  return { client, worker: () => workers[0]! };
}

function discovers(worker: FakeWorker): number {
  return worker.ops.filter((op) => op === 'discover').length;
}

describe('catalog reconciliation', () => {
  it('with catalog_revision: an execute that touches no registration sends no discover', async () => {
    const { client, worker } = await connect(true);
    await client.callTool({ name: 'register_tool', arguments: { name: 'double' } });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('double');
    const before = discovers(worker());
    for (let index = 0; index < 3; index += 1) {
      const result = await client.callTool({ name: 'execute', arguments: { code: '1+1' } });
      expect(result.isError).toBeFalsy();
    }
    expect((await client.callTool({ name: 'double', arguments: { x: 1 } })).isError).toBeFalsy();
    await new Promise((resolve) => setTimeout(resolve, 20)); // a background reconcile would have been queued by now
    expect(discovers(worker()) - before).toBe(0);
  });

  it('with catalog_revision: an execute that moved the revision reconciles before it answers', async () => {
    const { client, worker } = await connect(true);
    await client.callTool({ name: 'register_tool', arguments: { name: 'double' } });
    await client.listTools();
    const before = discovers(worker());
    await client.callTool({ name: 'execute', arguments: { code: 'redefine' } });
    expect(discovers(worker()) - before).toBe(1);
    expect(worker().ops.at(-1)).toBe('discover');
  });

  it('without catalog_revision (an older worker): every execute with registrations reconciles', async () => {
    const { client, worker } = await connect(false);
    await client.callTool({ name: 'register_tool', arguments: { name: 'double' } });
    await client.listTools();
    const before = discovers(worker());
    await client.callTool({ name: 'execute', arguments: { code: '1+1' } });
    await client.callTool({ name: 'execute', arguments: { code: '1+1' } });
    expect(discovers(worker()) - before).toBe(2);
  });

  it('remove with no registrations sends no discover: it may change the catalog, it does not edit the registry', async () => {
    const { client, worker } = await connect(false);
    await client.callTool({ name: 'remove', arguments: { names: ['x'] } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(discovers(worker())).toBe(0);
  });

  it('remove with registrations reconciles before it answers (a removed backing name makes its tool stale)', async () => {
    const { client, worker } = await connect(false);
    await client.callTool({ name: 'register_tool', arguments: { name: 'double' } });
    await client.listTools();
    const before = discovers(worker());
    await client.callTool({ name: 'remove', arguments: { names: ['double'] } });
    expect(discovers(worker()) - before).toBe(1);
    expect(worker().ops.at(-1)).toBe('discover');
  });

  it('tools whose policy is none never reconcile, whatever the worker sends', async () => {
    const { client, worker } = await connect(false);
    await client.callTool({ name: 'register_tool', arguments: { name: 'double' } });
    const before = discovers(worker());
    await client.callTool({ name: 'list', arguments: {} });
    await client.callTool({ name: 'runtime_status', arguments: {} });
    expect(discovers(worker()) - before).toBe(0);
  });
});
