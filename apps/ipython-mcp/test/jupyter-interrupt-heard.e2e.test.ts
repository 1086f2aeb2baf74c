// An interrupt of the agent's cell on a Jupyter kernel is never lost (decisions/0013): a real jupyter_server, the
// person's kernel, the built binary over stdio with a real MCP client that cancels its call at the worst moments on
// purpose. Early: a sweep of moments from the call's sending on, so the interrupt lands while the kernel dispatches
// the cell, while IPython and the kernel side's hooks run, in the cell's first lines. At the switch: a cell that runs
// a long C call and then time.sleep, cancelled at a sweep of moments around the end of the C call, where a SIGINT
// finds no check before the sleep blocks. Every stop is heard well within the grace period, the namespace kept, the
// kernel never restarted, and the person's cells run untouched.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, taggedProcesses, type TestServer } from './harness.js';
import { humanExecute, kernelIds, startHumanKernel, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

const TAG = randomUUID();
/** Long, so that a lost interrupt cannot pass for a heard one: the bound below is well inside it. */
const GRACE_SECONDS = 10;
/** From the cancel to the answer of the next call (`kept`): a heard interrupt takes tens of ms. */
const HEARD_WITHIN_MS = 4_000;
/** When the client cancels, in ms after sending the call: from before the kernel has the cell to well into it. */
const EARLY_CANCEL_AT_MS = Array.from({ length: 24 }, (_, index) => index * 3);

let jupyter: RunningJupyter;
let kernelId: string;
let agent: TestServer;
let scratch: string;

beforeAll(async () => {
  jupyter = await startJupyter('server');
  kernelId = await startHumanKernel(jupyter);
  agent = await startKernelServer(jupyter, ['--kernel', kernelId], {
    IPYTHON_MCP_TEST_RUN_TAG: TAG,
    IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: String(GRACE_SECONDS),
    IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '30',
    IPYTHON_MCP_LOG_LEVEL: 'debug',
  });
  scratch = mkdtempSync(join(tmpdir(), 'interrupt-heard-'));
}, 120_000);

afterAll(async () => {
  await agent?.close();
  await jupyter?.rest('DELETE', `api/kernels/${kernelId}`).catch(() => undefined);
  await jupyter?.stop();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
});

/** The server's JSON log lines of `event`. */
function logged(event: string): Record<string, any>[] {
  return agent
    .stderr()
    .split('\n')
    .filter((line) => line.includes(`"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/**
 * Sends `code` as an execute, cancels it when `cancelAt` resolves, and returns how long after the cancel the next
 * call (reading `kept`) was answered, with what.
 */
async function cancelAndRead(code: string, cancelAt: () => Promise<void>): Promise<{ ms: number; kept: unknown }> {
  const controller = new AbortController();
  const call = agent.client.callTool({ name: 'execute', arguments: { code } }, undefined, { signal: controller.signal, timeout: 60_000 });
  call.catch(() => undefined);
  await cancelAt();
  controller.abort();
  const cancelled = Date.now();
  await call.catch(() => undefined);
  const read = await agent.structured('execute', { code: 'kept' });
  return { ms: Date.now() - cancelled, kept: read.result?.value };
}

/** The person's cell runs to its end, untouched (no KeyboardInterrupt, nothing aborted). */
function personCellRuns(label: string): void {
  expect(humanExecute(jupyter, kernelId, 'import time\ntime.sleep(0.05)\nprint("person ran")'), label).toBe('ok\nperson ran\n\n');
}

describe("the agent's cell on the person's kernel, cancelled at the worst moments", () => {
  it('every early cancel is heard: the namespace kept, the person untouched', async () => {
    expect(humanExecute(jupyter, kernelId, 'kept = "before"')).toMatch(/^ok/);
    const before = logged('op.interrupted').length;
    for (const [index, at] of EARLY_CANCEL_AT_MS.entries()) {
      const label = `cancel ${at} ms after the call`;
      const { ms, kept } = await cancelAndRead('import time\nsum(range(3 * 10**6))\ntime.sleep(10**6)', () => new Promise((resolve) => setTimeout(resolve, at)));
      expect(kept, label).toBe('before');
      expect(ms, label).toBeLessThan(HEARD_WITHIN_MS);
      if (index % 4 === 3) personCellRuns(label);
    }
    const stops = logged('op.interrupted').slice(before);
    // A cancel that came before the call reached the kernel withdraws it (nothing ran, nothing to interrupt).
    for (const stop of stops) expect(stop, JSON.stringify(stop)).toMatchObject({ interruption: 'cancelled', namespace: 'preserved', epoch: 1 });
    personCellRuns('after the early sweep');
  }, 300_000);

  it('every cancel around the end of a long C call before a sleep is heard', async () => {
    const timed = await agent.structured('execute', { code: 'import time\n_t0 = time.perf_counter()\nsum(range(10**7))\nround((time.perf_counter() - _t0) * 1000)' });
    const busyMs = timed.result.value as number;
    const before = logged('op.interrupted').length;
    const offsets = Array.from({ length: 16 }, (_, index) => Math.round(busyMs * (0.6 + 0.05 * index)));
    for (const [index, offset] of offsets.entries()) {
      const label = `cancel ${offset} ms into a ${busyMs} ms C call`;
      const started = join(scratch, `started-${index}`);
      const code = `import time\nopen(${JSON.stringify(started)}, "w").close()\nsum(range(10**7))\ntime.sleep(10**6)`;
      const { ms, kept } = await cancelAndRead(code, async () => {
        expect(await eventually(() => existsSync(started), Boolean, 30_000), `${label}: the cell started`).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, offset));
      });
      expect(kept, label).toBe('before');
      expect(ms, label).toBeLessThan(HEARD_WITHIN_MS);
    }
    const stops = logged('op.interrupted').slice(before);
    expect(stops).toHaveLength(offsets.length);
    for (const stop of stops) expect(stop, JSON.stringify(stop)).toMatchObject({ interruption: 'cancelled', namespace: 'preserved', epoch: 1 });
    personCellRuns('after the switch sweep');
    expect(await agent.structured('runtime_status')).toMatchObject({ epoch: 1, state: 'ready' });
    expect(await kernelIds(jupyter)).toContain(kernelId);
  }, 300_000);
});
