// The memory guard meeting another stop of the same cell, through a real MCP client over stdio and the local worker
// (issue 51): the cell's handler of the deadline's (or a `job` stop's) interrupt grows past the memory limit, held
// by a global (the worker is replaced for memory) or past the hard margin (killed). The result names the first stop
// and the memory guard, with the limit, the peak and the new epoch; runtime_status agrees; the server keeps answering.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startServer, taggedProcesses, type TestServer } from './harness.js';

const TAG = randomUUID();
const LIMIT_MB = 300;
/** limit + max(limit / 4, 64 MiB) */
const HARD_MB = LIMIT_MB + 75;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG, IPYTHON_MCP_MEMORY_LIMIT_MB: String(LIMIT_MB), IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '4' });
});
afterAll(async () => {
  await server.close();
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

/** Sleeps until interrupted; then grows to about `mb` MiB of worker memory, held by a global, and re-raises. */
async function handlerCell(mb: number, grow: boolean): Promise<string> {
  const now = (await server.structured('runtime_status')).memory_mb as number;
  const add = mb - now;
  const allocate = grow ? [`    for _ in range(${Math.ceil(add / 8)}):`, "        held.append(b'x' * 2**23)"] : [`    held.append(b'x' * (${add} * 2**20))`];
  return ['import time', 'held = []', 'try:', '    time.sleep(10**6)', 'except KeyboardInterrupt:', ...allocate, '    time.sleep(0.5)', '    raise'].join('\n');
}

async function expectAnswering(epoch: number): Promise<void> {
  const status = await server.structured('runtime_status');
  expect(status).toMatchObject({ state: 'ready', epoch });
  expect(status.memory_mb).toBeLessThan(LIMIT_MB);
  expect((await server.structured('execute', { code: '6 * 7' })).result.value).toBe(42);
}

describe('the memory guard during another stop’s grace, over MCP stdio', () => {
  it('a deadline, then memory a global holds: replaced for memory, and the result says so', async () => {
    const epoch = (await server.structured('runtime_status')).epoch as number;
    const call = await server.call('execute', { code: await handlerCell(LIMIT_MB + 30, false), timeout_seconds: 0.5 });
    expect(call.isError).toBe(true);
    const body = call.structuredContent as Record<string, any>;
    expect(body.error.code).toBe('operation_timeout');
    expect(body.error.message).toMatch(new RegExp(`^the operation passed its deadline; then, while it was being stopped, it grew past the memory limit \\(${LIMIT_MB} MB\\) \\(peak \\d+ MB\\); the worker was replaced and the namespace reset$`));
    expect(body.error.details.memory).toMatchObject({ trigger: 'watch', limit_mb: LIMIT_MB, replaced_worker: true });
    expect(body.error.details.memory.peak_mb).toBeGreaterThanOrEqual(LIMIT_MB);
    expect(body.runtime).toMatchObject({ interruption: 'timeout', namespace: 'reset', epoch: epoch + 1 });
    expect((await server.structured('runtime_status')).last_interruption).toEqual({ kind: 'timeout', namespace: 'reset', epoch: epoch + 1 });
    await expectAnswering(epoch + 1);
  }, 60_000);

  it('a job stop, then past the hard margin: killed, replaced once, and the result names the stop and the kill', async () => {
    const epoch = (await server.structured('runtime_status')).epoch as number;
    const look = await server.structured('execute', { code: await handlerCell(HARD_MB + 150, true), detach_after_seconds: 0.3, timeout_seconds: 60 });
    expect(look.status).toBe('running');
    const stopped = await server.call('job', { job: look.job, stop: true });
    expect(stopped.isError).toBe(true);
    const body = stopped.structuredContent as Record<string, any>;
    expect(body.error.code).toBe('operation_cancelled');
    expect(body.error.message).toMatch(
      new RegExp(`^stopped by the job tool: the operation was cancelled; then, while it was being stopped, the worker passed the memory limit \\(${LIMIT_MB} MB\\) by more than its hard margin \\(${HARD_MB} MB\\) and was killed \\(peak \\d+ MB\\); the worker was replaced and the namespace reset$`),
    );
    expect(body.error.details.memory).toMatchObject({ trigger: 'hard', limit_mb: LIMIT_MB, replaced_worker: true });
    expect(body.runtime).toMatchObject({ interruption: 'cancelled', namespace: 'reset', epoch: epoch + 1 });
    await expectAnswering(epoch + 1);
  }, 60_000);
});
