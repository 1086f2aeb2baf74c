// The runtime block on every answer of a kernel backend (issue 62): each error code of packages/protocol's list is
// either driven here for real, against a real `jupyter server` kernel (owned: --kernel-name; attached: --kernel),
// and its answer's runtime block (`_meta["ipython-mcp/runtime"]`) carries who did what (ran, kernel_wait_ms,
// waited_behind, stopped_by), or named in NOT_ANSWERED_ON_A_KERNEL with why a kernel backend never answers it as a
// tool result. Beside it: a wait in the kernel's own queue (the person's cell queued ahead of the agent's) is measured,
// not inferred; runtime_status names the kernel that runs the agent's cells and the standby's separately.
import { ERROR_CODES } from '@ipython-mcp/protocol';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, fullRuntime, type TestServer } from './harness.js';
import { spawn } from 'node:child_process';
import { testPython } from './harness.js';
import { connectionFileOf, humanCellMarkers, humanExecute, startHumanKernel, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

/** Codes a kernel backend never answers as a tool result with a runtime block, and why. */
const NOT_ANSWERED_ON_A_KERNEL: Record<string, string> = {
  invalid_request: 'sent by a worker only for a request ipython-mcp never makes (an unknown operation, a malformed message): no tool call can produce one',
  protocol_error: 'a worker message that fails the wire checks: the kernel side is ipython-mcp\'s own code, so only a broken install produces one',
  tool_not_found: 'a call of a dynamic tool the catalog does not list is refused by the MCP layer as a JSON-RPC error (unknown tool), before any runtime',
  job_not_found: 'the job tool (and tasks/get) answer an unknown job id as a JSON-RPC error from the MCP layer, before any runtime',
  stale_registration: 'a call of a tool the catalog already knows is stale is answered by the catalog before any operation (driven above): no runtime, on any backend',
  startup_failed: 'a start-up failure is the runtime becoming unavailable: the call answers runtime_unavailable (driven here), never startup_failed',
  internal_error: 'a bug: nothing a test can drive on purpose',
};

/** The person's client sending `cells` one after another without waiting (jupyter_client), until every reply came. */
function personCells(connectionFile: string, cells: string[]): Promise<void> {
  const script = [
    'import sys',
    'from jupyter_client import BlockingKernelClient',
    'client = BlockingKernelClient(connection_file=sys.argv[1])',
    'client.load_connection_file()',
    'client.start_channels()',
    'client.wait_for_ready(timeout=30)',
    'pending = {client.execute(code) for code in sys.argv[2:]}',
    'while pending:',
    "    pending.discard(client.get_shell_msg(timeout=60)['parent_header'].get('msg_id'))",
    'client.stop_channels()',
  ].join('\n');
  const child = spawn(testPython(), ['-c', script, connectionFile, ...cells], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the person's client failed (${String(code)}): ${stderr}`))));
  });
}

let jupyter: RunningJupyter;
/** The code each answer of a driven error code came with, and its full runtime block. */
const seen = new Map<string, Record<string, any>>();

beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 120_000);

afterAll(async () => {
  await jupyter?.stop();
});

function body(result: CallToolResult): Record<string, any> {
  return (result.structuredContent ?? {}) as Record<string, any>;
}

function text(result: CallToolResult): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((part) => part.text ?? '').join('\n');
}

/** Asserts `result` failed with `code` and its runtime block says who did what; records it. */
function expectBlock(result: CallToolResult, code: string, ran: boolean): Record<string, any> {
  expect(result.isError, JSON.stringify(body(result)).slice(0, 600)).toBe(true);
  expect(body(result).error?.code, JSON.stringify(body(result)).slice(0, 600)).toBe(code);
  const meta = (result._meta as Record<string, unknown> | undefined)?.['ipython-mcp/runtime'];
  expect(meta, `${code}: ${JSON.stringify(result).slice(0, 600)}`).toBeTypeOf('object');
  const runtime = meta as Record<string, any>;
  expect(runtime, code).toMatchObject({ ran });
  expect(typeof runtime.kernel_wait_ms, code).toBe('number');
  expect(runtime.kernel_wait_ms, code).toBeGreaterThanOrEqual(0);
  expect(['person', 'agent', null], code).toContain(runtime.waited_behind);
  expect(runtime.stopped_by, code).toBeNull();
  // A wait of nothing was behind nobody.
  if (runtime.kernel_wait_ms === 0) expect(runtime.waited_behind, code).toBeNull();
  seen.set(code, runtime);
  return runtime;
}

describe('an owned kernel (--kernel-name): every error code it can answer carries the runtime block', () => {
  let agent: TestServer;
  beforeAll(async () => {
    agent = await startKernelServer(jupyter, ['--kernel-name', 'python3'], {
      IPYTHON_MCP_MAX_PENDING_OPERATIONS: '1',
      IPYTHON_MCP_QUEUE_WAIT_TIMEOUT_SECONDS: '1',
      IPYTHON_MCP_MAX_DYNAMIC_TOOLS: '1',
      IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES: String(1024 * 1024),
      IPYTHON_MCP_MEMORY_LIMIT_MB: '400',
      IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2',
    });
    const defined = await agent.call('execute', {
      code: [
        'import time',
        'not_a_function = 5',
        'def takes_a(a):\n    return a',
        'def raises():\n    raise ValueError("no")',
        'def not_json():\n    return object()',
        'def first_tool(x: int) -> int:\n    return x',
        'def second_tool(x: int) -> int:\n    return x',
        'class NoSignature:\n    @property\n    def __signature__(self):\n        raise ValueError("no signature")\n    def __call__(self):\n        return 1',
        'no_signature = NoSignature()',
      ].join('\n'),
    });
    expect(defined.isError, JSON.stringify(body(defined))).not.toBe(true);
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
  });

  it('runtime_status names the kernel that runs the cells, and the standby separately', async () => {
    const status = await eventually(
      () => agent.structured('runtime_status'),
      (current: Record<string, any>) => typeof current.backend?.standby_kernel_id === 'string',
      30_000,
    );
    // The kernel's own id (its connection file is kernel-<id>.json) is where the agent's cells run.
    const running = await agent.structured('execute', { code: "__import__('ipykernel.kernelapp').kernelapp.IPKernelApp.instance().connection_file" });
    expect(running.result.value, JSON.stringify(running)).toContain(`kernel-${status.backend.kernel_id as string}.json`);
    expect(status.backend.standby_kernel_id).not.toBe(status.backend.kernel_id);
    const listed = ((await jupyter.rest('GET', 'api/kernels')).body as Array<{ id: string }>).map((kernel) => kernel.id);
    expect(listed).toEqual(expect.arrayContaining([status.backend.kernel_id, status.backend.standby_kernel_id]));
  });

  it("the worker's refusals of a call (name_not_found … result_not_json): the call ran in the kernel, waited for nothing", async () => {
    expectBlock(await agent.call('call_function', { name: 'never_defined' }), 'name_not_found', true);
    expectBlock(await agent.call('call_function', { name: 'not_a_function' }), 'not_callable', true);
    expectBlock(await agent.call('call_function', { name: 'takes_a', arguments: { b: 1 } }), 'binding_failed', true);
    expectBlock(await agent.call('call_function', { name: 'raises' }), 'call_raised', true);
    expectBlock(await agent.call('call_function', { name: 'not_json' }), 'result_not_json', true);
    // No other client: at most the kernel finishing the previous request, behind nobody.
    for (const code of ['name_not_found', 'not_callable', 'binding_failed', 'call_raised', 'result_not_json']) {
      expect(seen.get(code)).toMatchObject({ waited_behind: null });
      expect(seen.get(code)?.kernel_wait_ms).toBeLessThan(100);
    }
  });

  it('the registry refusals (invalid_name … stale_registration)', async () => {
    expectBlock(await agent.call('register_tool', { name: 'class' }), 'invalid_name', true);
    expectBlock(await agent.call('register_tool', { name: '_hidden' }), 'protected_name', true);
    expectBlock(await agent.call('register_tool', { name: 'first_tool', tool_name: 'execute' }), 'name_collision', true);
    expectBlock(await agent.call('register_tool', { name: 'no_signature' }), 'unsupported_signature', true);
    expect((await agent.call('register_tool', { name: 'first_tool' })).isError).not.toBe(true);
    expectBlock(await agent.call('register_tool', { name: 'second_tool' }), 'registry_full', true);
    // The function behind the tool changes its signature: the registration is stale.
    expect((await agent.call('execute', { code: 'def first_tool(x: int, y: int) -> int:\n    return x + y' })).isError).not.toBe(true);
    // Answered from the catalog, which already knows the tool is stale: no operation, so no runtime block, and the
    // answer is the same on any backend (it never reached the kernel).
    const stale = await agent.call('first_tool', { x: 1 });
    expect(body(stale).error?.code).toBe('stale_registration');
    expect(stale._meta?.['ipython-mcp/runtime']).toBeUndefined();
    expect((await agent.call('unregister_tool', { names: ['first_tool'] })).isError).not.toBe(true);
  });

  it('refused before the kernel (invalid_arguments, message_too_large): never ran, no wait', async () => {
    expectBlock(await agent.call('execute', { code: 'x = "\ud800"' }), 'invalid_arguments', false);
    expectBlock(await agent.call('execute', { code: `x = "${'a'.repeat(2 * 1024 * 1024)}"` }), 'message_too_large', false);
    for (const code of ['invalid_arguments', 'message_too_large']) expect(seen.get(code)).toMatchObject({ ran: false, kernel_wait_ms: 0, waited_behind: null });
  });

  it('admission (runtime_busy, queue_timeout): never ran', async () => {
    const running = agent.call('execute', { code: 'time.sleep(4)', timeout_seconds: 30 });
    await eventually(() => agent.structured('runtime_status'), (status: Record<string, any>) => status.active === true, 10_000);
    const queued = agent.call('execute', { code: '1' });
    await eventually(() => agent.structured('runtime_status'), (status: Record<string, any>) => status.queue_depth === 1, 10_000);
    expectBlock(await agent.call('execute', { code: '2' }), 'runtime_busy', false);
    expectBlock(await queued, 'queue_timeout', false);
    expect((await running).isError).not.toBe(true);
  });

  it('operation_cancelled (the job tool stops a detached cell): it ran', async () => {
    const look = await agent.structured('execute', { code: 'time.sleep(600)', detach_after_seconds: 0.5, timeout_seconds: 120 });
    expect(look.status).toBe('running');
    expectBlock(await agent.call('job', { job: look.job, stop: true }), 'operation_cancelled', true);
  });

  it('memory_limit (the guard on the kernel machine): it ran', async () => {
    const grow = ['def grow():', '    chunks = []', '    while len(chunks) < 192:', "        chunks.append(b'x' * 2**23)", '    return len(chunks)', 'grow()'].join('\n');
    expectBlock(await agent.call('execute', { code: grow }), 'memory_limit', true);
  });

  it('operation_timeout on a stuck kernel (a cell that ignores the interrupt): it ran; the kernel is replaced', async () => {
    const stuck = ['import signal', 'signal.signal(signal.SIGINT, signal.SIG_IGN)', 'time.sleep(60)'].join('\n');
    const runtime = expectBlock(await agent.call('execute', { code: stuck, timeout_seconds: 2 }), 'operation_timeout', true);
    expect(runtime).toMatchObject({ interruption: 'timeout', namespace: 'reset' });
  });

  it('worker_crashed (os._exit in a cell): it ran, a crash', async () => {
    const runtime = expectBlock(await agent.call('execute', { code: 'import os\nos._exit(1)', timeout_seconds: 60 }), 'worker_crashed', true);
    expect(runtime).toMatchObject({ interruption: 'crash', namespace: 'reset' });
  });

  it("worker_crashed (the person's Restart Kernel mid-cell): it ran, named other_client, not a crash; runtime_status agrees", async () => {
    const status = await agent.structured('runtime_status');
    const kernelId = status.backend.kernel_id as string;
    const call = agent.call('execute', { code: 'import time\ntime.sleep(30)', timeout_seconds: 60 });
    await eventually(() => agent.structured('runtime_status'), (current: Record<string, any>) => current.active === true, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await jupyter.rest('POST', `api/kernels/${kernelId}/restart`)).status).toBe(200);
    const result = await call;
    const runtime = expectBlock(result, 'worker_crashed', true);
    expect(runtime).toMatchObject({ interruption: 'other_client', namespace: 'reset' });
    expect(text(result)).toContain('another client of the kernel restarted the kernel');
    expect((await agent.structured('runtime_status')).last_interruption).toMatchObject({ kind: 'other_client', action: 'restart', namespace: 'reset' });
  });

  it('runtime_closed (the server shut down under a running call): it ran', async () => {
    const call = agent.call('execute', { code: 'import time\ntime.sleep(30)', timeout_seconds: 60 });
    await eventually(() => agent.structured('runtime_status'), (current: Record<string, any>) => current.active === true, 10_000);
    process.kill(agent.serverPid, 'SIGTERM');
    expectBlock(await call, 'runtime_closed', true);
  });
});

describe('a refused token', () => {
  it('runtime_unavailable says to fix the token, never "until the server restarts", is retryable, and never ran', async () => {
    const agent = await startKernelServer(jupyter, ['--kernel-name', 'python3'], { JUPYTER_TOKEN: 'not-the-token' });
    try {
      const result = await agent.call('execute', { code: '1' });
      expectBlock(result, 'runtime_unavailable', false);
      const error = body(result).error;
      expect(error.message).toContain('fix the token');
      expect(error.message).not.toContain('until the server restarts');
      expect(error.retryable).toBe(true);
      expect(error.retry_after_ms).toBeGreaterThan(0);
      expect(error.message).not.toContain('not-the-token');
    } finally {
      await agent.close();
    }
  });
});

describe('an attached kernel (--kernel): waits measured in Node and in the kernel', () => {
  const markers = humanCellMarkers();
  let kernelId: string;
  let agent: TestServer;
  beforeAll(async () => {
    kernelId = await startHumanKernel(jupyter);
    agent = await startKernelServer(jupyter, ['--kernel', kernelId]);
    expect((await agent.structured('execute', { code: 'import time' })).error ?? null).toBeNull();
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await jupyter.rest('DELETE', `api/kernels/${kernelId}`);
    markers.remove();
  });

  it("a call that waited behind the person's cell in Node, then behind their next cell in the kernel's own queue: the whole wait is measured", async () => {
    // The person runs a long cell, and queues a second one behind it from another client before the agent calls:
    // the agent's request waits in Node for the first (its busy is seen), then, sent at its idle, in the kernel's
    // queue behind the second, which the kernel had already.
    // One person's client sends both cells at once (jupyter_client's execute does not wait), so the second is in the
    // kernel's queue before the first ends.
    const person = personCells(connectionFileOf(jupyter, kernelId), [
      `${markers.startedMarker('first')}\nimport time\ntime.sleep(3)`,
      'import time\nsecond_ended = None\ntime.sleep(2)\nsecond_ended = time.time()',
    ]);
    await markers.humanCellRunning('first');
    const calledAt = Date.now() / 1000;
    const result = await agent.call('execute', { code: "began = time.time()\n(began, globals().get('second_ended'))", timeout_seconds: 60 });
    await person;
    const [began, secondEnded] = (body(result).result?.value ?? []) as [number, number | null];
    expect(secondEnded, JSON.stringify(body(result))).not.toBeNull();
    // It ran after the person's second cell: it waited in the kernel's queue behind it.
    expect(began).toBeGreaterThan(secondEnded as number);
    const runtime = fullRuntime(result);
    const trueWaitMs = (began - calledAt) * 1000;
    expect(runtime).toMatchObject({ ran: true, waited_behind: 'person', stopped_by: null });
    // Measured: within a few hundred ms of the wait the cell itself saw (the call's own transit is in the true wait).
    expect(runtime.kernel_wait_ms).toBeGreaterThan(trueWaitMs - 500);
    expect(runtime.kernel_wait_ms).toBeLessThanOrEqual(trueWaitMs + 50);
    expect(runtime.kernel_wait_ms).toBeGreaterThan(3_500);
  });

  it('a call that waited for nothing says 0 and behind nobody', async () => {
    for (let index = 0; index < 5; index += 1) {
      const runtime = fullRuntime(await agent.call('execute', { code: `${index} + 1` }));
      expect(runtime).toMatchObject({ ran: true, waited_behind: null, stopped_by: null });
      expect(runtime.kernel_wait_ms).toBeLessThan(100);
    }
    expect(humanExecute(jupyter, kernelId, 'print(1)')).toBe('ok\n1\n\n');
  });
});

describe('every error code', () => {
  it('is driven above with its runtime block, or named with why a kernel never answers it', () => {
    const missing = ERROR_CODES.filter((code) => !seen.has(code) && NOT_ANSWERED_ON_A_KERNEL[code] === undefined);
    expect(missing).toEqual([]);
    // Nothing is both driven and said to be impossible.
    expect(Object.keys(NOT_ANSWERED_ON_A_KERNEL).filter((code) => seen.has(code))).toEqual([]);
  });
});
