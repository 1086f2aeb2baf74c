// Clean exits on a kernel (issue 62): ipython-mcp stopped with SIGTERM, and again with a second SIGTERM during the
// shutdown grace, while an agent's cell runs in an attached kernel (the person's, never restarted by ipython-mcp).
// The running call is answered runtime_closed, with its runtime block, and the kernel is left idle: at once for a
// cell the interrupt stops, and once it ends by itself for one that outlives the grace. A real `jupyter server`, the
// built binary over stdio with a real SDK client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, waitForExit } from './harness.js';
import { startHumanKernel, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

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
      await new Promise((resolve) => setTimeout(resolve, 200));
      process.kill(agent.serverPid, 'SIGTERM');
      const result = await call;
      expect(result.isError).toBe(true);
      const body = result.structuredContent as Record<string, any>;
      expect(body.error.code, JSON.stringify(body).slice(0, 400)).toBe('runtime_closed');
      expect(body.runtime).toMatchObject({ interruption: 'shutdown', ran: true, stopped_by: null });
      await waitForExit(agent.serverPid, 15_000);
      // The person's kernel is still there, idle, with their names (never restarted).
      await eventually(() => executionState(kernelId), (state) => state === 'idle', 20_000);
      await agent.close();
    }, 90_000);
  }
});
