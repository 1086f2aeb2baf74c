// The worker in a kernel against a real `jupyter server`: the backend contract under both policies, and what only
// a shared kernel has: a human's cell that makes the agent's request wait, and a deadline that withdraws it.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime, workerBackendContract } from '@ipython-mcp/worker-supervisor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUCK_KERNEL_MESSAGE, jupyterKernelBackend } from '../src/index.js';
import type { JupyterBackend, JupyterKernelTarget } from '../src/index.js';
import { humanCellMarkers, humanExecute, startHumanExecute, startJupyter } from './jupyter-servers.js';
import type { RunningJupyter } from './jupyter-servers.js';
import { startOptions } from './worker-options.js';

let server: RunningJupyter;
const { startedMarker, humanCellRunning, remove: removeMarkers } = humanCellMarkers();

beforeAll(async () => {
  server = await startJupyter('server');
});

afterAll(async () => {
  await server.stop();
  removeMarkers();
});

function backendFor(target: JupyterKernelTarget): JupyterBackend {
  // Read when used: the contract's cases are listed before beforeAll starts the server.
  const lazyServer = {
    get url(): string {
      return server.url;
    },
    get token(): string {
      return server.token;
    },
  };
  return jupyterKernelBackend({ server: lazyServer, target });
}

function valueOf(outcome: { ok: boolean; result?: unknown }): unknown {
  if (!outcome.ok) return `failed: ${JSON.stringify(outcome)}`;
  return (outcome.result as { result?: { value?: unknown } | null }).result?.value;
}

async function humanKernel(): Promise<string> {
  const started = await server.rest('POST', 'api/kernels', { name: 'python3' });
  return (started.body as { id: string }).id;
}

describe('the worker backend contract on a kernel it starts (owned)', () => {
  let backend: JupyterBackend | undefined;
  afterAll(() => backend?.close());
  for (const contractCase of workerBackendContract(() => ({ backend: (backend ??= backendFor({ kernelName: 'python3' })), startOptions })).filter((each) => each.skip === undefined)) {
    it(contractCase.name, contractCase.run, contractCase.timeoutMs);
  }
});

describe('a runtime on a human kernel (attached)', () => {
  let kernelId: string;
  let backend: JupyterBackend;
  let runtime: Runtime;

  beforeAll(async () => {
    kernelId = await humanKernel();
    backend = backendFor({ kernelId });
    runtime = new Runtime({ python: 'unused', backend, warmStandby: false, interruptionGraceMs: 2_000 });
    runtime.start();
  });

  afterAll(async () => {
    await runtime.close();
    await backend.close();
  });

  it('reads what the human set, and the human calls what the agent defined', async () => {
    humanExecute(server, kernelId, 'df = {"a": [1, 2, 3]}');
    const read = await runtime.run('execute', { code: 'len(df["a"])' });
    expect(valueOf(read)).toBe(3);
    const defined = await runtime.run('execute', { code: 'def helper():\n    return sum(df["a"])' });
    expect(defined.ok).toBe(true);
    expect(humanExecute(server, kernelId, 'helper()')).toBe('ok\n6\n');
    const listed = await runtime.run('list', {});
    expect(listed.ok).toBe(true);
    expect(JSON.stringify(listed.ok && listed.result)).toContain('helper');
  });

  it('waits while the human cell runs, then runs', async () => {
    const human = startHumanExecute(server, kernelId, `${startedMarker('waits')}\nimport time; time.sleep(4); human_done = True`);
    await humanCellRunning('waits');
    const started = Date.now();
    const outcome = await runtime.run('execute', { code: 'human_done' });
    expect(valueOf(outcome)).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(1_000);
    expect(await human).toMatch(/^ok/);
  });

  it('a deadline that expires while the human cell runs fails the call and never interrupts the human', async () => {
    const human = startHumanExecute(server, kernelId, `${startedMarker('deadline')}\nimport time; time.sleep(4); print("human finished")`);
    await humanCellRunning('deadline');
    const outcome = await runtime.run('execute', { code: 'agent_ran = True' }, { timeoutMs: 1_000 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.code).toBe('operation_timeout');
      expect(outcome.meta.namespace).toBe('preserved');
    }
    expect(await human).toContain('human finished');
    const after = await runtime.run('execute', { code: '"agent_ran" in globals()' });
    expect(valueOf(after)).toBe(false);
    expect(runtime.epoch).toBe(1);
  });

  it('a deadline on its own cell interrupts it through the server and keeps the namespace', async () => {
    const outcome = await runtime.run('execute', { code: 'import time; time.sleep(1e6)' }, { timeoutMs: 1_500 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.code).toBe('operation_timeout');
      expect(outcome.meta.namespace).toBe('preserved');
    }
    const read = await runtime.run('execute', { code: 'len(df["a"])' });
    expect(valueOf(read)).toBe(3);
  });

  it('reports where it runs, without the token', () => {
    const status = backend.status();
    expect(status).toMatchObject({ kind: 'jupyter', kernel_id: kernelId, policy: 'attached' });
    expect(JSON.stringify(status)).not.toContain(server.token);
  });
});

describe('the attached policy after a kill', () => {
  it('never restarts the kernel: a start while the killed cell still runs fails as stuck, a later one re-attaches', async () => {
    const kernelId = await humanKernel();
    const backend = backendFor({ kernelId });
    const first = backend.start(startOptions());
    await first.ready;
    expect((await first.request('execute', { code: 'kept = 7' }).reply).ok).toBe(true);
    first.request('execute', { code: 'import time\nfor _ in range(50):\n    time.sleep(0.1)' }).reply.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    first.kill();
    await first.exited;
    const second = backend.start(startOptions());
    await expect(second.ready).rejects.toThrow(STUCK_KERNEL_MESSAGE);
    expect(backend.status().stuck).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const third = backend.start(startOptions());
    await third.ready;
    const reply = await third.request('execute', { code: 'kept' }).reply;
    expect(valueOf(reply)).toBe(7);
    await third.shutdown(2_000);
    expect((await server.rest('GET', `api/kernels/${kernelId}`)).status).toBe(200);
    await backend.close();
  });
});
