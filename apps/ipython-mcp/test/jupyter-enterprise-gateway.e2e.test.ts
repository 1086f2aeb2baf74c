// ipython-mcp on a real Jupyter Enterprise Gateway (3.x, from PyPI, its own .venv-eg because it pins jupyter_client
// 6 and jupyter_server 1), with kernels as local processes (no cluster): `--kernel-name python3` starts the kernel
// there, a kernel start parameter (KERNEL_USERNAME from ipython-mcp's environment) reaches the kernel, a deadline
// interrupts the agent's cell and keeps the namespace, and no kernel is left on the gateway after exit.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, taggedProcesses, type TestServer } from './harness.js';
import { enterpriseGatewayPython, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

const TAG = randomUUID();
const available = enterpriseGatewayPython() !== undefined;
if (!available) console.log('[skip] no .venv-eg: tooling/scripts/bootstrap.sh --dev makes the Enterprise Gateway environment');

let gateway: RunningJupyter;
let agent: TestServer | undefined;

beforeAll(async () => {
  if (!available) return;
  gateway = await startJupyter('enterprise-gateway');
}, 120_000);

afterAll(async () => {
  await agent?.close();
  if (gateway !== undefined) {
    // The gateway lists its kernels: none is left once ipython-mcp exited, and no kernel process either.
    const listed = await gateway.rest('GET', 'api/kernels');
    if (listed.status === 200) expect(listed.body).toEqual([]);
    expect(await eventually(() => gateway.descendants(), (pids) => pids.length === 0, 20_000)).toEqual([]);
    await gateway.stop();
  }
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
}, 60_000);

describe.skipIf(!available)('ipython-mcp on Enterprise Gateway (--kernel-name python3)', () => {
  it('starts a kernel with the KERNEL_* start parameters, runs, interrupts at the deadline, keeps state', async () => {
    agent = await startKernelServer(gateway, ['--kernel-name', 'python3'], {
      IPYTHON_MCP_TEST_RUN_TAG: TAG,
      KERNEL_USERNAME: 'agent-alice',
      IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '3',
    });
    const first = await agent.structured('execute', { code: 'import os\nkept = 41\nos.environ.get("KERNEL_USERNAME")' });
    expect(first.result.value).toBe('agent-alice');
    const status = await agent.structured('runtime_status', {});
    expect(status.backend).toMatchObject({ kind: 'jupyter', kernel_name: 'python3', policy: 'owned' });
    const kernelId = status.backend.kernel_id as string;
    // The gateway has the kernel ipython-mcp asked for.
    expect((await gateway.rest('GET', `api/kernels/${kernelId}`)).status).toBe(200);
    const slow = await agent.call('execute', { code: 'import time\ntime.sleep(1e6)' });
    expect(slow.isError).toBe(true);
    expect((slow.structuredContent as Record<string, any>).runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved', epoch: 1 });
    expect((await agent.structured('execute', { code: 'kept + 1' })).result.value).toBe(42);
    await agent.close();
    agent = undefined;
    expect(await eventually(async () => (await gateway.rest('GET', `api/kernels/${kernelId}`)).status, (code) => code === 404, 20_000)).toBe(404);
  });
});
