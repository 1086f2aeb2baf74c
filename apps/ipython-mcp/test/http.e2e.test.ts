// Streamable HTTP: real SDK clients over HTTP to the built binary with --http. Sessions sharing one
// namespace, named namespaces with their own workers and epochs, the refusals (401/403/413), disconnect, signals.
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { CLI, expectOk, taggedProcesses, testPython, waitForExit } from './harness.js';
import { connectHttp, rawPost, retry, startHttpServer, type HttpTestClient, type HttpTestServer } from './http-harness.js';

const TAG = randomUUID();
let servers: HttpTestServer[] = [];
let clients: HttpTestClient[] = [];

async function start(env: Record<string, string> = {}, args: string[] = []): Promise<HttpTestServer> {
  const server = await startHttpServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG, IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1', ...env }, args);
  servers.push(server);
  return server;
}

async function connect(server: HttpTestServer, path = ''): Promise<HttpTestClient> {
  const client = await connectHttp(`${server.url}${path}`, server.token);
  clients.push(client);
  return client;
}

const exec = (client: HttpTestClient, code: string) => client.structured('execute', { code });

afterEach(async () => {
  await Promise.all(clients.map((client) => client.close()));
  clients = [];
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
});

afterAll(async () => {
  await retry(async () => expect(await taggedProcesses(TAG)).toEqual([]), 10_000);
});

describe('one namespace, many sessions', () => {
  it('two sessions on /mcp share names and epoch; runtime_status counts them; list_changed reaches the other', async () => {
    const server = await start();
    const first = await connect(server);
    const second = await connect(server);
    expectOk(await exec(first, 'x = 41\ndef double(n: int) -> int:\n    return 2 * n'));
    expect((await exec(second, 'x + 1')).result.value).toBe(42);
    const status = await second.structured('runtime_status');
    expect(status).toMatchObject({ namespace: 'default', sessions: 2, epoch: 1 });
    expect((await first.structured('register_tool', { name: 'double' })).error).toBeUndefined();
    await retry(() => expect(second.notifications.map((n) => n.method)).toContain('notifications/tools/list_changed'), 10_000);
    const tools = await second.client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain('double');
  });

  it('a client that disconnects mid-cell: the cell is interrupted, the namespace kept, the next session sees it', async () => {
    const server = await start();
    const leaving = await connect(server);
    expectOk(await exec(leaving, 'kept = "before"'));
    const running = leaving.call('execute', { code: 'import time\nprogress = "started"\ntime.sleep(10**6)' }).catch((error: Error) => error);
    const next = await connect(server);
    await retry(async () => expect((await next.structured('runtime_status')).active).toBeTruthy(), 20_000);
    await leaving.transport.close();
    await running;
    await retry(async () => expect((await next.structured('runtime_status')).active).toBeFalsy(), 20_000);
    const after = await exec(next, '(kept, progress)');
    expect(after.result.value).toEqual(['before', 'started']);
    const status = await next.structured('runtime_status');
    expect(status.epoch).toBe(1);
    expect(status.last_interruption).toBeTruthy();
  });
});

describe('answers', () => {
  const call = (id: number, code: string, meta?: Record<string, unknown>) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'execute', arguments: { code }, ...(meta ? { _meta: meta } : {}) } });
  const sessionOf = (client: HttpTestClient) => ({ 'Mcp-Session-Id': client.transport.sessionId as string, 'Mcp-Protocol-Version': '2025-06-18' });

  it('a call without a progress token is answered as one JSON body; with one, its progress streams over SSE first', async () => {
    const server = await start();
    const client = await connect(server);
    const plain = await rawPost(server, call(11, '6 * 7'), sessionOf(client));
    expect(plain.status).toBe(200);
    expect(plain.contentType).toBe('application/json');
    expect(JSON.parse(plain.text)).toMatchObject({ jsonrpc: '2.0', id: 11, result: { structuredContent: { result: { value: 42 } } } });
    const cell = 'import time\nprint("first line", flush=True)\ntime.sleep(1.5)\n6 * 7';
    const streamed = await rawPost(server, call(12, cell, { progressToken: 'p12' }), sessionOf(client));
    expect(streamed.contentType).toBe('text/event-stream');
    const events = streamed.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as Record<string, any>);
    expect(events.at(-1)).toMatchObject({ id: 12, result: { structuredContent: { result: { value: 42 } } } });
    const progress = events.filter((event) => event.method === 'notifications/progress');
    expect(progress.some((event) => event.params.progressToken === 'p12' && String(event.params.message).includes('first line'))).toBe(true);
    // A real client asking for progress gets it while the call runs, then the result.
    const seen: string[] = [];
    const result = await client.client.callTool({ name: 'execute', arguments: { code: cell } }, undefined, {
      timeout: 60_000,
      onprogress: (update) => {
        seen.push(update.message ?? '');
      },
    });
    expect((result.structuredContent as Record<string, any>).result.value).toBe(42);
    expect(seen.join('\n')).toContain('first line');
  });

  it('a notification gets 202 and an empty body; DELETE ends the session and its id is then unknown', async () => {
    const server = await start();
    const client = await connect(server);
    const session = sessionOf(client);
    const notified = await rawPost(server, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), session);
    expect(notified).toMatchObject({ status: 202, text: '' });
    await client.transport.terminateSession();
    const after = await rawPost(server, call(13, '1'), session);
    expect(after.status).toBe(404);
    expect(after.text).toContain('session not found');
  });
});

describe('named namespaces', () => {
  it('/mcp/a and /mcp/b are isolated with their own epochs; a crash in a leaves b untouched', async () => {
    const server = await start();
    const a = await connect(server, '/a');
    const b = await connect(server, '/b');
    expectOk(await exec(a, 'only_a = 1'));
    expectOk(await exec(b, 'only_b = 2'));
    expect((await exec(b, "'only_a' in dir()")).result.value).toBe(false);
    expect((await exec(a, "'only_b' in dir()")).result.value).toBe(false);
    const bPid = (await exec(b, 'import os\nos.getpid()')).result.value;
    const crashed = await exec(a, 'import os\nos._exit(1)');
    expect(crashed.error?.code).toBe('worker_crashed');
    expect((await a.structured('runtime_status')).epoch).toBe(2);
    const bStatus = await b.structured('runtime_status');
    expect(bStatus).toMatchObject({ namespace: 'b', epoch: 1 });
    expect((await exec(b, '(only_b, os.getpid())')).result.value).toEqual([2, bPid]);
  });

  it('past IPYTHON_MCP_MAX_NAMESPACES (default 8) a new name gets a clear error; the others go on', async () => {
    const server = await start();
    const names = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8'];
    const opened = [];
    for (const name of names) opened.push(await connect(server, `/${name}`));
    const refused = await connectHttp(`${server.url}/n9`, server.token).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).toContain('IPYTHON_MCP_MAX_NAMESPACES');
    expectOk(await exec(opened[7] as HttpTestClient, '1 + 1'));
  });

  it('a name outside 1-32 of a-z, 0-9, - is not found and creates nothing', async () => {
    const server = await start();
    for (const path of ['/Upper', '/a_b', `/${'x'.repeat(33)}`, '/a/b']) {
      const answer = await rawPost(server, initialize(), {}, path);
      expect(answer.status, path).toBe(404);
    }
  });
});

function initialize(): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
}

describe('refusals run nothing', () => {
  it('no token, a wrong token, a bad Host, a foreign Origin: 401/403 and the marker file is never written', async () => {
    const server = await start();
    const client = await connect(server);
    const marker = join(mkdtempSync(join(tmpdir(), 'ipython-mcp-marker-')), 'ran');
    const call = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'execute', arguments: { code: `open(${JSON.stringify(marker)}, 'w').write('x')` } } });
    const session = { 'Mcp-Session-Id': client.transport.sessionId as string, 'Mcp-Protocol-Version': '2025-06-18' };
    const port = new URL(server.url).port;
    const cases: Array<[string, Record<string, string>, number]> = [
      ['no token', { ...session, Authorization: '' }, 401],
      ['a wrong token', { ...session, Authorization: `Bearer ${server.token}x` }, 401],
      ['a token of another scheme', { ...session, Authorization: `Basic ${server.token}` }, 401],
      ['a bad Host', { ...session, Host: `evil.example:${port}` }, 403],
      ['a foreign Origin', { ...session, Origin: 'http://evil.example' }, 403],
    ];
    for (const [what, headers, status] of cases) {
      const answer = await rawPost(server, call, headers);
      expect(answer.status, what).toBe(status);
      expect(answer.text).not.toContain(server.token);
    }
    expect((await rawPost(server, call, { ...session, Origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect(existsSync(marker)).toBe(true);
  });

  it('a 20 MB body is refused (413) and the server goes on', async () => {
    const server = await start();
    const client = await connect(server);
    const code = `x = "${'a'.repeat(20 * 1024 * 1024)}"`;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'execute', arguments: { code } } });
    const answer = await rawPost(server, body, { 'Mcp-Session-Id': client.transport.sessionId as string });
    expect(answer.status).toBe(413);
    expect(answer.text).toContain('IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES');
    expect((await exec(client, "'x' in dir()")).result.value).toBe(false);
  });

  it('past IPYTHON_MCP_HTTP_MAX_SESSIONS a new session gets a clear error', async () => {
    const server = await start({ IPYTHON_MCP_HTTP_MAX_SESSIONS: '2' });
    const first = await connect(server);
    await connect(server);
    const refused = await connectHttp(server.url, server.token).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).toContain('IPYTHON_MCP_HTTP_MAX_SESSIONS');
    expectOk(await exec(first, '1'));
  });

  it('the token appears nowhere in stderr at debug level; a generated token file is 0600 and kept', async () => {
    const server = await start({ IPYTHON_MCP_HTTP_TOKEN: '' }, ['--log-level', 'debug']);
    expect(server.stderr()).toContain(join(server.home, 'http-token'));
    const { readFileSync } = await import('node:fs');
    const token = readFileSync(join(server.home, 'http-token'), 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(43);
    expect(statSync(join(server.home, 'http-token')).mode & 0o777).toBe(0o600);
    const client = await connectHttp(server.url, token);
    clients.push(client);
    expectOk(await exec(client, 'import os\nos.getpid()'));
    await client.structured('runtime_status');
    expect((await rawPost({ ...server, token: 'wrong' }, initialize())).status).toBe(401);
    await client.close();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(server.stderr()).not.toContain(token);
    expect(existsSync(join(server.home, 'http-token'))).toBe(true);
  });
});

describe('lifecycle', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s answers the running call runtime_closed, ends every worker and exits 0', async (signal) => {
    const server = await start();
    const a = await connect(server);
    const b = await connect(server, '/other');
    const pids = [(await exec(a, 'import os\nos.getpid()')).result.value, (await exec(b, 'import os\nos.getpid()')).result.value] as number[];
    const running = a.structured('execute', { code: 'import time\ntime.sleep(10**6)' });
    await retry(async () => expect((await b.structured('runtime_status')).epoch).toBe(1), 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exit = server.stop(signal);
    expect((await running).error?.code).toBe('runtime_closed');
    expect(await exit).toBe(0);
    for (const pid of pids) expect(await waitForExit(pid, 5_000)).toBe(true);
    await retry(async () => expect(await taggedProcesses(TAG)).toEqual([]), 10_000);
  });

  it('SIGKILL of the server leaves no Python process behind', async () => {
    const server = await start();
    const a = await connect(server, '/k');
    expectOk(await exec(a, '1'));
    await server.stop('SIGKILL');
    await retry(async () => expect(await taggedProcesses(TAG)).toEqual([]), 10_000);
  });
});

describe('the --http command line', () => {
  it.each([
    [['--http', 'nonsense'], '--http must be [HOST:]PORT'],
    [['--http', '127.0.0.1:70000'], '--http must be [HOST:]PORT'],
    [['--http', '0.0.0.0:0'], '--http-allow-remote'],
    [['setup', '--http', '8765'], 'only apply to serving'],
  ])('%j exits 2 with a clear message and starts nothing', (args, message) => {
    const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, IPYTHON_MCP_PYTHON: testPython() }, timeout: 30_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('ready on');
  });

  it('a non-loopback HOST with --http-allow-remote serves, with a warning', async () => {
    // A later --http wins over the harness's 127.0.0.1:0.
    const remote = await startHttpServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG }, ['--http', '0.0.0.0:0', '--http-allow-remote', '--http-allow-host', '127.0.0.2']);
    servers.push(remote);
    expect(remote.stderr()).toContain('WARNING');
    expect(remote.stderr()).not.toContain(remote.token);
  });
});

describe('doctor --url', () => {
  const doctor = (url: string, env: Record<string, string>) =>
    spawnSync(process.execPath, [CLI, 'doctor', '--url', url], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });

  it('reports a running server: namespace, sessions, state; a wrong token or nothing listening fails with the fix', async () => {
    const server = await start();
    const client = await connect(server, '/d');
    expectOk(await exec(client, '1'));
    const ok = doctor(`${server.url}/d`, { IPYTHON_MCP_HTTP_TOKEN: server.token });
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ok {3}http: .*namespace d, 2 open sessions, state \w+, epoch 1; token from IPYTHON_MCP_HTTP_TOKEN\)/);
    expect(ok.stdout + ok.stderr).not.toContain(server.token);
    const refused = doctor(server.url, { IPYTHON_MCP_HTTP_TOKEN: 'not-the-token' });
    expect(refused.status).toBe(1);
    expect(refused.stdout).toContain('the token was refused');
    await client.close();
    await server.stop();
    const gone = doctor(server.url, { IPYTHON_MCP_HTTP_TOKEN: server.token });
    expect(gone.status).toBe(1);
    expect(gone.stdout).toContain('nothing answers there');
  });

  it('without IPYTHON_MCP_HTTP_TOKEN it reads the token file; a URL that is no URL fails with the fix', async () => {
    const server = await start({ IPYTHON_MCP_HTTP_TOKEN: '' });
    const fromFile = doctor(server.url, { IPYTHON_MCP_HTTP_TOKEN: '', IPYTHON_MCP_HOME: server.home });
    expect(fromFile.status, fromFile.stdout + fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toContain(`token from ${join(server.home, 'http-token')}`);
    const noFile = doctor(server.url, { IPYTHON_MCP_HTTP_TOKEN: '', IPYTHON_MCP_HOME: mkdtempSync(join(tmpdir(), 'ipython-mcp-empty-')) });
    expect(noFile.status).toBe(1);
    expect(noFile.stdout).toContain('the token was refused');
    const notUrl = doctor('not a url', {});
    expect(notUrl.status).toBe(1);
    expect(notUrl.stdout).toContain('is not a URL');
  });
});
