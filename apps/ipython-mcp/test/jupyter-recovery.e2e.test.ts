// The kernel comes back, with no restart of ipython-mcp: a real `jupyter server` on loopback, the built binary over
// stdio with a real SDK client as the agent, and the person's everyday actions through the REST API and
// jupyter_client: a REST restart by another client (what JupyterLab's toolbar does), a stuck cell freed or the
// kernel restarted, a notebook's kernel shut down and replaced, the server killed and started again on the same port
// (--kernel-name, --notebook, --kernel ID), an owned kernel killed while idle. Every agent call writes its number to a
// ledger file before anything else: a call answered as failed must not be in it, and a call answered ok is in it
// exactly once. The time to recovery is printed ([measure]). After each test no kernel ipython-mcp asked for is left.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, taggedProcesses, type TestServer } from './harness.js';
import { kernelIds, startHumanKernel, startJupyter, startKernelServer, type KernelFlags, type RunningJupyter } from './jupyter-harness.js';

const TAG = randomUUID();
const BASE_ENV = {
  IPYTHON_MCP_TEST_RUN_TAG: TAG,
  IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '20',
  IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2',
  IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '30',
};

let jupyter: RunningJupyter;
let scratch: string;
/** Kernels the person started (REST, sessions): theirs to keep; deleted by the test afterwards. */
let personKernels: string[] = [];
let servers: TestServer[] = [];

beforeAll(async () => {
  jupyter = await startJupyter('server');
  scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-recovery-'));
}, 120_000);

afterEach(async () => {
  for (const server of servers) await server.close();
  servers = [];
  // Every kernel ipython-mcp asked for is shut down at exit: only the person's are left.
  const left = await eventually(() => kernelIds(jupyter), (ids) => ids.every((id) => personKernels.includes(id)), 15_000);
  expect(left.filter((id) => !personKernels.includes(id))).toEqual([]);
  for (const id of personKernels) await jupyter.rest('DELETE', `api/kernels/${id}`);
  personKernels = [];
  expect(await eventually(() => kernelIds(jupyter), (ids) => ids.length === 0, 15_000)).toEqual([]);
  expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 10_000)).toEqual([]);
}, 60_000);

afterAll(async () => {
  await jupyter?.stop();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

const body = (result: CallToolResult): Record<string, any> => (result.structuredContent ?? {}) as Record<string, any>;
const text = (result: CallToolResult): string => ((result.content ?? []) as Array<{ text?: string }>).map((part) => part.text ?? "").join("\n");

async function attach(kernel: KernelFlags, server: RunningJupyter = jupyter, env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startKernelServer(server, kernel, { ...BASE_ENV, ...env });
  servers.push(started);
  return started;
}

/** The agent's calls, each numbered in a ledger file the code writes first. */
class Agent {
  readonly ledger = join(scratch, `ledger-${randomUUID()}.txt`);
  /** `ok`: the code ran to an answer (a Python exception included); `code`: the failure's code otherwise. */
  readonly answers: Array<{ n: number; ok: boolean; code?: string | undefined }> = [];
  #next = 1;

  constructor(readonly server: TestServer) {
    writeFileSync(this.ledger, '');
  }

  /** One call: `code` after the ledger line; the answer is recorded. */
  async call(code: string): Promise<CallToolResult> {
    const n = this.#next++;
    const result = await this.server.call('execute', { code: `open(${JSON.stringify(this.ledger)}, "a").write("${n}\\n")\n${code}` });
    const error = result.isError === true ? body(result).error : undefined;
    // A Python exception is the code's own answer: it ran.
    const ran = error === undefined || typeof error.type === 'string';
    this.answers.push({ n, ok: ran, code: ran ? undefined : String(error?.code ?? JSON.stringify(result.content).slice(0, 200)) });
    return result;
  }

  /**
   * Calls until one answers ok, waiting the `retry_after_ms` an answer gives (else 250 ms), as an agent would.
   * @returns the ok answer, the failed ones, and the time it took
   */
  async untilOk(code: string, boundMs = 90_000): Promise<{ answer: CallToolResult; failed: CallToolResult[]; ms: number }> {
    const started = performance.now();
    const failed: CallToolResult[] = [];
    for (;;) {
      const answer = await this.call(code);
      if (answer.isError !== true) return { answer, failed, ms: Math.round(performance.now() - started) };
      failed.push(answer);
      if (performance.now() - started > boundMs) throw new Error(`no recovery within ${boundMs} ms: ${JSON.stringify(failed.slice(-3).map(body))}`);
      const after = body(answer).error?.retry_after_ms;
      await new Promise((resolve) => setTimeout(resolve, typeof after === 'number' ? Math.min(after, 5_000) : 250));
    }
  }

  /** No call answered as failed ran, and every call answered ok ran exactly once. */
  expectHonest(exempt: number[] = []): void {
    const ran = readFileSync(this.ledger, 'utf8').split('\n').filter(Boolean).map(Number);
    for (const answer of this.answers) {
      if (exempt.includes(answer.n)) continue;
      const times = ran.filter((n) => n === answer.n).length;
      expect(times, `call ${answer.n} answered ${answer.ok ? 'ok' : answer.code} ran ${times} times`).toBe(answer.ok ? 1 : 0);
    }
  }
}

function summary(failed: CallToolResult[]): string {
  return failed.map((answer) => body(answer).error?.code).join(', ') || 'none';
}

/** A notebook session the person opens (JupyterLab's "open notebook"): its kernel is theirs. */
async function openNotebook(server: RunningJupyter, path: string): Promise<string> {
  const created = await server.rest('POST', 'api/sessions', { path, name: path, type: 'notebook', kernel: { name: 'python3' } });
  expect(created.status).toBe(201);
  const session = created.body as { id: string; kernel: { id: string } };
  if (server === jupyter) personKernels.push(session.kernel.id);
  return session.id;
}

describe('restarted from Jupyter by another client', () => {
  it('between calls: the next call runs on the restarted kernel, re-booted, and says the epoch changed, once', async () => {
    const kernelId = await startHumanKernel(jupyter);
    personKernels.push(kernelId);
    const agent = new Agent(await attach(['--kernel', kernelId]));
    expect((await agent.call('kept = 1\nkept')).isError).not.toBe(true);
    const restartedAt = performance.now();
    expect((await jupyter.rest('POST', `api/kernels/${kernelId}/restart`)).status).toBe(200);
    const { answer, failed, ms } = await agent.untilOk('2 + 2');
    console.log(`[measure] REST restart by another client -> next call ok after ${ms} ms (${Math.round(performance.now() - restartedAt)} ms after the restart), failed before: ${summary(failed)}`);
    expect(failed).toEqual([]);
    expect(body(answer).result.value).toBe(4);
    // The answer that first shows the new epoch names who ended the old one: another client's restart, not a crash.
    expect(body(answer).runtime).toMatchObject({ epoch: 2, epoch_reason: 'other_client', kernel_action: 'restart' });
    expect(text(answer)).toContain('another client of the kernel restarted the kernel');
    // Said once: the next answer shows no runtime block; the names are gone for everyone, as the epoch said.
    const next = await agent.call('3 + 3');
    expect(body(next).runtime).toBeUndefined();
    expect(body(await agent.call('kept')).error.type).toBe('NameError');
    expect(await agent.server.structured('runtime_status')).toMatchObject({ epoch: 2, state: 'ready', last_interruption: { kind: 'other_client', action: 'restart', namespace: 'reset', epoch: 2 } });
    agent.expectHonest();
  });

  it('back-to-back calls while another client restarts the kernel: no cell runs unseen in the new process, every one answered ok ran once', async () => {
    // Each call follows the last one's answer at once, so the kernel was always heard a moment before (no question is
    // asked of it before sending). A call the restart cut may have run in the process that was restarted (as a
    // restart during a cell); none may run in the new one, where the ipython-mcp hooks are not yet.
    const kernelId = await startHumanKernel(jupyter);
    personKernels.push(kernelId);
    const agent = new Agent(await attach(['--kernel', kernelId]));
    const where = join(scratch, `pids-${randomUUID()}.txt`);
    const cut: Array<{ n: number; restarted: number }> = [];
    for (let round = 0; round < 3; round += 1) {
      const before = await agent.call('import os\nos.getpid()');
      const restartedPid = body(before).result.value as number;
      expect(typeof restartedPid).toBe('number');
      let restarted = false;
      const restart = jupyter.rest('POST', `api/kernels/${kernelId}/restart`).finally(() => (restarted = true));
      const started = performance.now();
      while (!restarted && performance.now() - started < 30_000) {
        const n = agent.answers.length + 1;
        const answer = await agent.call(`import os\nopen(${JSON.stringify(where)}, "a").write(f"${n} {os.getpid()}\\n")\n2 + 2`);
        if (answer.isError === true) cut.push({ n, restarted: restartedPid });
      }
      expect((await restart).status).toBe(200);
      await agent.untilOk('3 + 3');
    }
    const ranIn = new Map(
      (existsSync(where) ? readFileSync(where, 'utf8') : '')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ').map(Number) as [number, number]),
    );
    console.log(`[measure] back-to-back calls over 3 REST restarts: ${agent.answers.length} calls; cut by the restart: ${cut.map(({ n }) => `${n} (${ranIn.has(n) ? 'ran in the restarted process' : 'did not run'})`).join(', ') || 'none'}`);
    for (const { n, restarted } of cut) if (ranIn.has(n)) expect(ranIn.get(n), `call ${n}, cut by the restart, ran in a process other than the one restarted`).toBe(restarted);
    agent.expectHonest(cut.filter(({ n }) => ranIn.has(n)).map(({ n }) => n));
  });

  it('during a cell: that call says the kernel restarted; the next one runs', async () => {
    const kernelId = await startHumanKernel(jupyter);
    personKernels.push(kernelId);
    const agent = new Agent(await attach(['--kernel', kernelId]));
    expect((await agent.call('kept = 1')).isError).not.toBe(true);
    const running = agent.call('import time\ntime.sleep(30)');
    await eventually(() => agent.server.structured('runtime_status'), (status) => status.active === true, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await jupyter.rest('POST', `api/kernels/${kernelId}/restart`)).status).toBe(200);
    const cut = await running;
    console.log(`[measure] REST restart during a cell -> that call answered: ${JSON.stringify(cut).slice(0, 400)}`);
    expect(cut.isError).toBe(true);
    expect(body(cut).error.code).toBe('worker_crashed');
    expect(body(cut).error.message).toMatch(/restarted/);
    expect(body(cut).runtime).toMatchObject({ interruption: 'other_client', namespace: 'reset', ran: true });
    const { answer, failed, ms } = await agent.untilOk('5 * 5');
    console.log(`[measure] REST restart during a cell -> next call ok after ${ms} ms, failed before: ${summary(failed)}`);
    expect(failed).toEqual([]);
    expect(body(answer).result.value).toBe(25);
    // The cut cell ran (its ledger line is there): it is the one call allowed to fail after running, and says so.
    agent.expectHonest([2]);
  });
});

describe('an attached kernel stuck in a cell that ignores interrupts', () => {
  const stuckCell = (flag: string): string =>
    ['import os, time', `while not os.path.exists(${JSON.stringify(flag)}):`, '    try:', '        time.sleep(0.2)', '    except KeyboardInterrupt:', '        pass'].join('\n');

  it('runtime_busy with retry_after_ms while stuck; used again once freed (names kept) or restarted (epoch 2)', async () => {
    const kernelId = await startHumanKernel(jupyter);
    personKernels.push(kernelId);
    const agent = new Agent(await attach(['--kernel', kernelId], jupyter, { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '2' }));
    expect((await agent.call('kept = "work"')).isError).not.toBe(true);
    const flag = join(scratch, `free-${randomUUID()}`);
    const stuck = await agent.call(stuckCell(flag));
    expect(body(stuck).error.code).toBe('operation_timeout');
    expect(body(stuck).error.message).toContain('the kernel is stuck running a cell');
    const busy = await agent.call('1');
    expect(body(busy).error.code).toBe('runtime_busy');
    expect(body(busy).error.retry_after_ms).toBeGreaterThan(0);
    expect(body(busy).error.message).toContain('interrupt or restart it from Jupyter');
    expect((await agent.server.structured('runtime_status')).backend).toMatchObject({ stuck: true });
    // The person frees it (the cell ends): the same kernel process, so the names are kept and the epoch stays.
    writeFileSync(flag, '');
    const freed = await agent.untilOk('kept');
    console.log(`[measure] stuck kernel freed -> call ok after ${freed.ms} ms, failed before: ${summary(freed.failed)}`);
    expect(body(freed.answer).result.value).toBe('work');
    expect(freed.failed.every((answer) => body(answer).error.code === 'runtime_busy')).toBe(true);
    expect((await agent.server.structured('runtime_status')).epoch).toBe(1);

    // Stuck again; this time the person restarts the kernel.
    const again = await agent.call(stuckCell(join(scratch, `never-${randomUUID()}`)));
    expect(body(again).error.code).toBe('operation_timeout');
    expect((await jupyter.rest('POST', `api/kernels/${kernelId}/restart`)).status).toBe(200);
    const restarted = await agent.untilOk('6 * 7');
    console.log(`[measure] stuck kernel restarted by the person -> call ok after ${restarted.ms} ms, failed before: ${summary(restarted.failed)}`);
    expect(body(restarted.answer).result.value).toBe(42);
    expect(body(restarted.answer).runtime).toMatchObject({ epoch: 2 });
    // The two stuck cells ran (and were answered operation_timeout, which says so): exempt.
    agent.expectHonest([2, agent.answers.find((answer) => answer.code === 'operation_timeout' && answer.n > 2)!.n]);
  });
});

describe("a notebook's kernel shut down and replaced from Jupyter", () => {
  it('is attached to the notebook session’s new kernel', async () => {
    const path = `nb-${randomUUID()}.ipynb`;
    const first = await openNotebook(jupyter, path);
    const agent = new Agent(await attach(['--notebook', path]));
    expect((await agent.call('kept = 1')).isError).not.toBe(true);
    // The person shuts the kernel down (the session goes with it), then opens the notebook with a new kernel.
    expect((await jupyter.rest('DELETE', `api/sessions/${first}`)).status).toBe(204);
    const between = await agent.call('1');
    expect(between.isError).toBe(true);
    const reopenedAt = performance.now();
    await openNotebook(jupyter, path);
    const { answer, failed, ms } = await agent.untilOk('7 * 6');
    console.log(`[measure] notebook kernel shut down and replaced -> call ok ${ms} ms after the new session (${Math.round(performance.now() - reopenedAt)} ms), failed before: ${summary(failed)}`);
    expect(body(answer).result.value).toBe(42);
    expect((await agent.server.structured('runtime_status')).epoch).toBe(2);
    agent.expectHonest();
  });
});

describe('the Jupyter server killed and started again on the same port', () => {
  let own: RunningJupyter;
  beforeAll(async () => {
    own = await startJupyter('server');
  }, 120_000);
  afterAll(async () => {
    await own?.stop();
  });
  afterEach(async () => {
    for (const server of servers) await server.close();
    servers = [];
    expect(await eventually(() => kernelIds(own), (ids) => ids.length === 0, 15_000)).toEqual([]);
  }, 60_000);

  it('--kernel-name: a new kernel is started on the new server', async () => {
    const agent = new Agent(await attach(['--kernel-name', 'python3'], own));
    expect((await agent.call('kept = 1')).isError).not.toBe(true);
    await own.restart();
    const { answer, failed, ms } = await agent.untilOk('1 + 1');
    console.log(`[measure] server restarted, --kernel-name -> call ok after ${ms} ms, failed before: ${summary(failed)}`);
    expect(body(answer).result.value).toBe(2);
    // The warm standby's kernel went with the old server: it is given up when the server says so, not at the end of
    // the 30 s connect bound (which this took before).
    expect(ms).toBeLessThan(15_000);
    expect((await agent.server.structured('runtime_status')).epoch).toBeGreaterThan(1);
    agent.expectHonest();
    await agent.server.close();
    servers = servers.filter((server) => server !== agent.server);
  });

  it('--notebook: the notebook’s new session and kernel are found', async () => {
    const path = `nb-${randomUUID()}.ipynb`;
    await openNotebook(own, path);
    const agent = new Agent(await attach(['--notebook', path], own));
    expect((await agent.call('kept = 1')).isError).not.toBe(true);
    await own.restart();
    const reopened = await openNotebook(own, path);
    const { answer, failed, ms } = await agent.untilOk('1 + 2');
    console.log(`[measure] server restarted, --notebook -> call ok after ${ms} ms, failed before: ${summary(failed)}`);
    expect(body(answer).result.value).toBe(3);
    agent.expectHonest();
    await agent.server.close();
    servers = servers.filter((server) => server !== agent.server);
    await own.rest('DELETE', `api/sessions/${reopened}`);
  });

  it('--kernel ID: says the kernel is gone, and attaches once a kernel of that id is back', async () => {
    const kernelId = await startHumanKernel(own);
    const agent = new Agent(await attach(['--kernel', kernelId], own));
    expect((await agent.call('kept = 1')).isError).not.toBe(true);
    await own.restart();
    const said = await agent.call('0');
    expect(said.isError).toBe(true);
    console.log(`[measure] server restarted, --kernel ID -> first call: ${body(said).error.code}: ${String(body(said).error.message).slice(0, 200)}`);
    const status = await agent.server.structured('runtime_status');
    expect(status.state).toBe('unavailable');
    expect(status.error).toMatch(/No running kernel has this id|went away|No Jupyter server answered/);
    const later = await agent.call('0');
    expect(body(later).error.code).toBe('runtime_unavailable');
    expect(body(later).error.retry_after_ms).toBeGreaterThan(0);
    // The kernel comes back under the same id (the person starts it so): ipython-mcp attaches to it.
    expect((await own.rest('POST', 'api/kernels', { name: 'python3', kernel_id: kernelId })).status).toBe(201);
    const { answer, failed, ms } = await agent.untilOk('2 + 3');
    console.log(`[measure] server restarted, --kernel ID -> call ok ${ms} ms after the kernel was back, failed before: ${summary(failed)}`);
    expect(body(answer).result.value).toBe(5);
    agent.expectHonest();
    await agent.server.close();
    servers = servers.filter((server) => server !== agent.server);
    await own.rest('DELETE', `api/kernels/${kernelId}`);
  });
});

describe('an owned kernel that dies while idle', () => {
  it('the next call runs on its replacement and says the epoch changed', async () => {
    const agent = new Agent(await attach(['--kernel-name', 'python3']));
    const pid = body(await agent.call('import os\nos.getpid()')).result.value as number;
    process.kill(pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { answer, failed, ms } = await agent.untilOk('8 * 8');
    console.log(`[measure] owned kernel killed while idle -> call 0.5 s later ok after ${ms} ms, failed before: ${summary(failed)}`);
    expect(failed).toEqual([]);
    expect(body(answer).result.value).toBe(64);
    expect(body(answer).runtime).toMatchObject({ epoch: 2 });
    agent.expectHonest();
  });

  it('killed the moment after a call, the next call at once: its cell never runs unseen in the replacement', async () => {
    // The kernel was heard a moment before, so nothing is asked of it before the cell goes: the cell waits in the
    // server's queue while the server notices the death (its restarter polls every 3 s) and starts a new process.
    const agent = new Agent(await attach(['--kernel-name', 'python3']));
    const pid = body(await agent.call('import os\nos.getpid()')).result.value as number;
    process.kill(pid, 'SIGKILL');
    const first = await agent.call('5 * 5');
    console.log(`[measure] owned kernel killed, next call at once -> ${first.isError === true ? `${body(first).error.code}: ${String(body(first).error.message).slice(0, 160)}` : 'ok'}`);
    if (first.isError !== true) expect(body(first).runtime).toMatchObject({ epoch: 2 });
    const { answer } = await agent.untilOk('8 * 8');
    expect(body(answer).result.value).toBe(64);
    // A call answered as failed never ran (in the replacement, without the hooks, it would have run unseen).
    agent.expectHonest();
  });
});
