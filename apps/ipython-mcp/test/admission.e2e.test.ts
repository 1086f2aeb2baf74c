// Admission over a real stdio MCP client: the pending bound, runtime_busy, queue_timeout, cancellation
// before and after dispatch, FIFO order, and runtime_status answering out of band while a long cell runs.
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { eventually, expectOk, fullRuntime, loggedLines, startServer, taggedProcesses, type TestServer } from './harness.js';

// ---- helpers (kept in this file: every e2e file owns its own) ----

/** Every process this file starts carries this tag in its environment, so the orphan check sees only ours. */
const TAG = randomUUID();



let servers: TestServer[] = [];

async function start(env: Record<string, string>, args: string[] = []): Promise<TestServer> {
  const server = await startServer(
    {
      IPYTHON_MCP_TEST_RUN_TAG: TAG,
      IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1',
      ...env,
    },
    args,
  );
  servers.push(server);
  // The worker is up before the scenario starts, so the first call of a burst is dispatched at once.
  expectOk(await exec(server, '0'));
  return server;
}

async function exec(server: TestServer, code: string): Promise<Record<string, any>> {
  return server.structured('execute', { code });
}

async function status(server: TestServer): Promise<Record<string, any>> {
  return server.structured('runtime_status');
}

function callExecute(server: TestServer, code: string, signal?: AbortSignal): Promise<CallToolResult> {
  return server.client.callTool({ name: 'execute', arguments: { code } }, undefined, {
    timeout: 120_000,
    ...(signal ? { signal } : {}),
  }) as Promise<CallToolResult>;
}

async function executionCount(server: TestServer): Promise<number> {
  // The probe itself is one executed cell: report the count before it.
  return ((await exec(server, 'None')).execution_count as number) - 1;
}

const body = (result: CallToolResult): Record<string, any> => result.structuredContent as Record<string, any>;
const measurements: string[] = [];

afterEach(async () => {
  for (const server of servers) await server.close();
  servers = [];
});

afterAll(async () => {
  if (measurements.length > 0) console.log(measurements.join('\n'));
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

describe('the pending bound', () => {
  it('a burst of 50 concurrent calls: 1 active, exactly 2 queued, 47 runtime_busy with a retry hint', async () => {
    const server = await start({ IPYTHON_MCP_MAX_PENDING_OPERATIONS: '2' });
    await exec(server, 'order = []');
    const before = await executionCount(server);
    const calls = Array.from({ length: 50 }, (_, index) =>
      callExecute(server, index === 0 ? 'import time\ntime.sleep(1.5)\norder.append(0)' : `order.append(${index})`),
    );
    const results = await Promise.all(calls);
    const busy = results.filter((result) => result.isError && body(result).error?.code === 'runtime_busy');
    const ran = results.filter((result) => !result.isError);
    expect(ran.length).toBe(3);
    expect(busy.length).toBe(47);
    for (const result of busy) {
      const error = body(result).error;
      expect(error.retryable).toBe(true);
      expect(error.retry_after_ms).toBeGreaterThan(0);
      // Never read as the output schema's default "ok" by a program that fills absent fields from it.
      expect(body(result).status).toBe('error');
      // never admitted: no sequence (in the full metadata); the structured result has nothing more to say
      expect(fullRuntime(result).sequence).toBeNull();
      expect(body(result)).not.toHaveProperty('runtime');
      expect((result.content[0] as { text: string }).text).toMatch(/^error runtime_busy: .*\n\[retryable, after \d+ ms\]$/);
    }
    // the active call and the two queued ones, in admission order; nothing rejected ran
    expect(results.slice(0, 3).every((result) => !result.isError)).toBe(true);
    expect((await exec(server, 'order')).result.value).toEqual([0, 1, 2]);
    expect(await executionCount(server)).toBe(before + 1 + 3 + 1);
    const sequences = results.slice(0, 3).map((result) => fullRuntime(result).sequence as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(3);
    // The two queued calls waited about 1.5 s behind the active one: a long wait is shown, the active call's is not.
    expect(body(results[0]!)).not.toHaveProperty('runtime');
    for (const queued of results.slice(1, 3)) {
      expect(body(queued).runtime).toEqual({ sequence: fullRuntime(queued).sequence, queue_wait_ms: fullRuntime(queued).queue_wait_ms });
      expect(body(queued).runtime.queue_wait_ms).toBeGreaterThanOrEqual(1000);
    }
  });

  it('queue wait expiry gives queue_timeout; the expired call never runs and never advances the execution count', async () => {
    const server = await start({ IPYTHON_MCP_QUEUE_WAIT_TIMEOUT_SECONDS: '1' });
    await exec(server, 'ran = []');
    const before = await executionCount(server);
    const slow = callExecute(server, 'import time\ntime.sleep(2.5)');
    await eventually(() => status(server), (value) => value.active === true);
    const queued = await callExecute(server, 'ran.append("queued")');
    expect(queued.isError).toBe(true);
    const failure = body(queued);
    expect(failure.error.code).toBe('queue_timeout');
    expect(failure.status).toBe('error');
    expect(failure.error.retryable).toBe(true);
    // A queue_timeout always shows how long it waited, and its admission sequence.
    expect(Object.keys(failure.runtime).sort()).toEqual(['queue_wait_ms', 'sequence']);
    expect(failure.runtime.sequence).toBeGreaterThan(0);
    expect(failure.runtime.queue_wait_ms).toBeGreaterThanOrEqual(900);
    expect((await slow).isError).toBeFalsy();
    expect((await exec(server, 'ran')).result.value).toEqual([]);
    // the slow cell and the `ran` probe ran; the expired call did not
    expect(await executionCount(server)).toBe(before + 1 + 1 + 1);
  });
});

describe('FIFO and cancellation', () => {
  it('calls run in admission order (each appends its marker; the list comes out sorted)', async () => {
    const server = await start({ IPYTHON_MCP_MAX_PENDING_OPERATIONS: '40' });
    await exec(server, 'order = []');
    const calls = [callExecute(server, 'import time\ntime.sleep(0.5)')];
    for (let index = 1; index <= 30; index += 1) calls.push(callExecute(server, `order.append(${index})`));
    const results = await Promise.all(calls);
    expect(results.every((result) => !result.isError)).toBe(true);
    const order = (await exec(server, 'order')).result.value as number[];
    expect(order).toEqual(Array.from({ length: 30 }, (_, index) => index + 1));
    const sequences = results.map((result) => fullRuntime(result).sequence as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    // queue wait grows along the queue, and the deadline did not count it (nothing timed out)
    expect(fullRuntime(results[30]!).queue_wait_ms).toBeGreaterThanOrEqual(fullRuntime(results[1]!).queue_wait_ms);
  });

  it('cancelling one queued call (notifications/cancelled) removes exactly that call', async () => {
    const server = await start({ IPYTHON_MCP_MAX_PENDING_OPERATIONS: '4' });
    await exec(server, 'order = []');
    const before = await executionCount(server);
    const slow = callExecute(server, 'import time\ntime.sleep(1.5)\norder.append(0)');
    await eventually(() => status(server), (value) => value.active === true);
    const controller = new AbortController();
    const first = callExecute(server, 'order.append(1)');
    const cancelled = callExecute(server, 'order.append(2)', controller.signal);
    const third = callExecute(server, 'order.append(3)');
    expect((await eventually(() => status(server), (value) => value.queue_depth === 3)).queue_depth).toBe(3);
    controller.abort('the user changed their mind');
    await expect(cancelled).rejects.toThrow();
    const after = await eventually(() => status(server), (value) => value.queue_depth === 2, 5_000);
    // removed before dispatch: not an interruption of anything
    expect(after).toMatchObject({ queue_depth: 2, active: true, state: 'busy' });
    expect(after).not.toHaveProperty('last_interruption');
    const results = await Promise.all([slow, first, third]);
    expect(results.every((result) => !result.isError)).toBe(true);
    expect((await exec(server, 'order')).result.value).toEqual([0, 1, 3]);
    expect(await executionCount(server)).toBe(before + 1 + 3 + 1);
  });

  it('cancellation after dispatch follows the interruption path: operation_cancelled, namespace preserved', async () => {
    const server = await start({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' }, ['--log-level', 'info']);
    await exec(server, 'import os\npid = os.getpid()');
    const controller = new AbortController();
    const running = callExecute(
      server,
      'progress = []\nwhile True:\n    if len(progress) < 100000:\n        progress.append(len(progress))',
      controller.signal,
    );
    await eventually(() => status(server), (value) => value.active === true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort('stop it');
    await expect(running).rejects.toThrow();
    const after = await eventually(() => status(server), (value) => value.last_interruption !== null && value.active === false, 5_000);
    expect(after).toMatchObject({ state: 'ready', epoch: 1, last_interruption: { kind: 'cancelled', namespace: 'preserved', epoch: 1 } });
    const checked = await server.call('execute', { code: 'len(progress) > 0, progress[:3], os.getpid() == pid' });
    expect(body(checked).result.value).toEqual([true, [0, 1, 2], true]);
    expect(body(checked)).not.toHaveProperty('runtime');
    expect(fullRuntime(checked).epoch).toBe(1);
    // The SDK drops the answer to a cancelled request, so the outcome is read from the operational log.
    const interrupted = await loggedLines(server, 'op.interrupted');
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]).toMatchObject({ op: 'execute', code: 'operation_cancelled', interruption: 'cancelled', namespace: 'preserved', epoch: 1 });
  });
});

describe('runtime_status is out of band', () => {
  it('answers within 100 ms while a 10 s cell runs, showing busy and the queue depth', async () => {
    const server = await start({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' });
    const controller = new AbortController();
    const long = callExecute(server, 'import time\ntime.sleep(10)', controller.signal);
    await eventually(() => status(server), (value) => value.state === 'busy');
    const queued = callExecute(server, '"queued ran"');
    await eventually(() => status(server), (value) => value.queue_depth === 1);
    const latencies: number[] = [];
    for (let index = 0; index < 7; index += 1) {
      const sentAt = performance.now();
      const current = await status(server);
      latencies.push(performance.now() - sentAt);
      expect(current).toMatchObject({ state: 'busy', active: true, queue_depth: 1, epoch: 1 });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)]!;
    const max = latencies[latencies.length - 1]!;
    measurements.push(`[measure] runtime_status while a 10 s cell runs: median ${median.toFixed(1)} ms, max ${max.toFixed(1)} ms over ${latencies.length} calls`);
    expect(median).toBeLessThan(100);
    expect(max).toBeLessThan(100);
    controller.abort('done measuring');
    await expect(long).rejects.toThrow();
    const ran = await queued;
    expect(body(ran).result.value).toBe('queued ran');
  });
});
