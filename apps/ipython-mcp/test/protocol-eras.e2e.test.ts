// Both protocol eras on one binary over stdio: an SDK v1 client (`initialize`, 2025-11-25), the v2 client in its
// default legacy mode (2025-11-25), and the v2 client pinned to 2026-07-28 (`server/discover`, the per-request
// envelope). The same calls behave the same: state kept, a dynamic tool registered then listed and called, a
// detached cell read through its job handle, the output resources. Then the tasks extension on 2026-07-28, on the
// wire as a client that declares it speaks it (the v2 SDK client refuses task results), and its refusals.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { createInterface } from 'node:readline';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttpClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, testPython, waitForExit } from './harness.js';
import { rawPost, startHttpServer, type HttpTestServer } from './http-harness.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bench's bare SDK server of one era (the v2 SDK's own `Server`, plain `tools/call` registration). */
const ERA_FLOOR = fileURLToPath(new URL('../../../tooling/bench/lib/era-floor.mjs', import.meta.url));

type Era = 'v1 client, 2025-11-25' | 'v2 client, 2025-11-25' | 'v2 client, 2026-07-28';
const ERAS: Era[] = ['v1 client, 2025-11-25', 'v2 client, 2025-11-25', 'v2 client, 2026-07-28'];

/** The calls the suites make, the same for every client. */
interface EraClient {
  version: string | undefined;
  call(name: string, args: Record<string, unknown>): Promise<Record<string, any>>;
  toolNames(): Promise<string[]>;
  resources(): Promise<Array<{ uri: string }>>;
  read(uri: string): Promise<Array<Record<string, any>>>;
  close(): Promise<void>;
}

const serverEnv = (): Record<string, string> => ({ ...(process.env as Record<string, string>), IPYTHON_MCP_PYTHON: testPython() });

/** Where a client connects: a stdio child of its own, or an `--http` server's namespace path with its token. */
type Where = { kind: 'stdio' } | { kind: 'http'; url: string; token: string };

async function connect(era: Era, where: Where = { kind: 'stdio' }, cliArgs: string[] = []): Promise<EraClient> {
  const params = { command: process.execPath, args: [CLI, ...cliArgs], env: serverEnv(), stderr: 'ignore' as const };
  const httpInit = where.kind === 'http' ? { requestInit: { headers: { Authorization: `Bearer ${where.token}` } } } : undefined;
  if (era === 'v1 client, 2025-11-25') {
    const transport = where.kind === 'http' ? new LegacyHttpClientTransport(new URL(where.url), httpInit) : new LegacyStdioClientTransport(params);
    const client = new LegacyClient({ name: 'eras', version: '1' });
    await client.connect(transport);
    const pid = 'pid' in transport ? transport.pid : null;
    return {
      // The v1 client keeps the negotiated version to itself; an `initialize` session is 2025-era by definition.
      version: undefined,
      call: async (name, args) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as Record<string, any>,
      toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
      resources: async () => (await client.listResources()).resources,
      read: async (uri) => (await client.readResource({ uri })).contents as Array<Record<string, any>>,
      close: async () => {
        await client.close();
        if (pid !== null) await waitForExit(pid, 10_000);
      },
    };
  }
  const transport = where.kind === 'http' ? new ModernHttpClientTransport(new URL(where.url), httpInit) : new ModernStdioClientTransport(params);
  const options = era === 'v2 client, 2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
  const client = new ModernClient({ name: 'eras', version: '1' }, options as never);
  await client.connect(transport);
  const pid = 'pid' in transport ? transport.pid : null;
  return {
    version: client.getNegotiatedProtocolVersion(),
    call: async (name, args) => (await client.callTool({ name, arguments: args }, { timeout: 60_000 })) as Record<string, any>,
    toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    resources: async () => (await client.listResources()).resources,
    read: async (uri) => (await client.readResource({ uri })).contents as Array<Record<string, any>>,
    close: async () => {
      await client.close();
      if (pid !== null) await waitForExit(pid, 10_000);
    },
  };
}

let http: HttpTestServer | undefined;
beforeAll(async () => {
  http = await startHttpServer();
}, 60_000);
afterAll(async () => {
  await http?.stop();
});

describe.each(ERAS.flatMap((era) => [{ era, over: 'stdio' as const }, { era, over: 'http' as const }]))('$over, $era', ({ era, over }) => {
  let client: EraClient | undefined;
  afterAll(async () => {
    await client?.close();
  });

  it('negotiates its era', async () => {
    // Over --http each era has a namespace of its own (/mcp/NAME), so the suites do not share a namespace.
    const server = http as HttpTestServer;
    const path = `${server.url}/${era.startsWith('v1') ? 'v1' : era.endsWith('2026-07-28') ? 'modern' : 'v2-legacy'}`;
    client = await connect(era, over === 'http' ? { kind: 'http', url: path, token: server.token } : { kind: 'stdio' });
    if (era !== 'v1 client, 2025-11-25') expect(client.version).toBe(era.endsWith('2026-07-28') ? '2026-07-28' : '2025-11-25');
  });

  it('keeps state, registers a tool that the next listing offers and a call runs', async () => {
    const c = client as EraClient;
    expect((await c.call('execute', { code: 'x = 41\ndef add(a: int, b: int) -> int:\n    return a + b + x' })).isError).toBeFalsy();
    const registered = await c.call('register_tool', { name: 'add' });
    expect(registered.isError, JSON.stringify(registered)).toBeFalsy();
    expect(await c.toolNames()).toContain('add');
    const added = await c.call('add', { a: 1, b: 0 });
    expect(added.structuredContent).toMatchObject({ value: 42 });
  });

  it('detaches a long cell and reads its last line through the job handle', async () => {
    const c = client as EraClient;
    const look = await c.call('execute', { code: 'import time\ntime.sleep(2)\nprint("final line 42")', detach_after_seconds: 0.5 });
    expect(look.structuredContent).toMatchObject({ status: 'running' });
    const job = look.structuredContent.job as string;
    const done = await c.call('job', { job, wait_seconds: 30 });
    expect(done.structuredContent.stdout).toContain('final line 42');
  });

  it('lists and reads an output resource (a spilled result)', async () => {
    const c = client as EraClient;
    const big = await c.call('execute', { code: 'print("y" * 200_000)' });
    const link = (big.content as Array<Record<string, any>>).find((block) => block.type === 'resource_link');
    expect(link, JSON.stringify(big.content).slice(0, 500)).toBeDefined();
    const uris = (await c.resources()).map((resource) => resource.uri);
    expect(uris).toContain(link?.uri);
    const contents = await c.read(link?.uri as string);
    expect(String(contents[0]?.text ?? '')).toContain('yyyy');
  });

  it('refuses a bad argument with a structured error and runs nothing', async () => {
    const c = client as EraClient;
    const refused = await c.call('execute', { code: 'x = 0', timeout_seconds: -1 });
    expect(refused.isError).toBe(true);
    expect((await c.call('execute', { code: 'x' })).structuredContent).toMatchObject({ result: { value: 41 } });
  });
});

/** A raw 2026-07-28 stdio client: the wire as a client that takes the tasks extension (or does not) sends it. */
class WireClient {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly waiting = new Map<number, (message: Record<string, any>) => void>();
  private nextId = 1;

  constructor(
    private readonly takesTasks: boolean,
    args: string[] = [CLI],
    env: Record<string, string> = serverEnv(),
  ) {
    this.child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as Record<string, any>;
      if (typeof message.id === 'number') this.waiting.get(message.id)?.(message);
    });
  }

  request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const id = this.nextId++;
    const capabilities = this.takesTasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {};
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'wire', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    };
    const answered = new Promise<Record<string, any>>((resolve) => this.waiting.set(id, resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } })}\n`);
    return answered;
  }

  async close(): Promise<void> {
    const pid = this.child.pid as number;
    this.child.stdin.end();
    await waitForExit(pid, 10_000);
  }
}

describe('stdio, 2026-07-28 tasks extension (server-decided tasks)', () => {
  const open: WireClient[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });
  const wire = (takesTasks: boolean) => {
    const client = new WireClient(takesTasks);
    open.push(client);
    return client;
  };
  const poll = async (client: WireClient, taskId: string): Promise<Record<string, any>> => {
    for (;;) {
      const got = await client.request('tasks/get', { taskId });
      if (got.result?.status !== 'working') return got;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('discovery offers the extension; a cell that outlives detach_after_seconds becomes a task whose result has the final line', async () => {
    const client = wire(true);
    const discovered = await client.request('server/discover');
    expect(discovered.result.supportedVersions).toContain('2026-07-28');
    expect(discovered.result.capabilities.extensions).toHaveProperty(['io.modelcontextprotocol/tasks']);
    const quick = await client.request('tools/call', { name: 'execute', arguments: { code: '6 * 7' } });
    expect(quick.result.resultType).toBe('complete');
    const code = 'import time\nfor i in range(3):\n    print("loss", i, flush=True)\n    time.sleep(0.5)\nprint("final line 42")';
    const created = await client.request('tools/call', { name: 'execute', arguments: { code, detach_after_seconds: 0.3 } });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null });
    const taskId = created.result.taskId as string;
    expect(taskId).toMatch(/^default-1-\d+$/);
    const running = await client.request('tasks/get', { taskId });
    expect(['working', 'completed']).toContain(running.result.status);
    const finished = await poll(client, taskId);
    expect(finished.result.status).toBe('completed');
    expect(finished.result.result.structuredContent.stdout).toContain('final line 42');
    // Asked again, the same answer (the detached cell was read once, the task keeps it).
    expect((await client.request('tasks/get', { taskId })).result.status).toBe('completed');
  });

  it('a registered tool becomes a task too; one whose function has its own detach_after_seconds keeps it', async () => {
    const client = wire(true);
    const code = 'import time\ndef slow(n: int) -> int:\n    time.sleep(1)\n    return n * 2\ndef own(detach_after_seconds: float = 1.5) -> float:\n    return detach_after_seconds';
    await client.request('tools/call', { name: 'execute', arguments: { code } });
    await client.request('tools/call', { name: 'register_tool', arguments: { name: 'slow' } });
    await client.request('tools/call', { name: 'register_tool', arguments: { name: 'own' } });
    await client.request('tools/list');
    const created = await client.request('tools/call', { name: 'slow', arguments: { n: 21, detach_after_seconds: 0.2 } });
    expect(created.result).toMatchObject({ resultType: 'task' });
    expect((await poll(client, created.result.taskId)).result.result.structuredContent).toMatchObject({ value: 42 });
    const own = await client.request('tools/call', { name: 'own', arguments: {} });
    expect(own.result.structuredContent).toMatchObject({ value: 1.5 });
  });

  it('without detach_after_seconds, a cell becomes a task at the 10 s default, not before', async () => {
    const client = wire(true);
    const started = Date.now();
    const created = await client.request('tools/call', { name: 'execute', arguments: { code: 'import time\ntime.sleep(14)\nprint("after the default")' } });
    const answeredAfter = Date.now() - started;
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    expect(answeredAfter).toBeGreaterThanOrEqual(10_000);
    expect((await poll(client, created.result.taskId)).result.result.structuredContent.stdout).toContain('after the default');
  }, 60_000);

  it('tasks/cancel interrupts the cell and keeps the namespace', async () => {
    const client = wire(true);
    await client.request('tools/call', { name: 'execute', arguments: { code: 'kept = 7' } });
    const created = await client.request('tools/call', { name: 'execute', arguments: { code: 'import time\ntime.sleep(60)', detach_after_seconds: 0.3 } });
    const taskId = created.result.taskId as string;
    expect((await client.request('tasks/cancel', { taskId })).error).toBeUndefined();
    const ended = await poll(client, taskId);
    expect(ended.result.status).toBe('cancelled');
    const kept = await client.request('tools/call', { name: 'execute', arguments: { code: 'kept' } });
    expect(kept.result.structuredContent).toMatchObject({ result: { value: 7 } });
  });

  it('a client without the extension keeps the job handle, and tasks/* refuses it (-32021)', async () => {
    const client = wire(false);
    const look = await client.request('tools/call', { name: 'execute', arguments: { code: 'import time\ntime.sleep(1)', detach_after_seconds: 0.2 } });
    expect(look.result.resultType).toBe('complete');
    expect(look.result.structuredContent).toMatchObject({ status: 'running' });
    const refused = await client.request('tasks/get', { taskId: look.result.structuredContent.job });
    expect(refused.error.code).toBe(-32021);
  });

  it('a malformed tools/call gets the JSON-RPC error the bare SDK server gives, and nothing runs', async () => {
    // The reference: the v2 SDK's own Server with the plain two-argument `tools/call` registration (the bench's era
    // floor). Whatever ours does before the SDK hands it a call (era router, envelope, its own registration), a bad
    // request must be refused exactly as the SDK alone refuses it.
    const ours = wire(true);
    const reference = new WireClient(true, [ERA_FLOOR], { ...serverEnv(), BENCH_ERA: '2026-07-28' });
    open.push(reference);
    await ours.request('tools/call', { name: 'execute', arguments: { code: 'ran = 0' } });
    const bad: Array<Record<string, unknown>> = [
      {},
      { name: 42 },
      { name: null, arguments: { code: '1' } },
      { name: 'execute', arguments: 'ran = 1' },
      { name: 'execute', arguments: ['ran = 1'] },
      { name: ['execute'], arguments: { code: 'ran = 1' } },
    ];
    for (const params of bad) {
      const [got, expected] = await Promise.all([ours.request('tools/call', params), reference.request('tools/call', params)]);
      expect(got.error, JSON.stringify(params)).toBeDefined();
      expect(got.error, JSON.stringify(params)).toEqual(expected.error);
      expect(got.result).toBeUndefined();
    }
    const after = await ours.request('tools/call', { name: 'execute', arguments: { code: 'ran' } });
    expect(after.result.structuredContent).toMatchObject({ result: { value: 0 } });
  });

  it('an unknown or malformed task id is refused with job_not_found, and nothing runs', async () => {
    const client = wire(true);
    const unknown = await client.request('tasks/get', { taskId: 'default-1-999' });
    expect(unknown.error).toMatchObject({ code: -32602, data: { code: 'job_not_found' } });
    const junk = await client.request('tasks/cancel', { taskId: '../etc' });
    expect(junk.error).toMatchObject({ code: -32602, data: { code: 'job_not_found', reason: 'malformed' } });
  });
});

describe('--http, 2026-07-28 on the wire', () => {
  const envelope = (tasks: boolean) => ({
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'wire', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
  });
  let id = 1;
  const post = async (method: string, params: Record<string, unknown>, headers: Record<string, string> = {}, path = '/wire') => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: id++, method, params: { ...params, _meta: envelope(true) } });
    // The standard headers of 2026-07-28 (the method, and the name: a tool's, a task's id) must agree with the body.
    const name = params.name ?? params.taskId;
    const named = typeof name === 'string' ? { 'Mcp-Name': name } : {};
    const answer = await rawPost(http as HttpTestServer, body, { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...named, ...headers }, path);
    const json = answer.contentType.includes('text/event-stream') ? answer.text.split('\n').find((line) => line.startsWith('data: '))?.slice(6) : answer.text;
    return { status: answer.status, message: json === undefined || json.length === 0 ? undefined : (JSON.parse(json) as Record<string, any>) };
  };

  it('serves discovery, tools and a task without a session, keeping the namespace by path', async () => {
    const discovered = await post('server/discover', {});
    expect(discovered.status).toBe(200);
    expect(discovered.message?.result.supportedVersions).toContain('2026-07-28');
    await post('tools/call', { name: 'execute', arguments: { code: 'w = 5' } });
    expect((await post('tools/call', { name: 'execute', arguments: { code: 'w' } })).message?.result.structuredContent).toMatchObject({ result: { value: 5 } });
    // Another path is another namespace.
    expect((await post('tools/call', { name: 'execute', arguments: { code: 'w' } }, {}, '/wire-other')).message?.result.structuredContent).toMatchObject({ status: 'error' });
    const created = await post('tools/call', { name: 'execute', arguments: { code: 'import time\ntime.sleep(1)\nprint("http final 42")', detach_after_seconds: 0.2 } });
    expect(created.message?.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.message?.result.taskId as string;
    let got: Record<string, any> | undefined;
    for (let round = 0; round < 100; round++) {
      got = (await post('tasks/get', { taskId })).message;
      if (got?.result?.status !== 'working') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(got?.result?.status, JSON.stringify(got)).toBe('completed');
    expect(got?.result.result.structuredContent.stdout).toContain('http final 42');
  });

  it('refuses a modern request without the token (401) or from a foreign Origin (403), and nothing runs', async () => {
    expect((await post('tools/call', { name: 'execute', arguments: { code: 'leak = 1' } }, { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post('tools/call', { name: 'execute', arguments: { code: 'leak = 1' } }, { Origin: 'http://evil.example' })).status).toBe(403);
    const after = await post('tools/call', { name: 'execute', arguments: { code: "'leak' in globals()" } });
    expect(after.message?.result.structuredContent).toMatchObject({ result: { value: false } });
  });
});

describe.each(ERAS)('code-mode --servers over stdio, %s', (era) => {
  it('run_code calls an upstream server\'s tool as a function, and keeps its kernel state', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'eras-code-mode-')), 'servers.json');
    const upstream = fileURLToPath(new URL('./fixtures/upstream-server.mjs', import.meta.url));
    writeFileSync(
      file,
      JSON.stringify({ mcpServers: { fixture: { command: process.execPath, args: [upstream], env: { UPSTREAM_LABEL: 'up' } } }, codeMode: { consent: 'run' } }),
    );
    const client = await connect(era, { kind: 'stdio' }, ['code-mode', '--servers', file]);
    try {
      if (era !== 'v1 client, 2025-11-25') expect(client.version).toBe(era.endsWith('2026-07-28') ? '2026-07-28' : '2025-11-25');
      expect(await client.toolNames()).toEqual(['run_code']);
      await client.call('run_code', { code: 'said = echo(text="hi")' });
      const result = await client.call('run_code', { code: 'said' });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('up:hi');
    } finally {
      await client.close();
    }
  });
});
