// A just-promoted worker's very first cell, cancelled or past its deadline on a busy machine, keeps the namespace.
// A standby is handed work the moment it says ready. A worker that warmed its error path only after idling would
// meet a cold first interrupt when promoted inside that window (55-85 ms with CPU hogs, seconds under a whole
// suite's load), which could outlast the grace period and cost the namespace; so every worker warms before ready.
// The grace and the deadline stay as tight as the other fault suites use (1 s): nothing here is loosened to pass.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startServer, taggedProcesses, testPython, workerPid, type TestServer } from './harness.js';

const TAG = randomUUID();
const ROUNDS = 20;
const HOGS = 2;
const ENV = {
  IPYTHON_MCP_TEST_RUN_TAG: TAG,
  IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1',
  IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1',
  IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '30',
};

let server: TestServer;
let scratch: string;
const hogs: ChildProcess[] = [];

async function status(): Promise<Record<string, any>> {
  return server.structured('runtime_status');
}

/**
 * Ends the active worker the moment its standby says ready, so the standby is promoted with as little idle time as
 * the server allows (a worker that warmed only on idling would still be cold), and waits for the promotion.
 * Returns the new epoch.
 */
async function promoteFreshStandby(): Promise<number> {
  const pid = await workerPid(server);
  const before = await eventually(status, (value) => value.standby === 'ready', 60_000);
  expect(before.standby, 'the standby became ready').toBe('ready');
  process.kill(pid, 'SIGKILL');
  const after = await eventually(status, (value) => value.epoch === before.epoch + 1 && value.state === 'ready', 30_000);
  expect(after).toMatchObject({ epoch: before.epoch + 1, state: 'ready' });
  return after.epoch as number;
}

/**
 * The first cell of a round: it records its round and the modules loaded so far, then sleeps until it is stopped.
 * One-time work on the way out (a cold traceback imports stack_data, executing, pygments' formatters) shows as modules
 * imported after the snapshot, which is what makes the round fail on a worker that was not warm, whatever the timing.
 */
function firstCell(round: number, started?: string): string {
  const signal = started === undefined ? '' : `open(${JSON.stringify(started)}, 'w').close()\n`;
  return `import sys, time\nmarker = ${round}\nloaded = set(sys.modules)\n${signal}time.sleep(10**6)`;
}

/**
 * The namespace survived the interruption: same epoch, reported preserved, the cell's own assignment is there, and
 * stopping it (the traceback, the health probe) imported nothing.
 */
async function expectKept(epoch: number, round: number, kind: string): Promise<void> {
  const now = await eventually(status, (value) => value.state === 'ready' && value.last_interruption?.kind === kind);
  expect(now.last_interruption, `round ${round}`).toMatchObject({ kind, namespace: 'preserved', epoch });
  expect(now.epoch, `round ${round}`).toBe(epoch);
  const read = await server.structured('execute', { code: '[marker, sorted(set(sys.modules) - loaded)]' });
  expect(read.result, `round ${round}`).toEqual({ value: [round, []] });
}

beforeAll(async () => {
  for (let index = 0; index < HOGS; index += 1) {
    hogs.push(spawn(testPython(), ['-c', 'while True: pass'], { stdio: 'ignore', env: { ...process.env, IPYTHON_MCP_TEST_RUN_TAG: TAG } }));
  }
  scratch = mkdtempSync(join(tmpdir(), 'first-interrupt-'));
  server = await startServer(ENV);
});

afterAll(async () => {
  for (const hog of hogs) hog.kill('SIGKILL');
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000);
  expect(left).toEqual([]);
});

describe(`a just-promoted worker's first cell, with ${HOGS} CPU hogs running`, () => {
  it(`cancelled by the client, keeps the namespace (${ROUNDS} times in a row)`, async () => {
    for (let round = 1; round <= ROUNDS; round += 1) {
      const epoch = await promoteFreshStandby();
      const controller = new AbortController();
      // The cell says when it runs (a file), so the cancel lands on the running cell, not before it started.
      const started = join(scratch, `started-${round}`);
      const cancelled = server.client.callTool({ name: 'execute', arguments: { code: firstCell(round, started) } }, undefined, { signal: controller.signal, timeout: 60_000 });
      expect(await eventually(() => existsSync(started), Boolean, 30_000), `round ${round}: the cell started`).toBe(true);
      controller.abort();
      await cancelled.catch(() => undefined);
      await expectKept(epoch, round, 'cancelled');
    }
  }, 600_000);

  it(`past its deadline, keeps the namespace (${ROUNDS} times in a row)`, async () => {
    for (let round = 1; round <= ROUNDS; round += 1) {
      const epoch = await promoteFreshStandby();
      const timedOut = await server.structured('execute', { code: firstCell(round) });
      expect(timedOut.error?.code, `round ${round}`).toBe('operation_timeout');
      expect(timedOut.runtime, `round ${round}`).toMatchObject({ namespace: 'preserved', epoch });
      await expectKept(epoch, round, 'timeout');
    }
  }, 600_000);
});
