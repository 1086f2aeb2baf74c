// The human and the agent in one kernel on a real Jupyter Kernel Gateway, standing in for a remote Enterprise
// Gateway: `ipython-mcp --jupyter URL --kernel-name python3` starts the kernel on the gateway (the built binary over
// stdio, a real SDK client), and jupyter_client on the kernel's connection file is the human. The checks are those
// of jupyter.e2e on a Jupyter server: the human's df read by the agent, the agent's helper() called by the human,
// the agent's cell on IOPub and in In, discovery that runs no hanging property, an agent call waiting behind the
// human's 5 s cell, a 2 s deadline that interrupts sleep(1e6) and keeps df. Nothing is left behind.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, taggedProcesses, type TestServer } from './harness.js';
import { humanCellMarkers, humanExecute, startHumanExecute, startJupyter, startKernelServer, watchKernel, type RunningJupyter } from './jupyter-harness.js';

const TAG = randomUUID();

let gateway: RunningJupyter;
let agent: TestServer;
let kernelId: string;

const markers = humanCellMarkers();

beforeAll(async () => {
  gateway = await startJupyter('gateway');
  agent = await startKernelServer(gateway, ['--kernel-name', 'python3'], { IPYTHON_MCP_TEST_RUN_TAG: TAG });
  // The kernel the namespace lives in, as runtime_status names it (a gateway does not let anyone list its kernels).
  expect((await agent.structured('execute', { code: '0' })).execution_count).toBeTypeOf('number');
  const status = await agent.structured('runtime_status', {});
  expect(status.backend).toMatchObject({ kind: 'jupyter', kernel_name: 'python3', policy: 'owned' });
  kernelId = status.backend.kernel_id as string;
}, 120_000);

afterAll(async () => {
  markers.remove();
  await agent?.close();
  if (gateway !== undefined) {
    // Every kernel ipython-mcp started on the gateway (the active one and a warm standby) is shut down with it.
    expect(await eventually(() => gateway.descendants(), (pids) => pids.length === 0, 20_000)).toEqual([]);
    await gateway.stop();
  }
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
}, 60_000);

describe('the human and the agent in one kernel on a Kernel Gateway (--kernel-name python3)', () => {
  it("the human sets df; the agent's execute reads it", async () => {
    expect(humanExecute(gateway, kernelId, 'import pandas as pd\ndf = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})')).toMatch(/^ok/);
    const read = await agent.structured('execute', { code: 'int(df["b"].sum())' });
    expect(read.result.value).toBe(15);
  });

  it('the agent defines helper(); the human calls it', async () => {
    await agent.structured('execute', { code: 'def helper(scale=2):\n    return int(df["a"].sum()) * scale' });
    expect(humanExecute(gateway, kernelId, 'helper()')).toBe('ok\n12\n');
  });

  it("the human sees the agent's cell on IOPub and in In", async () => {
    const watch = watchKernel(gateway, kernelId, 'agent was here', 30);
    await watch.listening;
    const code = 'print("agent was here")';
    const ran = await agent.structured('execute', { code });
    expect(ran.stdout).toBe('agent was here\n');
    const seen = await watch.seen;
    expect(seen).toContainEqual(expect.objectContaining({ type: 'execute_input', code, execution_count: ran.execution_count }));
    expect(seen).toContainEqual({ type: 'stream', text: 'agent was here\n' });
    expect(humanExecute(gateway, kernelId, `print(In[${ran.execution_count}])`)).toBe(`ok\n${code}\n\n`);
  });

  it("the agent's list, search and inspect never run a property that hangs", async () => {
    humanExecute(gateway, kernelId, 'class Trap:\n    @property\n    def boom(self):\n        import time\n        time.sleep(1e6)\ntrap = Trap()');
    const started = Date.now();
    const listed = await agent.call('list', {});
    expect(listed.isError).toBeFalsy();
    expect(JSON.stringify(listed.structuredContent)).toContain('helper');
    const found = await agent.structured('search', { query: 'trap' });
    expect(JSON.stringify(found)).toContain('trap');
    const inspected = await agent.call('inspect', { name: 'trap' });
    expect(inspected.isError).toBeFalsy();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(humanExecute(gateway, kernelId, 'print("free")')).toBe('ok\nfree\n\n');
  });

  it("an agent call made while the human's 5 s cell runs waits, then runs", async () => {
    const human = startHumanExecute(gateway, kernelId, `${markers.startedMarker('waits')}\nimport time\ntime.sleep(5)\nhuman_cell_done = True`);
    await markers.humanCellRunning('waits');
    const started = Date.now();
    const after = await agent.structured('execute', { code: 'human_cell_done' });
    expect(after.result.value).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(2_500);
    expect(await human).toMatch(/^ok/);
  });

  it('a 2 s deadline on sleep(1e6) interrupts it through the gateway and keeps df', async () => {
    const started = Date.now();
    const slow = await agent.call('execute', { code: 'import time\ntime.sleep(1e6)', timeout_seconds: 2 });
    const body = slow.structuredContent as Record<string, any>;
    expect(body.error.code).toBe('operation_timeout');
    expect(body.runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved', epoch: 1 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await agent.structured('execute', { code: 'df.shape' })).result.value).toEqual([3, 2]);
    expect(humanExecute(gateway, kernelId, 'print(df.shape)')).toBe('ok\n(3, 2)\n\n');
  });
});
