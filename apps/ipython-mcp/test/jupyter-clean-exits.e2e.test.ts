// Clean exits on a kernel (issue 62): ipython-mcp stopped with SIGTERM, and again with a second SIGTERM during the
// shutdown grace, while an agent's cell runs in an attached kernel (the person's, never restarted by ipython-mcp).
// The running call is answered runtime_closed, with its runtime block, and the kernel is left idle: at once for a
// cell the interrupt stops, and once it ends by itself for one that outlives the grace. A real `jupyter server`, the
// built binary over stdio with a real SDK client. And no process an agent's cell started outlives its ipython-mcp:
// one sent to the background in its own session by an earlier cell, and one a cell still running started, on an
// attached and on an owned kernel.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, isAlive, waitForExit } from './harness.js';
import { kernelIds, startHumanKernel, startJupyter, startKernelServer, type KernelFlags, type RunningJupyter } from './jupyter-harness.js';

let jupyter: RunningJupyter;
const personKernels: string[] = [];

beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 120_000);

afterAll(async () => {
  for (const kernelId of personKernels) await jupyter?.rest('DELETE', `api/kernels/${kernelId}`);
  await jupyter?.stop();
});

async function executionState(kernelId: string): Promise<string> {
  const model = await jupyter.rest('GET', `api/kernels/${kernelId}`);
  return String((model.body as { execution_state?: unknown } | undefined)?.execution_state);
}

const CELLS = {
  // Stopped by the shutdown's interrupt.
  'plain cell': 'import time\ntime.sleep(60)',
  // Catches the shutdown's interrupt and goes on past the grace (2 s): the worker is ended while it runs.
  'cell outliving the grace': 'import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    time.sleep(5)',
};

describe('a second SIGTERM during the shutdown grace (attached kernel)', () => {
  for (const [name, code] of Object.entries(CELLS)) {
    it(`a ${name}: the call is answered runtime_closed, ipython-mcp exits, the kernel is left idle`, async () => {
      const kernelId = await startHumanKernel(jupyter);
      personKernels.push(kernelId);
      const agent = await startKernelServer(jupyter, ['--kernel', kernelId], { IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2' });
      expect((await agent.call('execute', { code: 'kept = 1' })).isError).not.toBe(true);
      const call = agent.call('execute', { code, timeout_seconds: 120 });
      await eventually(() => agent.structured('runtime_status'), (status: Record<string, any>) => status.active === true, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      process.kill(agent.serverPid, 'SIGTERM');
      // The second SIGTERM lands while the first one's shutdown runs. A plain cell stops at the shutdown's interrupt,
      // and ipython-mcp may have exited already (its whole shutdown can take less than this pause): nothing to signal.
      await new Promise((resolve) => setTimeout(resolve, 50));
      try {
        process.kill(agent.serverPid, 'SIGTERM');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH' || name !== 'plain cell') throw error;
      }
      const result = await call;
      expect(result.isError).toBe(true);
      const body = result.structuredContent as Record<string, any>;
      expect(body.error.code, JSON.stringify(body).slice(0, 400)).toBe('runtime_closed');
      expect(body.runtime).toMatchObject({ interruption: 'shutdown', ran: true, stopped_by: null });
      await waitForExit(agent.serverPid, 15_000);
      // The person's kernel is still there, idle, with their names (never restarted).
      expect(await eventually(() => executionState(kernelId), (state) => state === 'idle', 20_000)).toBe('idle');
      await agent.close();
    }, 90_000);
  }
});

/** Starts `sleep 600` in a session of its own (out of the kernel's process group), and returns its pid. */
const BACKGROUND = "import subprocess\nsubprocess.Popen(['sleep', '600'], start_new_session=True).pid";

describe("a cell's subprocess does not outlive ipython-mcp's shutdown", () => {
  const kernels: Array<[string, () => Promise<KernelFlags>]> = [
    [
      'attached (--kernel)',
      async () => {
        const kernelId = await startHumanKernel(jupyter);
        personKernels.push(kernelId);
        return ['--kernel', kernelId];
      },
    ],
    ['owned (--kernel-name)', async () => ['--kernel-name', 'python3']],
  ];
  for (const [name, flags] of kernels) {
    it(`${name}: a background process of an earlier cell and one of the running cell end with it; the person's kernel is kept`, async () => {
      const kernel = await flags();
      const agent = await startKernelServer(jupyter, kernel, { IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2' });
      const earlier = (await agent.structured('execute', { code: BACKGROUND })).result.value as number;
      expect(isAlive(earlier)).toBe(true);
      const pidFile = join(mkdtempSync(join(tmpdir(), 'ipython-mcp-clean-exit-')), 'child');
      const runningCell = [
        'import subprocess, time',
        "child = subprocess.Popen(['sleep', '600'], start_new_session=True)",
        `open(${JSON.stringify(pidFile)}, 'w').write(str(child.pid))`,
        'time.sleep(60)',
      ].join('\n');
      const call = agent.call('execute', { code: runningCell, timeout_seconds: 120 });
      const child = await eventually(async () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0), (pid) => pid > 0, 15_000);
      expect(isAlive(child)).toBe(true);
      process.kill(agent.serverPid, 'SIGTERM');
      const result = await call;
      expect((result.structuredContent as Record<string, any>).error.code).toBe('runtime_closed');
      await waitForExit(agent.serverPid, 15_000);
      expect(await eventually(async () => isAlive(earlier) || isAlive(child), (alive) => !alive, 10_000)).toBe(false);
      if (kernel[0] === '--kernel') {
        // The person's kernel is kept (never restarted or shut down), idle.
        expect(await kernelIds(jupyter)).toContain(kernel[1]);
        expect(await eventually(() => executionState(kernel[1]), (state) => state === 'idle', 20_000)).toBe('idle');
      }
      await agent.close();
    }, 90_000);
  }
});

describe("a cell's subprocess does not outlive its kernel's server", () => {
  it('the Jupyter server stopped (SIGTERM) under an attached kernel: what the agent’s cells started ends with the kernel', async () => {
    const own = await startJupyter('server');
    let agent: Awaited<ReturnType<typeof startKernelServer>> | undefined;
    try {
      const kernelId = await startHumanKernel(own);
      agent = await startKernelServer(own, ['--kernel', kernelId]);
      const earlier = (await agent.structured('execute', { code: BACKGROUND })).result.value as number;
      expect(isAlive(earlier)).toBe(true);
      // The server shuts its kernels down as it stops (SIGTERM alone: the harness's stop() would also kill every
      // process it saw under the server): the kernel's exit ends what the agent's cells left running.
      process.kill(own.pid, 'SIGTERM');
      expect(await waitForExit(own.pid, 30_000)).toBe(true);
      expect(await eventually(async () => isAlive(earlier), (alive) => !alive, 15_000)).toBe(false);
    } finally {
      await agent?.close();
      await own.stop();
    }
  }, 120_000);
});
