import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { eventually, testPython, waitForExit } from '@ipython-mcp/test-support';

export { childPids, eventually, isAlive, processGroupMembers, survivors, taggedProcesses, testPython, waitForExit } from '@ipython-mcp/test-support';

/** The built binary under test. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/**
 * The two ways the fault matrix runs: the same cases and expectations, with the worker spawned directly
 * and inside the opt-in sandbox. Environment, not a flag, so a file's own server helpers need no change.
 */
export const SANDBOX_MODES = [
  { mode: 'unsandboxed', sandboxed: false, env: {} as Record<string, string> },
  { mode: 'inside --sandbox', sandboxed: true, env: { IPYTHON_MCP_SANDBOX: '1' } as Record<string, string> },
] as const;

/** A running server with a connected SDK client. */
export interface TestServer {
  client: Client;
  transport: StdioClientTransport;
  serverPid: number;
  stderr: () => string;
  transportErrors: Error[];
  /** Notifications the client has no handler of its own for (log messages, list changes), in arrival order. */
  notifications: Array<{ method: string; params?: Record<string, any> }>;
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
  structured: (name: string, args?: Record<string, unknown>) => Promise<Record<string, any>>;
  close: () => Promise<void>;
}

/** Spawns the built binary over stdio with extra env and connects a real MCP client. */
export async function startServer(env: Record<string, string> = {}, args: string[] = [], clientName = 'ipython-mcp-tests'): Promise<TestServer> {
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
  const client = new Client({ name: clientName, version: '1.0.0' }, { capabilities: {} });
  const transportErrors: Error[] = [];
  client.onerror = (error) => transportErrors.push(error);
  const notifications: TestServer['notifications'] = [];
  client.fallbackNotificationHandler = async (notification) => {
    notifications.push(notification as TestServer['notifications'][number]);
  };
  await client.connect(transport);
  // With the tool list cached, the SDK client validates every structured result against its tool's output schema.
  await client.listTools();
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
    notifications,
    call,
    structured: async (name, callArgs) => (await call(name, callArgs)).structuredContent as Record<string, any>,
    close: async () => {
      await client.close().catch(() => undefined);
      await waitForExit(serverPid, 10_000);
    },
  };
}

/** The worker's pid, asked of the worker itself. */
export async function workerPid(server: TestServer): Promise<number> {
  const result = await server.structured('execute', { code: 'import os as _os\n_os.getpid()' });
  return result.result.value as number;
}


/**
 * The server's JSON log lines for `event` (e.g. "op.interrupted") that pass `accept`, once at least `atLeast` are
 * there. The log comes on stderr, a pipe apart from the protocol on stdout: a line written before a result or a
 * status answer can still be on its way when that answer is read (seen on loaded machines).
 */
export async function loggedLines(
  server: TestServer,
  event: string,
  accept: (line: Record<string, unknown>) => boolean = () => true,
  atLeast = 1,
): Promise<Record<string, unknown>[]> {
  const read = async () =>
    server
      .stderr()
      .split('\n')
      .filter((line) => line.includes(`"${event}"`))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter(accept);
  return eventually(read, (lines: Record<string, unknown>[]) => lines.length >= atLeast, 10_000);
}

/** The full runtime metadata every namespace result carries in `_meta` (the structured `runtime` is compact). */
export function fullRuntime(result: CallToolResult): Record<string, any> {
  const runtime = (result._meta as Record<string, unknown> | undefined)?.['ipython-mcp/runtime'];
  expect(runtime, 'the result carries _meta["ipython-mcp/runtime"]').toBeTypeOf('object');
  return runtime as Record<string, any>;
}

/**
 * Asserts an execute result is a clean success in the compact shape: no status (its default is "ok"), no error,
 * and no runtime object (nothing new to say).
 */
export function expectOk(structured: Record<string, any>): void {
  expect(structured, JSON.stringify(structured.error)).not.toHaveProperty('status');
  expect(structured).not.toHaveProperty('error');
  expect(typeof structured.execution_count).toBe('number');
}
