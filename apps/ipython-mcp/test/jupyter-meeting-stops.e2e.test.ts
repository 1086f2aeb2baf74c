// A client's cancel meeting the deadline on a Jupyter kernel (issue 51): the same dispatch path as the local worker
// (one stop, one interrupt, verification), with the interrupt going through the Jupyter server's REST API to the
// kernel. A real MCP client over stdio cancels a sleeping cell at a sweep of moments around its deadline, on a kernel
// ipython-mcp started and on one the person started (never restarted): every stop is one interrupt, the state kept.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, taggedProcesses, type TestServer } from './harness.js';
import { kernelIds, startHumanKernel, startJupyter, startKernelServer, type KernelFlags, type RunningJupyter } from './jupyter-harness.js';

const TAG = randomUUID();
const DEADLINE_SECONDS = 0.5;
/**
 * When the client cancels, in ms after it sent the call: around the deadline, when the cell is well into its sleep.
 * (Early cancels, at the worst moments on purpose, are jupyter-interrupt-heard.e2e.test.ts's.)
 */
const CANCEL_AT_MS = [440, 470, 490, 495, 498, 500, 502, 505, 510, 530, 560];

let jupyter: RunningJupyter;
beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 120_000);
afterAll(async () => {
  await jupyter?.stop();
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
});

/** The server's JSON log lines of `event`. */
function logged(server: TestServer, event: string): Record<string, any>[] {
  return server
    .stderr()
    .split('\n')
    .filter((line) => line.includes(`"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

async function sweep(kernel: KernelFlags): Promise<void> {
  const server = await startKernelServer(jupyter, kernel, {
    IPYTHON_MCP_TEST_RUN_TAG: TAG,
    IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '3',
    IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '30',
    IPYTHON_MCP_LOG_LEVEL: 'debug',
  });
  try {
    await server.call('execute', { code: 'kept = "before"' });
    for (const [index, at] of CANCEL_AT_MS.entries()) {
      const controller = new AbortController();
      const call = server.client.callTool(
        { name: 'execute', arguments: { code: 'import time\ntime.sleep(10**6)', timeout_seconds: DEADLINE_SECONDS } },
        undefined,
        { signal: controller.signal, timeout: 60_000 },
      );
      const timer = setTimeout(() => controller.abort(), at);
      await call.catch(() => undefined);
      clearTimeout(timer);
      const [line] = (await eventually(async () => logged(server, 'op.interrupted').slice(index), (lines) => lines.length >= 1, 15_000)) as Record<string, any>[];
      const label = `cancel at ${at} ms`;
      expect(line, label).toMatchObject({ namespace: 'preserved', epoch: 1 });
      expect(['cancelled', 'timeout'], label).toContain(line!.interruption);
    }
    expect(await server.structured('runtime_status')).toMatchObject({ epoch: 1, state: 'ready' });
    expect((await server.structured('execute', { code: 'kept' })).result.value).toBe('before');
    expect(logged(server, 'op.interrupted')).toHaveLength(CANCEL_AT_MS.length);
    expect(logged(server, 'op.interrupt_sent')).toHaveLength(CANCEL_AT_MS.length);
  } finally {
    await server.close();
  }
}

describe('a client cancel meeting the deadline, on a Jupyter kernel', () => {
  it('on a kernel ipython-mcp started: one interrupt per stop, the state kept', async () => {
    await sweep(['--kernel-name', 'python3']);
  }, 180_000);

  it('on the person’s kernel: one interrupt per stop, the state kept, the kernel never restarted', async () => {
    const id = await startHumanKernel(jupyter);
    try {
      await sweep(['--kernel', id]);
      expect(await kernelIds(jupyter)).toContain(id);
    } finally {
      await jupyter.rest('DELETE', `api/kernels/${id}`);
    }
  }, 180_000);
});
