// The human and the agent in one kernel on a real Jupyter Kernel Gateway (standing in for a remote Enterprise
// Gateway): `ipython-mcp --jupyter URL --kernel-name python3` starts the kernel on the gateway over a real stdio MCP
// client, and a real jupyter_client on the kernel's connection file is the human. The checks of a kernel on a
// Jupyter server, here: the human's df read by the agent, the agent's helper() called by the human, the agent's
// cell seen on IOPub and in In, discovery that never runs a hanging property, an agent call waiting behind the
// human's 5 s cell, and a 2 s deadline that interrupts sleep(1e6) and keeps df. Nothing is left behind.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectOk, startServer, taggedProcesses, testPython, type TestServer } from './harness.js';
import { humanExecute, startJupyter, type RunningJupyter } from '../../../packages/jupyter-kernel/test/jupyter-servers.js';

const TAG = randomUUID();
const HUMAN_CLIENT = fileURLToPath(new URL('../../../packages/jupyter-kernel/test/human-client.py', import.meta.url));
const IOPUB_WATCH = fileURLToPath(new URL('./fixtures/iopub_watch.py', import.meta.url));

let gateway: RunningJupyter;
let agent: TestServer;
let kernelId: string;

/** The kernel ipython-mcp runs the namespace in: runtime_status names it; else the one connection file there is. */
async function activeKernelId(server: TestServer): Promise<string> {
  const status = JSON.stringify(await server.structured('runtime_status'));
  const named = /"kernel_id":"([0-9a-f-]{36})"/.exec(status)?.[1];
  if (named !== undefined) return named;
  const files = readdirSync(gateway.runtimeDir).filter((name) => /^kernel-.*\.json$/.test(name));
  expect(files).toHaveLength(1);
  return files[0]!.slice('kernel-'.length, -'.json'.length);
}

function connectionFile(): string {
  return join(gateway.runtimeDir, `kernel-${kernelId}.json`);
}

/** The human's cell, run to its end (reply status, then what it showed). */
function human(code: string): string[] {
  return humanExecute(gateway, kernelId, code).split('\n');
}

/** The human's cell started in the background; resolves with its output once it is done. */
function humanInBackground(code: string): { running: Promise<string[]>; startedAt: number } {
  const child = spawn(testPython(), [HUMAN_CLIENT, connectionFile(), code], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const running = new Promise<string[]>((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve(stdout.split('\n')) : reject(new Error(`human-client.py exited ${String(code)}`))));
  });
  return { running, startedAt: performance.now() };
}

beforeAll(async () => {
  gateway = await startJupyter('gateway');
  agent = await startServer(
    { IPYTHON_MCP_TEST_RUN_TAG: TAG, JUPYTER_TOKEN: gateway.token, IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2' },
    ['--jupyter', gateway.url, '--kernel-name', 'python3'],
  );
  expectOk(await agent.structured('execute', { code: '0' }));
  kernelId = await activeKernelId(agent);
}, 120_000);

afterAll(async () => {
  await agent?.close();
  // The kernel ipython-mcp started on the gateway is shut down when it exits: no kernel process is left.
  if (gateway !== undefined) {
    expect(await eventually(() => gateway.descendants(), (pids) => pids.length === 0, 15_000)).toEqual([]);
    await gateway.stop();
  }
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
});

describe('the human and the agent in one kernel on a Kernel Gateway (--kernel-name python3)', () => {
  it('the human sets df; the agent reads it', async () => {
    expect(human('import pandas as pd\ndf = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})')[0]).toBe('ok');
    const read = await agent.structured('execute', { code: 'int(df["a"].sum() + df["b"].sum())' });
    expect(read.result.value).toBe(21);
  });

  it('the agent defines helper(); the human calls it', async () => {
    expectOk(await agent.structured('execute', { code: 'def helper(n):\n    return n * 3 + 1' }));
    expect(human('print(helper(13))')).toEqual(['ok', '40', '']);
  });

  it('the human sees the agent\'s cell on IOPub and in In', async () => {
    const marker = `agent_mark_${randomUUID().slice(0, 8)}`;
    const watcher = spawn(testPython(), [IOPUB_WATCH, connectionFile(), marker, '60'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let watched = '';
    watcher.stdout.on('data', (chunk: Buffer) => (watched += chunk.toString()));
    const exited = new Promise<void>((resolve) => watcher.once('exit', () => resolve()));
    await eventually(() => watched, (text) => text.startsWith('ready'), 30_000);
    const ran = await agent.structured('execute', { code: `${marker} = 7\n${marker} * 6` });
    expect(ran.result.value).toBe(42);
    await exited;
    const seen = JSON.parse(watched.split('\n')[1]!) as { code: string; execution_count: number; result?: string };
    expect(seen.code).toBe(`${marker} = 7\n${marker} * 6`);
    expect(seen.execution_count).toBe(ran.execution_count);
    expect(seen.result).toBe('42');
    const history = human(`print(In[${ran.execution_count}])`);
    expect(history.slice(1).join('\n')).toContain(`${marker} * 6`);
  });

  it('list, search and inspect never run a property that hangs', async () => {
    expect(human('import time\nclass Slow:\n    @property\n    def hangs(self):\n        time.sleep(10**6)\nslow = Slow()')[0]).toBe('ok');
    const startedAt = performance.now();
    const listed = await agent.call('list', {});
    expect(listed.isError).toBeFalsy();
    expect(JSON.stringify(listed.structuredContent)).toContain('slow');
    const found = await agent.call('search', { query: 'slow' });
    expect(found.isError).toBeFalsy();
    const inspected = await agent.call('inspect', { name: 'slow' });
    expect(inspected.isError).toBeFalsy();
    expect(JSON.stringify(inspected.structuredContent)).toContain('Slow');
    expect(performance.now() - startedAt).toBeLessThan(10_000);
    expect((await agent.structured('execute', { code: '6 * 7' })).result.value).toBe(42);
  });

  it('an agent call made while the human\'s 5 s cell runs waits, then runs', async () => {
    const flag = join(gateway.rootDir, `human-cell-${randomUUID()}`);
    const { running, startedAt } = humanInBackground(`import time\nopen(${JSON.stringify(flag)}, "w").close()\ntime.sleep(5)\nhuman_done = True`);
    // The human's cell is running before the agent asks.
    await eventually(() => existsSync(flag), (there) => there, 30_000);
    const asked = performance.now();
    const after = await agent.structured('execute', { code: 'human_done' });
    const answered = performance.now();
    expect(after.result.value).toBe(true);
    expect((await running)[0]).toBe('ok');
    expect(answered - startedAt).toBeGreaterThanOrEqual(5_000);
    expect(answered - asked).toBeGreaterThan(3_000);
  });

  it('a 2 s deadline on sleep(1e6) interrupts it and keeps df', async () => {
    const startedAt = performance.now();
    const result = await agent.call('execute', { code: 'import time\ntime.sleep(1e6)', timeout_seconds: 2 });
    expect(result.isError).toBe(true);
    const body = result.structuredContent as Record<string, any>;
    expect(body.error.code).toBe('operation_timeout');
    expect(body.runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved', epoch: 1 });
    expect(performance.now() - startedAt).toBeLessThan(10_000);
    expect((await agent.structured('execute', { code: 'int(df["a"].sum())' })).result.value).toBe(6);
    expect(human('print(df.shape)')).toEqual(['ok', '(3, 2)', '']);
  });
});
