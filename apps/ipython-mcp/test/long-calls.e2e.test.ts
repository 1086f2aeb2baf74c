import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startServer, type TestServer } from './harness.js';

// Long work through a real SDK client over stdio: the per-call deadline `timeout_seconds` (execute, call_function,
// dynamic tools) and runtime_status during a long cell. The server's own deadline is lowered to 2 s so that a 4 s
// cell outlasts it; timed assertions are generous upper bounds only.

const SERVER_DEADLINE_S = 2;
const MAX_S = 30;
let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: String(SERVER_DEADLINE_S),
    IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: String(MAX_S),
    IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2',
  });
  await server.structured('execute', {
    code: 'import time\nruns = 0\ndef slow(seconds: float) -> str:\n    global runs\n    runs += 1\n    time.sleep(seconds)\n    return "done"',
  });
  await server.structured('register_tool', { name: 'slow' });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const BAD_VALUES: ReadonlyArray<[string, unknown]> = [
  ['zero', 0],
  ['negative', -1],
  ['NaN (null on the wire)', Number.NaN],
  ['a string', '6'],
  ['above the max', MAX_S + 1],
  ['infinity-sized', 1e308],
];

describe('timeout_seconds', () => {
  it('tools/list states the bound on execute, call_function and a dynamic tool', async () => {
    const { tools } = await server.client.listTools();
    for (const name of ['execute', 'call_function', 'slow']) {
      const tool = tools.find((each) => each.name === name);
      expect(tool?.inputSchema.properties?.timeout_seconds, name).toMatchObject({ type: 'number', exclusiveMinimum: 0, maximum: MAX_S });
    }
    expect(tools.find((each) => each.name === 'list')?.inputSchema.properties?.timeout_seconds).toBeUndefined();
  });

  it('lets a 4 s cell outlast the 2 s server deadline and return its value', async () => {
    const result = await server.call('execute', { code: 'time.sleep(4)\n6 * 7', timeout_seconds: 6 });
    expect(result.isError ?? false).toBe(false);
    expect((result.structuredContent as Record<string, any>).result.value).toBe(42);
  }, 60_000);

  it('without it the same cell still stops at the server deadline', async () => {
    const result = await server.call('execute', { code: 'time.sleep(4)\n6 * 7' });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Record<string, any>).error.code).toBe('operation_timeout');
  }, 60_000);

  it('a short per-call deadline interrupts before the server deadline, and the namespace survives', async () => {
    const started = performance.now();
    const result = await server.call('execute', { code: 'marker = 1\ntime.sleep(30)', timeout_seconds: 0.5 });
    expect((result.structuredContent as Record<string, any>).error.code).toBe('operation_timeout');
    expect(performance.now() - started).toBeLessThan(SERVER_DEADLINE_S * 1000 + 10_000);
    expect((await server.structured('execute', { code: 'marker' })).result.value).toBe(1);
  }, 60_000);

  it('covers call_function and dynamic tools', async () => {
    const called = await server.call('call_function', { name: 'slow', arguments: { seconds: 3 }, timeout_seconds: 8 });
    expect(called.isError ?? false).toBe(false);
    expect((called.structuredContent as Record<string, any>).value).toBe('done');
    const dynamic = await server.call('slow', { seconds: 3, timeout_seconds: 8 });
    expect(dynamic.isError ?? false).toBe(false);
    expect((dynamic.structuredContent as Record<string, any>).value).toBe('done');
  }, 60_000);

  it('leaves a dynamic tool whose function takes timeout_seconds its own parameter', async () => {
    await server.structured('execute', { code: 'def wait_for(timeout_seconds: int) -> int:\n    return timeout_seconds * 2' });
    await server.structured('register_tool', { name: 'wait_for' });
    const { tools } = await server.client.listTools();
    expect(tools.find((each) => each.name === 'wait_for')?.inputSchema.properties?.timeout_seconds).toEqual({ type: 'integer' });
    // Not a deadline: 0 and values above the max are the function's argument.
    const result = await server.call('wait_for', { timeout_seconds: MAX_S * 10 });
    expect((result.structuredContent as Record<string, any>).value).toBe(MAX_S * 20);
  });

  for (const [what, value] of BAD_VALUES) {
    it(`refuses ${what} with invalid_arguments naming the bound, and runs nothing`, async () => {
      const before = (await server.structured('execute', { code: 'runs' })).result.value as number;
      const count = (await server.structured('execute', { code: 'get_ipython().execution_count' })).result.value as number;
      const calls: Array<[string, Record<string, unknown>]> = [
        ['execute', { code: 'runs += 100', timeout_seconds: value }],
        ['call_function', { name: 'slow', arguments: { seconds: 0 }, timeout_seconds: value }],
        ['slow', { seconds: 0, timeout_seconds: value }],
      ];
      for (const [tool, args] of calls) {
        const result = await server.call(tool, args);
        expect(result.isError, tool).toBe(true);
        const error = (result.structuredContent as Record<string, any>).error;
        expect(error.code, tool).toBe('invalid_arguments');
        expect(error.message, tool).toContain(`at most ${MAX_S}`);
        expect(error.message, tool).toContain('IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS');
        expect(error.details, tool).toEqual({ path: 'timeout_seconds', maximum: MAX_S });
        const text = result.content.find((item) => item.type === 'text');
        expect(text && 'text' in text ? text.text : '', tool).toContain('timeout_seconds');
      }
      // Nothing ran: no execution counted (only the two reads below), runs unchanged.
      expect((await server.structured('execute', { code: 'runs' })).result.value).toBe(before);
      expect((await server.structured('execute', { code: 'get_ipython().execution_count' })).result.value).toBe(count + 2);
    }, 60_000);
  }
});

describe('runtime_status during a long cell', () => {
  it('shows the active operation\'s elapsed time and deadline, and neither once it ended', async () => {
    const abort = new AbortController();
    const running = server.client
      .callTool({ name: 'execute', arguments: { code: 'time.sleep(20)', timeout_seconds: 25 } }, undefined, { signal: abort.signal, timeout: 60_000 })
      .catch((error: unknown) => error);
    let status: Record<string, any> = {};
    const started = performance.now();
    while (performance.now() - started < 15_000) {
      status = await server.structured('runtime_status');
      if (typeof status.active_elapsed_s === 'number' && status.active_elapsed_s >= 1.5) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toMatchObject({ state: 'busy', active: true, active_deadline_s: 25 });
    expect(status.active_elapsed_s).toBeGreaterThanOrEqual(1.5);
    expect(status.active_elapsed_s).toBeLessThan(25);
    // Control-plane only: nothing of the cell's code or output.
    expect(JSON.stringify(status)).not.toContain('sleep');
    abort.abort();
    await running;
    let after: Record<string, any> = {};
    for (let attempt = 0; attempt < 40; attempt += 1) {
      after = await server.structured('runtime_status');
      if (after.active !== true) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(after.active_elapsed_s).toBeUndefined();
    expect(after.active_deadline_s).toBeUndefined();
    const plain = await server.structured('execute', { code: 'time.sleep(1.5)' , timeout_seconds: 5 });
    expect(plain.status ?? 'ok').toBe('ok');
  }, 60_000);

  it('shows the server deadline for a call without timeout_seconds', async () => {
    // The cell runs until the server's deadline stops it (the whole deadline to look), and the status is read until
    // the deadline shows: `active` turns true at admission, a moment before dispatch starts the clock (on a loaded
    // machine the two were seen apart).
    const running = server.call('execute', { code: 'time.sleep(60)' });
    const status = await eventually(() => server.structured('runtime_status'), (value) => value.active_deadline_s !== undefined, 10_000);
    expect(status.active_deadline_s).toBe(SERVER_DEADLINE_S);
    await running;
  }, 60_000);
});
