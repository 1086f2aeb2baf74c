import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The built binary under test. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The Python the tests run workers with: IPYTHON_MCP_TEST_PYTHON, else the repo's .venv. */
export function testPython(): string {
  const fromEnv = process.env.IPYTHON_MCP_TEST_PYTHON;
  if (fromEnv) return fromEnv;
  const local = `${repoRoot}.venv/bin/python`;
  if (existsSync(local)) return local;
  throw new Error('no test Python: run `bash tooling/test.sh` (it creates .venv) or set IPYTHON_MCP_TEST_PYTHON');
}

/** A running server with a connected SDK client. */
export interface TestServer {
  client: Client;
  transport: StdioClientTransport;
  serverPid: number;
  stderr: () => string;
  transportErrors: Error[];
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
  structured: (name: string, args?: Record<string, unknown>) => Promise<Record<string, any>>;
  close: () => Promise<void>;
}

/** Spawns the built binary over stdio with extra env and connects a real MCP client. */
export async function startServer(env: Record<string, string> = {}, args: string[] = []): Promise<TestServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args],
    env: { ...(process.env as Record<string, string>), IPYTHON_MCP_PYTHON: testPython(), ...env },
    stderr: 'pipe',
  });
  let stderrText = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderrText += chunk.toString('utf8');
  });
  const client = new Client({ name: 'ipython-mcp-tests', version: '1.0.0' }, { capabilities: {} });
  const transportErrors: Error[] = [];
  client.onerror = (error) => transportErrors.push(error);
  await client.connect(transport);
  const serverPid = transport.pid;
  if (serverPid === null) throw new Error('server did not start');
  const call = async (name: string, callArgs: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: callArgs }, undefined, { timeout: 120_000 })) as CallToolResult;
  return {
    client,
    transport,
    serverPid,
    stderr: () => stderrText,
    transportErrors,
    call,
    structured: async (name, callArgs) => (await call(name, callArgs)).structuredContent as Record<string, any>,
    close: async () => {
      await client.close().catch(() => undefined);
      await waitForExit(serverPid, 10_000);
    },
  };
}

/** Whether a pid is alive (and not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves true when the pid is gone within `ms`. */
export async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isAlive(pid);
}

/** Pids of every process whose parent is `pid`. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The worker's pid, asked of the worker itself. */
export async function workerPid(server: TestServer): Promise<number> {
  const result = await server.structured('execute', { code: 'import os as _os\n_os.getpid()' });
  return result.result.value as number;
}

/**
 * Live server and worker processes that carry `IPYTHON_MCP_TEST_RUN_TAG=<tag>` in their environment: a test file
 * tags what it starts, so its orphan check sees only its own processes.
 */
export function taggedProcesses(tag: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes('ipython_mcp_worker') && !cmdline.includes('cli.js')) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`IPYTHON_MCP_TEST_RUN_TAG=${tag}`) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** Polls `probe` until `accept` holds or `ms` pass; returns the last value either way. */
export async function eventually<T>(probe: () => Promise<T> | T, accept: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await probe();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await probe();
  }
  return value;
}
