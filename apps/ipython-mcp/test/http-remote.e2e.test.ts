// --http for a client on another machine: allowed host names, HTTPS with a certificate made here, and
// connections that stay usable across an idle pause. "Another machine" is 127.0.0.2, a second loopback address, so
// no traffic leaves this one; the server binds 0.0.0.0 as it would on a GPU box.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CLI, expectOk, taggedProcesses, testPython } from './harness.js';
import { connectHttp, rawPost, retry, startHttpServer, type HttpTestClient, type HttpTestServer } from './http-harness.js';

const TAG = randomUUID();
const REMOTE = '127.0.0.2';
let servers: HttpTestServer[] = [];
let clients: HttpTestClient[] = [];

async function start(args: string[], env: Record<string, string> = {}): Promise<HttpTestServer> {
  const server = await startHttpServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG, ...env }, args);
  servers.push(server);
  return server;
}

const remoteArgs = ['--http', '0.0.0.0:0', '--http-allow-remote', '--http-allow-host', REMOTE];

afterEach(async () => {
  await Promise.all(clients.map((client) => client.close()));
  clients = [];
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
});

afterAll(async () => {
  await retry(async () => expect(await taggedProcesses(TAG)).toEqual([]), 10_000);
});

function initialize(): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
}

function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, IPYTHON_MCP_PYTHON: testPython(), ...env }, timeout: 30_000 });
}

/** A self-signed certificate for the names the tests dial (127.0.0.2, 127.0.0.1, localhost). */
function selfSigned(): { cert: string; key: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ipython-mcp-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=ipython-mcp test', '-addext', `subjectAltName=IP:${REMOTE},IP:127.0.0.1,DNS:localhost`,
    '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  return { cert, key, dir };
}

describe('allowed hosts', () => {
  it('a 0.0.0.0 bind serves through a listed address; an unlisted Host or Origin gets 403 and runs nothing', async () => {
    const server = await start(remoteArgs);
    expect(server.url).toMatch(new RegExp(`^http://${REMOTE.replaceAll('.', '\\.')}:\\d+/mcp$`));
    expect(server.stderr()).toMatch(/WARNING: .*clear text/);
    const client = await connectHttp(server.url, server.token);
    clients.push(client);
    expectOk(await client.structured('execute', { code: 'x = 41\nx + 1' }));
    const port = new URL(server.url).port;
    const marker = join(mkdtempSync(join(tmpdir(), 'ipython-mcp-marker-')), 'ran');
    const call = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'execute', arguments: { code: `open(${JSON.stringify(marker)}, 'w').write('x')` } } });
    const session = { 'Mcp-Session-Id': client.transport.sessionId as string, 'Mcp-Protocol-Version': '2025-06-18' };
    for (const [what, headers] of [
      ['an unlisted name', { Host: `evil.example:${port}` }],
      ['an unlisted address', { Host: `10.1.2.3:${port}` }],
      ['an unlisted name without a port', { Host: 'evil.example' }],
      ['a Host with junk for a port', { Host: `${REMOTE}:http` }],
      ['an unlisted Origin', { Origin: 'http://evil.example' }],
      ['an Origin of another scheme', { Origin: `file://${REMOTE}` }],
    ] as const) {
      const answer = await rawPost(server, call, { ...session, ...headers });
      expect(answer.status, what).toBe(403);
      expect(answer.text, what).toContain('--http-allow-host');
    }
    expect(existsSync(marker)).toBe(false);
    // The listed name and the loopback names pass with any port or none (a tunnel or proxy changes the port).
    for (const host of [REMOTE, `${REMOTE}:${port}`, `${REMOTE}:1`, 'localhost', `localhost:${port}`, '127.0.0.1', `[::1]:${port}`, '[::1]', 'LOCALHOST']) {
      expect((await rawPost(server, initialize(), { Host: host })).status, host).toBe(200);
    }
    expect((await rawPost(server, initialize(), { Origin: `https://${REMOTE}:4443` })).status).toBe(200);
    expect((await rawPost(server, call, { ...session, Origin: `http://${REMOTE}:${port}` })).status).toBe(200);
    expect(existsSync(marker)).toBe(true);
    expect((await client.structured('execute', { code: 'x' })).result.value).toBe(41);
  });

  it('IPYTHON_MCP_HTTP_ALLOWED_HOSTS lists names too (comma-separated), and a flag wins over it', async () => {
    const fromEnv = await start(['--http', '0.0.0.0:0', '--http-allow-remote'], { IPYTHON_MCP_HTTP_ALLOWED_HOSTS: `gpu-box.example, ${REMOTE}` });
    expect(fromEnv.url).toContain('gpu-box.example');
    expect((await rawPost({ ...fromEnv, url: fromEnv.url.replace('gpu-box.example', REMOTE) }, initialize())).status).toBe(200);
    expect((await rawPost({ ...fromEnv, url: fromEnv.url.replace('gpu-box.example', REMOTE) }, initialize(), { Host: 'gpu-box.example' })).status).toBe(200);
  });

  it.each([
    [['--http', '0.0.0.0:0', '--http-allow-remote'], '--http-allow-host'],
    [['--http', '[::]:0', '--http-allow-remote'], '--http-allow-host'],
    [['--http', '0.0.0.0:0', '--http-allow-remote', '--http-allow-host', 'http://gpu-box'], 'not a host name'],
    [['--http', '0.0.0.0:0', '--http-allow-remote', '--http-allow-host', 'gpu-box:8765'], 'not a host name'],
    [['--http', '0.0.0.0:0', '--http-allow-remote', '--http-allow-host', '*.example.com'], 'not a host name'],
    [['--http', '0.0.0.0:0', '--http-allow-remote', '--http-allow-host', '300.1.1.1'], 'IPv4'],
    [['--http', '127.0.0.1:0', '--http-tls-cert', '/nonexistent/cert.pem'], '--http-tls-key go together'],
    [['--http', '127.0.0.1:0', '--http-tls-cert', '/nonexistent/cert.pem', '--http-tls-key', '/nonexistent/key.pem'], 'cannot read the TLS certificate'],
    [['setup', '--http-allow-host', REMOTE], 'only apply to serving'],
  ])('%j exits 2 with a clear message and starts nothing', (args, message) => {
    const result = cli(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('ready on');
  });

  it('a certificate and a key that are not a pair exit 2 before listening', () => {
    const a = selfSigned();
    const b = selfSigned();
    const result = cli(['--http', '127.0.0.1:0', '--http-tls-cert', a.cert, '--http-tls-key', b.key]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('do not load together');
    const junk = join(a.dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate\n');
    expect(cli(['--http', '127.0.0.1:0', '--http-tls-cert', junk, '--http-tls-key', a.key]).status).toBe(2);
  });
});

/** One HTTPS POST that trusts `ca`; resolves with the status and body. */
function httpsPost(url: string, body: string, headers: Record<string, string>, ca: string | undefined): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        ...(ca === undefined ? {} : { ca }),
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': String(Buffer.byteLength(body)), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTPS', () => {
  it('serves MCP over TLS with a self-signed certificate a client trusts; doctor --url checks it with NODE_EXTRA_CA_CERTS', async () => {
    const tls = selfSigned();
    const server = await start([...remoteArgs, '--http-tls-cert', tls.cert, '--http-tls-key', tls.key]);
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.2:\d+\/mcp$/);
    expect(server.stderr()).toContain('over TLS');
    expect(server.stderr()).not.toContain('clear text');
    const ca = readFileSync(tls.cert, 'utf8');
    const auth = { Authorization: `Bearer ${server.token}` };
    const opened = await httpsPost(server.url, initialize(), auth, ca);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('"serverInfo"');
    // A client that does not trust the certificate gets no answer at all, and nothing runs.
    await expect(httpsPost(server.url, initialize(), auth, undefined)).rejects.toThrow(/self.signed|certificate/i);
    // Plain HTTP to the TLS port is not served.
    const plain = await new Promise<string>((resolve) => {
      const req = httpRequest(server.url.replace('https:', 'http:'), { method: 'POST' }, (res) => resolve(`status ${res.statusCode}`));
      req.on('error', (error) => resolve(error.message));
      req.end(initialize());
    });
    expect(plain).not.toBe('status 200');
    const env = { IPYTHON_MCP_HTTP_TOKEN: server.token, NODE_EXTRA_CA_CERTS: tls.cert };
    const doctor = spawnSync(process.execPath, [CLI, 'doctor', '--url', server.url], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
    expect(doctor.stdout, doctor.stderr).toMatch(/^ok {3}http: https:\/\/127\.0\.0\.2/m);
    expect(doctor.status).toBe(0);
    const untrusted = spawnSync(process.execPath, [CLI, 'doctor', '--url', server.url], { encoding: 'utf8', env: { ...process.env, IPYTHON_MCP_HTTP_TOKEN: server.token }, timeout: 60_000 });
    expect(untrusted.status).toBe(1);
    expect(untrusted.stdout).toContain('NODE_EXTRA_CA_CERTS');
  });
});

describe('idle connections', () => {
  it('a keep-alive connection idle for 60 s is reused for the next request without an error', async () => {
    const server = await start([]);
    const client = await connectHttp(server.url, server.token);
    clients.push(client);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const session = { 'Mcp-Session-Id': client.transport.sessionId as string, 'Mcp-Protocol-Version': '2025-06-18', Authorization: `Bearer ${server.token}` };
    const call = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'execute', arguments: { code: `${id} * 2` } } });
    const post = (id: number) =>
      new Promise<{ status: number; reused: boolean; text: string; keepAlive: string | undefined }>((resolve, reject) => {
        const target = new URL(server.url);
        const req = httpRequest(
          { agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...session } },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => {
              text += chunk.toString('utf8');
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, text, keepAlive: res.headers['keep-alive'] as string | undefined }));
          },
        );
        req.on('error', reject);
        req.end(call(id));
      });
    const first = await post(1);
    expect(first.status).toBe(200);
    expect(first.reused).toBe(false);
    // The server says how long it keeps an idle connection, so a Node client's pool can keep it as long.
    expect(first.keepAlive).toBe('timeout=120');
    await new Promise((resolve) => setTimeout(resolve, 61_000));
    const second = await post(2);
    expect(second.status).toBe(200);
    expect(second.reused).toBe(true);
    expect(second.text).toContain('"value":4');
    agent.destroy();
  }, 120_000);
});
