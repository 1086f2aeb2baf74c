// Who did what on a kernel several clients share (issue 53 part 4): the runtime block tells a call withdrawn before
// it ran (behind the person's cell, or behind another agent's) from one that ran and was interrupted, and from one
// the person stopped; runtime_status shows the person's side a call that waits behind their cell. A real
// `jupyter server`, two ipython-mcp binaries over stdio with real SDK clients, jupyter_client and REST as the person.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, fullRuntime, type TestServer } from './harness.js';
import { humanCellMarkers, humanExecute, startHumanExecute, startHumanKernel, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

let jupyter: RunningJupyter;
let kernelId: string;
let agent: TestServer;
let other: TestServer;
const markers = humanCellMarkers();
let round = 0;

beforeAll(async () => {
  jupyter = await startJupyter('server');
  kernelId = await startHumanKernel(jupyter);
  [agent, other] = await Promise.all([startKernelServer(jupyter, ['--kernel', kernelId]), startKernelServer(jupyter, ['--kernel', kernelId])]);
  // Both booted: the agent's names are there for the person.
  expect((await agent.structured('execute', { code: 'kept = 41' })).error ?? null).toBeNull();
}, 120_000);

afterAll(async () => {
  await Promise.all([agent?.close(), other?.close()]);
  await jupyter?.stop();
  markers.remove();
});

function body(result: { structuredContent?: unknown }): Record<string, any> {
  return result.structuredContent as Record<string, any>;
}

function text(result: { content?: unknown }): string {
  return (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
}

/** runtime_status's `backend.waiting` of `server`, once it shows a waiting call. */
async function waitingOf(server: TestServer): Promise<Record<string, any>> {
  const status = await eventually(
    async () => server.structured('runtime_status', {}),
    (current: Record<string, any>) => current.backend?.waiting !== undefined,
    15_000,
  );
  return status.backend.waiting as Record<string, any>;
}

/** The agent's 2 s call made while `hold` keeps the kernel busy: withdrawn, with runtime_status seen meanwhile. */
async function withdrawnBehind(hold: (marker: string) => Promise<unknown>): Promise<{ result: Awaited<ReturnType<TestServer['call']>>; waiting: Record<string, any> }> {
  const name = `hold-${round++}`;
  const holding = hold(`${markers.startedMarker(name)}\nimport time\ntime.sleep(6)`);
  await markers.humanCellRunning(name);
  const call = agent.call('execute', { code: 'withdrawn_ran = True', timeout_seconds: 2 });
  const waiting = await waitingOf(agent);
  const result = await call;
  await holding;
  return { result, waiting };
}

describe('who did what', () => {
  const blocks: Record<string, any>[] = [];

  it("a call withdrawn behind the person's cell: never ran, how long it waited, behind the person; runtime_status showed it waiting", async () => {
    const { result, waiting } = await withdrawnBehind((code) => startHumanExecute(jupyter, kernelId, code));
    expect(waiting).toMatchObject({ count: 1, behind: 'person' });
    expect(waiting.since_ms).toBeGreaterThanOrEqual(0);
    expect(body(result).error.code).toBe('operation_timeout');
    expect(body(result).error.message).toContain("before it ran: it never reached the kernel, having waited 2.");
    expect(body(result).error.message).toContain("behind the person's cell");
    const runtime = body(result).runtime;
    expect(runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved', ran: false, waited_behind: 'person', stopped_by: null });
    expect(runtime.kernel_wait_ms).toBeGreaterThanOrEqual(1_900);
    expect(fullRuntime(result)).toMatchObject({ ran: false, waited_behind: 'person' });
    // It never ran, and nothing waits any more.
    expect(humanExecute(jupyter, kernelId, "print('withdrawn_ran' in globals())")).toBe('ok\nFalse\n\n');
    expect((await agent.structured('runtime_status', {})).backend.waiting).toBeUndefined();
    blocks.push(runtime);
  });

  it("a call withdrawn behind another agent's cell says so", async () => {
    const { result, waiting } = await withdrawnBehind(async (code) => {
      const ran = body(await other.call('execute', { code: `${code}\n'other done'`, timeout_seconds: 60 }));
      expect(ran.result?.value, JSON.stringify(ran).slice(0, 400)).toBe('other done');
    });
    expect(waiting).toMatchObject({ count: 1, behind: 'agent' });
    expect(body(result).error.message).toContain("behind another agent's request");
    const runtime = body(result).runtime;
    expect(runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved', ran: false, waited_behind: 'agent', stopped_by: null });
    expect(runtime.kernel_wait_ms).toBeGreaterThanOrEqual(1_900);
    expect(humanExecute(jupyter, kernelId, "print('withdrawn_ran' in globals())")).toBe('ok\nFalse\n\n');
    blocks.push(runtime);
  });

  it('a call that ran and was interrupted at its deadline says it ran', async () => {
    const result = await agent.call('execute', { code: 'import time\nran_then_stopped = True\ntime.sleep(60)', timeout_seconds: 2 });
    expect(body(result).error.code).toBe('operation_timeout');
    expect(body(result).error.message).toContain('while it ran in the kernel');
    const runtime = body(result).runtime;
    expect(runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved', ran: true, waited_behind: null, stopped_by: null });
    // Measured from the kernel's own stamps: nothing was ahead, so no more than the kernel's scheduling jitter (a loaded
    // machine shows a few ms), never the wait behind a request.
    expect(runtime.kernel_wait_ms).toBeLessThan(100);
    expect(humanExecute(jupyter, kernelId, 'print(ran_then_stopped)')).toBe('ok\nTrue\n\n');
    blocks.push(runtime);
  });

  it("a cell the person stopped (Jupyter's stop button: a REST interrupt from another client) says the other client stopped it", async () => {
    const name = `stopped-${round++}`;
    const call = agent.call('execute', { code: `${markers.startedMarker(name)}\nimport time\ntime.sleep(60)`, timeout_seconds: 60 });
    await markers.humanCellRunning(name);
    const interrupted = await jupyter.rest('POST', `api/kernels/${kernelId}/interrupt`);
    expect(interrupted.status).toBe(204);
    const result = await call;
    expect(body(result).error).toMatchObject({ type: 'KeyboardInterrupt' });
    const runtime = body(result).runtime;
    expect(runtime).toMatchObject({ interruption: null, namespace: null, ran: true, stopped_by: 'other_client' });
    expect(text(result)).toContain("another client of the kernel stopped this cell (the person's stop button in Jupyter); ipython-mcp sent no interrupt");
    // The names are kept: nothing was replaced.
    expect((await agent.structured('execute', { code: 'kept' })).result.value).toBe(41);
    expect(fullRuntime(await agent.call('execute', { code: '1' })).epoch).toBe(1);
    blocks.push(runtime);
  });

  it('the blocks are distinct', () => {
    expect(blocks).toHaveLength(4);
    const shapes = blocks.map(({ ran, waited_behind, interruption, stopped_by }) => JSON.stringify({ ran, waited_behind, interruption, stopped_by }));
    expect(new Set(shapes).size).toBe(4);
  });

  it('bad input still gets a clear error and nothing runs (and no waiting is shown)', async () => {
    for (const args of [{ code: 5 }, { code: 'bad_input_ran = True', timeout_seconds: -1 }]) {
      const result = await agent.call('execute', args);
      expect(result.isError).toBe(true);
      expect(body(result).error.code).toBe('invalid_arguments');
    }
    expect(humanExecute(jupyter, kernelId, "print('bad_input_ran' in globals())")).toBe('ok\nFalse\n\n');
    expect((await agent.structured('runtime_status', {})).backend.waiting).toBeUndefined();
  });
});
