// The HTTP counterpart of harness.ts: the built binary with --http, and real SDK clients over Streamable HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI, testPython, waitForExit } from './harness.js';

/** A running `ipython-mcp --http` process. */
export interface HttpTestServer {
  /** `http://127.0.0.1:PORT/mcp` (https, or another host, when the arguments ask for it). */
  url: string;
  token: string;
  pid: number;
  child: ChildProcess;
  /** ipython-mcp's home for this server (the token file, when generated, is in it). */
  home: string;
  stderr: () => string;
  /** Sends `signal` and resolves with the exit code (null if it had to be killed after `timeoutMs`). */
  stop: (signal?: NodeJS.Signals, timeoutMs?: number) => Promise<number | null>;
}

/** Starts the binary on a free loopback port; resolves once the ready banner names the URL. */
export async function startHttpServer(env: Record<string, string> = {}, args: string[] = []): Promise<HttpTestServer> {
  const home = mkdtempSync(join(tmpdir(), 'ipython-mcp-http-'));
  const token = env.IPYTHON_MCP_HTTP_TOKEN ?? `test-token-${Math.random().toString(36).slice(2)}${Date.now()}`;
  const child = spawn(process.execPath, [CLI, '--http', '127.0.0.1:0', ...args], {
    env: { ...(process.env as Record<string, string>), IPYTHON_MCP_PYTHON: testPython(), IPYTHON_MCP_HOME: home, IPYTHON_MCP_HTTP_TOKEN: token, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderrText = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrText += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let url = '';
  await retry(() => {
    const match = /ready on (https?:\/\/\S+\/mcp)/.exec(stderrText);
    if (match === null) throw new Error(`no ready banner yet: ${stderrText.slice(-500)}`);
    url = match[1] as string;
  }, 30_000);
  return {
    url,
    token,
    pid: child.pid as number,
    child,
    home,
    stderr: () => stderrText,
    stop: async (signal = 'SIGTERM', timeoutMs = 15_000) => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      if (!(await waitForExit(child.pid as number, timeoutMs))) child.kill('SIGKILL');
      return exited;
    },
  };
}

/** A real SDK client on one HTTP session. */
export interface HttpTestClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  notifications: Array<{ method: string; params?: Record<string, any> }>;
  call: (name: string, args?: Record<string, unknown>, signal?: AbortSignal) => Promise<CallToolResult>;
  structured: (name: string, args?: Record<string, unknown>) => Promise<Record<string, any>>;
  close: () => Promise<void>;
}

/** Connects an SDK client with the bearer token to `url` (`/mcp` or `/mcp/NAME`). */
export async function connectHttp(url: string, token: string): Promise<HttpTestClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'ipython-mcp-http-tests', version: '1.0.0' }, { capabilities: {} });
  const notifications: HttpTestClient['notifications'] = [];
  client.fallbackNotificationHandler = async (notification) => {
    notifications.push(notification as HttpTestClient['notifications'][number]);
  };
  await client.connect(transport);
  await client.listTools();
  const call = async (name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) =>
    (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...(signal ? { signal } : {}) })) as CallToolResult;
  return {
    client,
    transport,
    notifications,
    call,
    structured: async (name, args) => (await call(name, args)).structuredContent as Record<string, any>,
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

/**
 * A raw POST (node:http, so `Host` can be set) for the refusals a real client never provokes; the token is sent
 * unless `headers` override it. `body` may be a Buffer of any size.
 */
export function rawPost(
  server: HttpTestServer,
  body: string | Buffer,
  headers: Record<string, string> = {},
  path = '',
): Promise<{ status: number; text: string; contentType: string }> {
  const target = new URL(`${server.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${server.token}`,
          'Content-Length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, contentType: res.headers['content-type'] ?? '' }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `check` (an assertion) every `everyMs` until it passes or `ms` have gone by; then throws its last error. */
export async function retry(check: () => unknown, ms = 10_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}
