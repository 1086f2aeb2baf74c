// Fault suite on a Jupyter kernel, over a real stdio MCP client and a real `jupyter server` on loopback with a
// token: bad arguments, huge output, a kernel that exits, a loop that swallows interrupts under both recovery
// policies (an attached kernel is never restarted; a kernel ipython-mcp started is), a Jupyter server killed
// mid-call, 1,000 concurrent calls, and a wrong token, URL or kernel id. Every outcome is pinned, and after every
// test no kernel it started is left on the server and no process it started is alive.
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectOk, fullRuntime, startServer, taggedProcesses, type TestServer } from './harness.js';
import { freePort, humanExecute, relayTo, kernelIds, runCli, startHumanKernel, startJupyter, startKernelServer, type KernelFlags, type RunningJupyter } from './jupyter-harness.js';

// ---- helpers (kept in this file: every e2e file owns its own) ----

/** Every MCP server this file starts carries this tag in its environment, so the orphan check sees only ours. */
const TAG = randomUUID();
const BASE_ENV = {
  IPYTHON_MCP_TEST_RUN_TAG: TAG,
  IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '2',
  IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2',
  IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '30',
};

const SWALLOW_INTERRUPTS = [
  'import time',
  'while True:',
  '    try:',
  '        time.sleep(1)',
  '    except KeyboardInterrupt:',
  '        pass',
].join('\n');

let jupyter: RunningJupyter;
/** Kernels the tests started as the human (REST), deleted after each test. */
let humanKernels: string[] = [];
let servers: TestServer[] = [];

beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 120_000);

afterEach(async () => {
  for (const server of servers) await server.close();
  servers = [];
  // Nothing but the human's kernels is left: a kernel ipython-mcp started is shut down when it exits.
  const left = await eventually(
    () => kernelIds(jupyter),
    (ids) => ids.every((id) => humanKernels.includes(id)),
    15_000,
  );
  expect(left.filter((id) => !humanKernels.includes(id))).toEqual([]);
  for (const id of humanKernels) await jupyter.rest('DELETE', `api/kernels/${id}`);
  humanKernels = [];
  expect(await eventually(() => kernelIds(jupyter), (ids) => ids.length === 0, 15_000)).toEqual([]);
  // No kernel process is left under the server, and no MCP server or helper of ours anywhere.
  expect(await eventually(() => jupyter.descendants(), (pids) => pids.length === 0, 15_000)).toEqual([]);
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
}, 60_000);

afterAll(async () => {
  await jupyter?.stop();
});

/** A kernel the human started (as JupyterLab would): attached by the agent, deleted by the test afterwards. */
async function humanKernel(server: RunningJupyter = jupyter): Promise<string> {
  const id = await startHumanKernel(server);
  if (server === jupyter) humanKernels.push(id);
  return id;
}

/** `ipython-mcp --jupyter URL` on the kernel the flags name, the token in JUPYTER_TOKEN. */
async function attach(kernel: KernelFlags, env: Record<string, string> = {}, server: RunningJupyter = jupyter): Promise<TestServer> {
  const started = await startKernelServer(server, kernel, { ...BASE_ENV, ...env });
  servers.push(started);
  return started;
}

async function exec(server: TestServer, code: string): Promise<Record<string, any>> {
  return server.structured('execute', { code });
}

async function status(server: TestServer): Promise<Record<string, any>> {
  return server.structured('runtime_status');
}

const body = (result: CallToolResult): Record<string, any> => result.structuredContent as Record<string, any>;
const text = (result: CallToolResult): string => (result.content[0] as { text: string }).text;

/** The kernel's own counter, asked by the human (not through ipython-mcp, whose own call would count). */
function humanCount(kernelId: string): number {
  const shown = humanExecute(jupyter, kernelId, 'print(len(In) - 1)').split('\n');
  return Number(shown[1]);
}


// ---- bad arguments: a clear error, nothing runs ----

describe('bad arguments', () => {
  it('each gets invalid_arguments and nothing runs in the kernel', async () => {
    const kernelId = await humanKernel();
    const server = await attach(['--kernel', kernelId]);
    expectOk(await exec(server, 'kept = 1'));
    const before = humanCount(kernelId);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['execute', { code: 5 }],
      ['execute', {}],
      ['execute', { code: 'kept = 2', timeout_seconds: -1 }],
      ['call_function', { name: 'print', arguments: [1] }],
      ['inspect', { name: 'a..b' }],
      ['search', { query: 'a', kinds: ['bogus'] }],
    ];
    for (const [tool, args] of cases) {
      const result = await server.call(tool, args);
      expect(result.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(body(result).error.code, `${tool} ${JSON.stringify(args)}`).toBe('invalid_arguments');
      expect(text(result)).toMatch(/^error invalid_arguments: /);
    }
    // The human's count went up by its own probe only, and the value was not touched.
    expect(humanCount(kernelId)).toBe(before + 1);
    expect((await exec(server, 'kept')).result.value).toBe(1);
  });
});

// ---- huge output: bounded head and tail ----

describe('huge output', () => {
  it('a 10^7-character print comes back as head and tail with the exact omitted count', async () => {
    const kernelId = await humanKernel();
    const server = await attach(['--kernel', kernelId], { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '60' });
    const out = await exec(server, 'print("x" * 10**7)');
    expect(out.stdout).toBe(`${'x'.repeat(8191)}\n`);
    expect(out.stdout_omitted_chars).toBe(10 ** 7 + 1 - 8192);
    expect(out.stdout_omitted_at).toBe(2048);
    expect(out.truncated).toEqual({ stdout: true });
    const many = await exec(server, 'for i in range(200000):\n    print(i)');
    expect(many.truncated).toEqual({ stdout: true });
    expect(many.stdout.startsWith('0\n1\n2\n')).toBe(true);
    expect(many.stdout.endsWith('199998\n199999\n')).toBe(true);
    expect(many.stdout.length).toBeLessThanOrEqual(8192 + 200);
    expect((await exec(server, '6 * 7')).result.value).toBe(42);
  });
});

// ---- the kernel exits ----

/** One worker_crashed that names the kernel's end, with the namespace reset in epoch 2. */
function expectKernelDeath(died: CallToolResult): void {
  expect(died.isError).toBe(true);
  const error = body(died).error;
  expect(error.code).toBe('worker_crashed');
  expect(error.message).toMatch(/^the worker ended during the operation: the kernel worker ended: .*kernel.*(restart|died)/i);
  expect(error.message).toMatch(/the namespace was reset$/);
  expect(error.details).toMatchObject({ exitCode: null, signal: null });
  expect(body(died).runtime).toMatchObject({ interruption: 'crash', namespace: 'reset', epoch: 2 });
  expect(text(died)).toMatch(/^error worker_crashed: /);
}

describe('os._exit(1) in the kernel', () => {
  // The Jupyter server notices a dead kernel by polling (jupyter_client's restarter, every 3 s): the deadline here
  // is roomy, so what is pinned is the death, not a timeout that came first.
  it('a kernel ipython-mcp started: one clear error, then the next call works on a fresh kernel in epoch 2', async () => {
    const server = await attach(['--kernel-name', 'python3'], { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' });
    expectOk(await exec(server, 'before = 1'));
    const first = (await status(server)).backend.kernel_id as string;
    expectKernelDeath(await server.call('execute', { code: 'import os\nos._exit(1)' }));
    expect((await exec(server, '6 * 7')).result.value).toBe(42);
    const gone = await server.call('execute', { code: 'before' });
    expect(body(gone).error.type).toBe('NameError');
    const current = await status(server);
    expect(current).toMatchObject({ epoch: 2, state: 'ready', last_interruption: { kind: 'crash', namespace: 'reset', epoch: 2 } });
    expect(current.backend).toMatchObject({ policy: 'owned' });
    expect(current.backend.kernel_id).not.toBe(first);
  });

  it('an attached kernel: one clear error, the state reported lost; the server restarted the kernel, the next call works', async () => {
    const kernelId = await humanKernel();
    const server = await attach(['--kernel', kernelId], { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' });
    expectOk(await exec(server, 'before = 1'));
    expectKernelDeath(await server.call('execute', { code: 'import os\nos._exit(1)' }));
    // The human's kernel id is the same (the Jupyter server restarted it); its namespace is gone for everyone.
    expect((await exec(server, '6 * 7')).result.value).toBe(42);
    expect(humanExecute(jupyter, kernelId, 'before')).toMatch(/^error\nNameError/);
    expect(await status(server)).toMatchObject({ epoch: 2, state: 'ready', backend: { kernel_id: kernelId, policy: 'attached' } });
  });
});

// ---- a loop that swallows KeyboardInterrupt ----

describe('a swallowed interrupt', () => {
  it('an attached kernel is never restarted: the timeout and runtime_status say it is stuck, later calls are put off; the human restarts it', async () => {
    const kernelId = await humanKernel();
    const server = await attach(['--kernel', kernelId]);
    expectOk(await exec(server, 'kept = "human work"'));
    const stuck = await server.call('execute', { code: SWALLOW_INTERRUPTS });
    expect(stuck.isError).toBe(true);
    const error = body(stuck).error;
    expect(error.code).toBe('operation_timeout');
    expect(error.message).toContain('the kernel is stuck running a cell; ipython-mcp does not restart a kernel it did not start');
    expect(body(stuck).runtime).toMatchObject({ interruption: 'timeout', namespace: 'unknown', epoch: 1 });
    const current = await status(server);
    expect(current).toMatchObject({ state: 'unavailable', epoch: 1, backend: { kernel_id: kernelId, policy: 'attached', stuck: true } });
    expect(current.error).toContain('the kernel is stuck running a cell');
    // Put off, not given up: runtime_busy with when to try again (jupyter-recovery.e2e has the kernel come back).
    const next = await server.call('execute', { code: '1' });
    expect(body(next).error.code).toBe('runtime_busy');
    expect(body(next).error.retry_after_ms).toBeGreaterThan(0);
    expect(body(next).error.message).toContain('interrupt or restart it from Jupyter');
    // Still the human's kernel, still in the loop: ipython-mcp neither restarted nor shut it down.
    expect(await kernelIds(jupyter)).toContain(kernelId);
    expect(((await jupyter.rest('GET', `api/kernels/${kernelId}`)).body as { execution_state: string }).execution_state).toBe('busy');
    expect((await jupyter.rest('POST', `api/kernels/${kernelId}/restart`)).status).toBe(200);
  });

  it('a kernel ipython-mcp started (--kernel-name) is replaced: epoch 2, the next call works', async () => {
    const server = await attach(['--kernel-name', 'python3']);
    expectOk(await exec(server, 'before = 1'));
    const first = (await status(server)).backend.kernel_id as string;
    const stuck = await server.call('execute', { code: SWALLOW_INTERRUPTS });
    expect(stuck.isError).toBe(true);
    expect(body(stuck).error.code).toBe('operation_timeout');
    // The kernel took the cell up (ran), so the answer says it was interrupted while it ran (the runtime block on every answer).
    expect(body(stuck).error.message).toBe('the operation passed its deadline while it ran in the kernel, which was interrupted; the worker was replaced and the namespace reset');
    expect(body(stuck).runtime).toMatchObject({ interruption: 'timeout', namespace: 'reset', epoch: 2 });
    expect((stuck._meta as Record<string, unknown> | undefined)?.['ipython-mcp/runtime']).toMatchObject({ ran: true });
    expect((await exec(server, '6 * 7')).result.value).toBe(42);
    const current = await status(server);
    expect(current).toMatchObject({ epoch: 2, state: 'ready' });
    expect(current.backend.kernel_id).not.toBe(first);
    // The stuck kernel was shut down, not left looping on the server.
    expect(await eventually(() => kernelIds(jupyter), (ids) => !ids.includes(first), 15_000)).not.toContain(first);
  });
});

// ---- the Jupyter server goes away mid-call ----

// ---- a connection that drops and comes back ----


describe('a WebSocket that drops and comes back', () => {
  it('between calls: the next call runs on the same kernel with the namespace kept', async () => {
    const kernelId = await humanKernel();
    const relay = await relayTo(jupyter);
    try {
      const server = await attach(['--kernel', kernelId], { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' }, relay.jupyter);
      expectOk(await exec(server, 'kept = 41'));
      expect(relay.drop()).toBeGreaterThan(0);
      const started = performance.now();
      // A call sent at once goes out on the dying connection and is lost: it is found missing and sent again, once.
      const after = await server.call('execute', { code: 'kept += 1\nkept' });
      console.log(`[measure] WebSocket dropped between calls -> next call answered in ${Math.round(performance.now() - started)} ms: ${after.isError ? text(after).slice(0, 300) : 'ok'}`);
      expect(after.isError ?? false).toBe(false);
      expect(body(after).result.value).toBe(42);
      expect((await exec(server, 'kept')).result.value).toBe(42);
      expect((await status(server)).backend.kernel_id ?? kernelId).toBe(kernelId);
    } finally {
      await relay.close();
    }
  });

  it('during a cell: one clear answer within seconds, no hang; the namespace is kept and the next call runs', async () => {
    const kernelId = await humanKernel();
    const relay = await relayTo(jupyter);
    try {
      const server = await attach(['--kernel', kernelId], { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' }, relay.jupyter);
      expectOk(await exec(server, 'kept = 41'));
      const running = server.call('execute', { code: 'import time\ntime.sleep(3)\nprint("slept")\nkept' });
      await eventually(() => status(server), (value) => value.active !== undefined, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      relay.drop();
      const started = performance.now();
      const answer = await running;
      const tookMs = performance.now() - started;
      console.log(`[measure] WebSocket dropped during a cell -> answered after ${Math.round(tookMs)} ms: ${answer.isError ? `error ${body(answer).error.code}: ${text(answer).slice(0, 160)}` : 'ok'}`);
      expect(tookMs).toBeLessThan(20_000);
      // The services reconnect at once and the server replays what the kernel published meanwhile: the cell's own
      // answer arrives, complete.
      expect(answer.isError ?? false).toBe(false);
      expect(body(answer).stdout).toBe('slept\n');
      expect(body(answer).result.value).toBe(41);
      const next = await eventually(() => server.call('execute', { code: 'kept + 1' }), (value) => !value.isError, 20_000);
      expect(body(next).result.value).toBe(42);
    } finally {
      await relay.close();
    }
  });
});

describe('a killed Jupyter server', () => {
  it('one clear error within seconds (the code may have run), then runtime_unavailable; doctor says the server does not answer', async () => {
    const doomed = await startJupyter('server');
    try {
      const kernelId = await humanKernel(doomed);
      const server = await attach(['--kernel', kernelId], { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '60' }, doomed);
      expectOk(await exec(server, 'x = 1'));
      const running = server.call('execute', { code: 'import time\ntime.sleep(30)' });
      await eventually(() => status(server), (value) => value.active !== undefined, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const killedAt = performance.now();
      for (const pid of [doomed.pid, ...doomed.descendants()]) process.kill(pid, 'SIGKILL');
      const answer = await running;
      const tookMs = performance.now() - killedAt;
      console.log(`[measure] Jupyter server killed mid-call -> error after ${Math.round(tookMs)} ms`);
      // The request waits out a route away for 10 s (a proxy or hub restart) before it is answered without its result.
      expect(tookMs).toBeLessThan(25_000);
      expect(answer.isError).toBe(true);
      const error = body(answer).error;
      expect(error.code).toBe('worker_crashed');
      expect(error.message).toContain('the Jupyter server went away');
      expect(error.message).toContain('No Jupyter server answered at this URL');
      // The route is away, not the kernel declared dead: only the server can say that, and it is not answering.
      expect(error.message).toContain('the code may have run');
      expect(error.details).toMatchObject({ kernel_kept: true });
      const after = await server.call('execute', { code: 'x' });
      expect(body(after).error.code).toBe('runtime_unavailable');
      expect(body(after).error.message).toMatch(/does not answer for the kernel .*waiting for it since /);
      expect(body(after).error.retry_after_ms).toBeGreaterThan(0);
      expect((await status(server)).backend.unreachable).toMatchObject({ since: expect.any(String) });
      const checked = runCli(['doctor', '--jupyter', doomed.url, '--kernel', kernelId], { JUPYTER_TOKEN: doomed.token }, 30_000);
      expect(checked.status).toBe(1);
      expect(checked.stdout).toMatch(/FAIL jupyter server: nothing answered at /);
      expect(checked.ms).toBeLessThan(30_000);
    } finally {
      await doomed.stop();
    }
    // A server of its own to start, a 10 s wait for the route, and doctor's: more than the default bound under load.
  }, 150_000);
});

// ---- 1,000 concurrent calls ----

describe('1,000 concurrent calls', () => {
  it('FIFO admission holds as on the local worker: 1 active + the pending bound answer, the rest runtime_busy', async () => {
    const kernelId = await humanKernel();
    const server = await attach(['--kernel', kernelId], { IPYTHON_MCP_MAX_PENDING_OPERATIONS: '32', IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '60' });
    expectOk(await exec(server, 'order = []'));
    (server.transport as any)._process?.stdin?.setMaxListeners?.(0);
    const calls = Array.from({ length: 1000 }, (_, index) =>
      server.client.callTool(
        { name: 'execute', arguments: { code: index === 0 ? 'import time\ntime.sleep(2)\norder.append(0)' : `order.append(${index})` } },
        undefined,
        { timeout: 120_000 },
      ) as Promise<CallToolResult>,
    );
    const results = await Promise.all(calls);
    const ran = results.filter((result) => !result.isError);
    const busy = results.filter((result) => result.isError && body(result).error?.code === 'runtime_busy');
    console.log(`[measure] 1,000 concurrent calls on a kernel: ${ran.length} ran, ${busy.length} runtime_busy`);
    expect(ran.length).toBe(33);
    expect(busy.length).toBe(967);
    expect(results.slice(0, 33).every((result) => !result.isError)).toBe(true);
    // admitted in order, ran in order; nothing rejected ran
    expect((await exec(server, 'order')).result.value).toEqual(Array.from({ length: 33 }, (_, index) => index));
    const sequences = results.slice(0, 33).map((result) => fullRuntime(result).sequence as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  });
});

// ---- a wrong token, a wrong URL, an unknown kernel id ----

describe('connection mistakes', () => {
  /** Starts the server with a mistake: it starts, and every call fails the same clear way, at once. */
  async function mistake(kernel: KernelFlags, token: string, url = jupyter.url): Promise<string> {
    const server = await startServer({ ...BASE_ENV, JUPYTER_TOKEN: token }, ['--jupyter', url, ...kernel]);
    servers.push(server);
    const messages: string[] = [];
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const startedAt = performance.now();
      const result = await server.call('execute', { code: '1 + 1' });
      expect(performance.now() - startedAt).toBeLessThan(15_000);
      expect(body(result).error.code).toBe('runtime_unavailable');
      messages.push(body(result).error.message as string);
    }
    expect(messages[1]).toBe(messages[0]);
    const current = await status(server);
    expect(current.state).toBe('unavailable');
    expect(messages[0]).toContain(current.error);
    expect(JSON.stringify(current)).not.toContain(token);
    expect(server.stderr()).not.toContain(token);
    return messages[0]!;
  }

  it('a wrong token', async () => {
    const kernelId = await humanKernel();
    const message = await mistake(['--kernel', kernelId], 'not-the-token');
    expect(message).toMatch(/refused the token/);
  });

  it('a wrong URL (nothing listens there)', async () => {
    const port = await freePort();
    const message = await mistake(['--kernel', 'abc'], jupyter.token, `http://127.0.0.1:${port}/`);
    expect(message).toMatch(/No Jupyter server answered/);
  });

  it('an unknown kernel id', async () => {
    const message = await mistake(['--kernel', randomUUID()], jupyter.token);
    expect(message).toMatch(/No running kernel has this id/);
  });
});
