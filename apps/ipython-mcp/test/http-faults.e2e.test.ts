// The stdio fault tests that mean something over HTTP: deadline and hard recovery, an output flood,
// and a burst of 1,000 concurrent calls from two sessions on one namespace, all through real SDK HTTP clients.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { expectOk, taggedProcesses } from './harness.js';
import { connectHttp, retry, startHttpServer, type HttpTestClient, type HttpTestServer } from './http-harness.js';

const TAG = randomUUID();
let servers: HttpTestServer[] = [];
let clients: HttpTestClient[] = [];

async function start(env: Record<string, string> = {}): Promise<HttpTestServer> {
  const server = await startHttpServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG, IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1', ...env });
  servers.push(server);
  return server;
}

async function connect(server: HttpTestServer, path = ''): Promise<HttpTestClient> {
  const client = await connectHttp(`${server.url}${path}`, server.token);
  clients.push(client);
  return client;
}

const exec = (client: HttpTestClient, code: string) => client.structured('execute', { code });
const body = (result: CallToolResult) => result.structuredContent as Record<string, any>;

afterEach(async () => {
  await Promise.all(clients.map((client) => client.close()));
  clients = [];
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
});

afterAll(async () => {
  await retry(async () => expect(await taggedProcesses(TAG)).toEqual([]), 10_000);
});

describe('deadlines over HTTP', () => {
  it('a busy loop past its deadline is interrupted, its partial state kept; a loop that swallows it is killed (epoch 2), another namespace untouched', async () => {
    const server = await start({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1' });
    const a = await connect(server);
    const b = await connect(server, '/b');
    expectOk(await exec(b, 'kept_b = 1'));
    const cooperative = await exec(a, 'progress = []\nwhile True:\n    if len(progress) < 1000:\n        progress.append(1)');
    expect(cooperative.error?.code).toBe('operation_timeout');
    expect((await exec(a, 'len(progress)')).result.value).toBe(1000);
    const stubborn = await exec(a, 'while True:\n    try:\n        while True:\n            pass\n    except KeyboardInterrupt:\n        pass');
    expect(stubborn.error?.code).toBe('operation_timeout');
    await retry(async () => expect((await a.structured('runtime_status')).epoch).toBe(2), 20_000);
    expectOk(await exec(a, '1 + 1'));
    expect((await b.structured('runtime_status')).epoch).toBe(1);
    expect((await exec(b, 'kept_b')).result.value).toBe(1);
  });
});

describe('an output flood over HTTP', () => {
  it('a 10^7-character print comes back bounded with the exact omitted count', async () => {
    const server = await start();
    const client = await connect(server);
    const result = await exec(client, 'print("x" * 10**7)');
    expect(result.stdout_omitted_chars).toBe(10 ** 7 + 1 - 8192);
    expect((result.stdout as string).length).toBeLessThanOrEqual(8192);
  });
});

describe('a burst of 1,000 concurrent calls from two sessions', () => {
  it('exactly max_pending queued, the rest runtime_busy at once; nothing runs twice; the server goes on', async () => {
    const server = await start({ IPYTHON_MCP_MAX_PENDING_OPERATIONS: '2' });
    const first = await connect(server);
    const second = await connect(server);
    expectOk(await exec(first, 'order = []'));
    // The active cell holds until every rejected call has been answered, however slowly this machine delivers
    // a thousand requests: the bound, not the timing, is under test.
    const gate = join(mkdtempSync(join(tmpdir(), 'ipython-mcp-gate-')), 'open');
    const active = first.call('execute', { code: `import os, time\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.01)\norder.append(0)` });
    await retry(async () => expect((await second.structured('runtime_status')).active).toBeTruthy(), 20_000);
    let rejected = 0;
    const burst = Array.from({ length: 999 }, (_, index) =>
      (index % 2 === 0 ? first : second).call('execute', { code: `order.append(${index + 1})` }).then((result) => {
        if (result.isError) rejected += 1;
        return result;
      }),
    );
    await retry(() => expect(rejected).toBe(997), 120_000);
    writeFileSync(gate, '');
    const results = [await active, ...(await Promise.all(burst))];
    const busy = results.filter((result) => result.isError && body(result).error?.code === 'runtime_busy');
    const ran = results.filter((result) => !result.isError);
    expect(ran.length).toBe(3);
    expect(busy.length).toBe(997);
    const order = (await exec(second, 'order')).result.value as number[];
    expect(order.length).toBe(3);
    expect(new Set(order).size).toBe(3);
    expect(order[0]).toBe(0);
    expect((await second.structured('runtime_status')).epoch).toBe(1);
  });
});
