// A quiet stderr on a Jupyter kernel (issue 51 part 3): the Jupyter client library's own lines (`Starting WebSocket:
// ws://…`, `Connection lost, reconnecting…`, `Comm not found…`) are events of our JSON log at a fitting level, with no
// token or query, so that `--log-level error` is quiet and nothing but JSON lines and the ready banner reach stderr;
// and none of them reaches stdout, the MCP channel. Pinned with the kernel's WebSocket dropped under a real client.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, taggedProcesses, type TestServer } from './harness.js';
import { relayTo, startHumanKernel, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

const TAG = randomUUID();
const LIBRARY_LINES = /Starting WebSocket|Connection lost|reconnecting in|Comm not found|Kernel: /;

let jupyter: RunningJupyter;
let kernelId: string;
let servers: TestServer[] = [];
beforeAll(async () => {
  jupyter = await startJupyter('server');
  kernelId = await startHumanKernel(jupyter);
}, 120_000);
afterEach(async () => {
  for (const server of servers) await server.close();
  servers = [];
});
afterAll(async () => {
  await jupyter?.rest('DELETE', `api/kernels/${kernelId}`);
  await jupyter?.stop();
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
});


/** Attaches at `level`, runs a cell, drops the WebSocket, runs another on the reconnected one; returns the server. */
async function dropUnder(level: string, relay: Awaited<ReturnType<typeof relayTo>>): Promise<TestServer> {
  const server = await startKernelServer(relay.jupyter, ['--kernel', kernelId], { IPYTHON_MCP_TEST_RUN_TAG: TAG, IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' }, ['--log-level', level]);
  servers.push(server);
  expect((await server.structured('execute', { code: 'kept = 41' })).error).toBeUndefined();
  expect(relay.drop()).toBeGreaterThan(0);
  const after = await eventually(() => server.call('execute', { code: 'kept + 1' }), (value) => !value.isError, 20_000);
  expect((after.structuredContent as Record<string, any>).result.value).toBe(42);
  return server;
}

/** The stderr lines that are neither a JSON log line nor the ready banner. */
function strayLines(server: TestServer): string[] {
  return server
    .stderr()
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .filter((line) => !(line.startsWith('{') && isJson(line)) && !/^ipython-mcp \S+ ready on stdio \(Jupyter kernel at /.test(line));
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

describe('the Jupyter client library on stderr', () => {
  it('at --log-level error: nothing but the banner, through a dropped WebSocket; stdout carries protocol only', async () => {
    const relay = await relayTo(jupyter);
    try {
      const server = await dropUnder('error', relay);
      expect(strayLines(server)).toEqual([]);
      expect(server.stderr()).not.toMatch(LIBRARY_LINES);
      expect(server.stderr().split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
      // A line of the library on stdout would be a frame the client cannot parse.
      expect(server.transportErrors).toEqual([]);
    } finally {
      await relay.close();
    }
  }, 120_000);

  it('at --log-level debug: the reconnect is a warn event and the WebSocket an opening event, with no token or query', async () => {
    const relay = await relayTo(jupyter);
    try {
      const server = await dropUnder('debug', relay);
      expect(strayLines(server)).toEqual([]);
      const events = server
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>);
      const library = events.filter((event) => String(event.event).startsWith('jupyter.'));
      expect(library.filter((event) => event.event === 'jupyter.websocket_opening').length).toBeGreaterThanOrEqual(2);
      const opening = library.find((event) => event.event === 'jupyter.websocket_opening')!;
      expect(opening).toMatchObject({ level: 'debug', console: 'debug' });
      expect(opening.message).toMatch(new RegExp(`^Starting WebSocket: ws://127\\.0\\.0\\.1:\\d+/api/kernels/${kernelId}(?:/channels)?$`));
      const reconnects = library.filter((event) => event.event === 'jupyter.reconnecting');
      expect(reconnects.length).toBeGreaterThanOrEqual(1);
      for (const event of reconnects) expect(event).toMatchObject({ level: 'warn', console: 'warn', message: expect.stringMatching(/^Connection lost, reconnecting in \d+ seconds\.$/) });
      for (const event of library) {
        expect(event.message).not.toContain(jupyter.token);
        expect(event.message).not.toMatch(/[?&](token|session_id)=/);
      }
      expect(server.stderr()).not.toContain(jupyter.token);
      expect(server.transportErrors).toEqual([]);
    } finally {
      await relay.close();
    }
  }, 120_000);
});
