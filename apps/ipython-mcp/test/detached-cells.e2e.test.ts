// Detached cells through a real SDK client over stdio and over --http: an execute with detach_after_seconds that is
// still running then returns a handle and goes on; the job tool looks at it, waits for it (the whole result, as the
// execute would have returned it), or stops it (the namespace kept). Bad handles get a clear error and run nothing.
// Timed assertions are generous upper bounds only.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';
import { connectHttp, rawPost, retry, startHttpServer } from './http-harness.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: '120', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '3' });
  await server.structured('execute', { code: 'import time, os\nbefore = "kept"' });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** A cell that prints a numbered line every `everyS` seconds, `count` times, then returns "finished". */
const ticking = (count: number, everyS: number) =>
  `for i in range(${count}):\n    print(f"loss {i}", flush=True)\n    time.sleep(${everyS})\n"finished"`;

describe('detach_after_seconds', () => {
  it('is published on execute, beside timeout_seconds, and the job tool is listed', async () => {
    const { tools } = await server.client.listTools();
    const execute = tools.find((tool) => tool.name === 'execute')!;
    expect(execute.inputSchema.properties).toHaveProperty('detach_after_seconds');
    expect(tools.map((tool) => tool.name)).toContain('job');
  });

  it('a cell that ends before its detach time answers as usual', async () => {
    const result = await server.structured('execute', { code: '6 * 7', detach_after_seconds: 10 });
    expect(result.result.value).toBe(42);
    expect(result.status ?? 'ok').toBe('ok');
  });

  it('a longer cell returns a handle with its output so far; waiting returns the whole execute result', async () => {
    const started = performance.now();
    const look = await server.call('execute', { code: ticking(12, 0.5), detach_after_seconds: 1, timeout_seconds: 60 });
    expect(performance.now() - started).toBeLessThan(8_000);
    const running = look.structuredContent as Record<string, any>;
    expect(running.status).toBe('running');
    expect(running.job).toMatch(/^default-\d+-\d+$/);
    expect(running.stdout).toContain('loss 0');
    // One sentence tells a model that never heard of jobs what to do next.
    expect((look.content[0] as { text: string }).text).toContain('call the job tool');
    // A look while it runs shows newer output, within a second of its being printed.
    await retry(async () => {
      const again = await server.structured('job', { job: running.job });
      expect(again.status).toBe('running');
      expect(again.stdout).toContain('loss 3');
    }, 3_000);
    const done = await server.call('job', { job: running.job, wait_seconds: 30 });
    const result = done.structuredContent as Record<string, any>;
    expect(result.status ?? 'ok').toBe('ok');
    expect(result.result.value).toBe('finished');
    expect(result.stdout).toContain('loss 11');
    expect(done.isError).not.toBe(true);
    // A result is returned once.
    const again = await server.call('job', { job: running.job });
    expect(again.isError).toBe(true);
    expect((again.structuredContent as Record<string, any>).error.code).toBe('job_not_found');
    expect((again.structuredContent as Record<string, any>).error.details.reason).toBe('read');
  }, 60_000);

  it('a look shows each line within 1 s of its being printed', async () => {
    const code = 'for i in range(5):\n    time.sleep(0.8)\n    print(f"mark {i} {time.time()!r}", flush=True)\ntime.sleep(0.5)';
    const look = await server.structured('execute', { code, detach_after_seconds: 0.3, timeout_seconds: 60 });
    expect(look.status).toBe('running');
    // Looks every 100 ms; each mark's lag is the time from its print (the worker's clock, the same machine's) to the
    // first look that shows it.
    const lags = new Map<number, number>();
    for (let answer = look; answer.status === 'running'; await sleep(100)) {
      answer = await server.structured('job', { job: look.job });
      const seenAt = Date.now() / 1000;
      for (const [, index, printedAt] of String(answer.stdout ?? '').matchAll(/mark (\d) ([\d.]+)/g)) {
        if (!lags.has(Number(index))) lags.set(Number(index), seenAt - Number(printedAt));
      }
    }
    expect([...lags.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    for (const [index, lag] of lags) expect(lag, `mark ${index}`).toBeLessThan(1);
  }, 60_000);

  it('a detached cell keeps its place: a later execute waits behind it and runs after it', async () => {
    const look = await server.structured('execute', { code: 'time.sleep(2); after = 1', detach_after_seconds: 0.5, timeout_seconds: 30 });
    expect(look.status).toBe('running');
    const next = await server.structured('execute', { code: 'after + 1' });
    expect(next.result.value).toBe(2);
    const done = await server.structured('job', { job: look.job, wait_seconds: 10 });
    expect(done.status ?? 'ok').toBe('ok');
  }, 60_000);

  it('stop interrupts the cell and keeps the namespace', async () => {
    const look = await server.structured('execute', { code: 'partial = 1\ntime.sleep(600)', detach_after_seconds: 0.5, timeout_seconds: 120 });
    expect(look.status).toBe('running');
    const stopped = await server.call('job', { job: look.job, stop: true });
    expect(stopped.isError).toBe(true);
    const structured = stopped.structuredContent as Record<string, any>;
    expect(structured.error.code).toBe('operation_cancelled');
    // It says who stopped it.
    expect(structured.error.details.stopped_by).toBe('job');
    expect(structured.error.message).toMatch(/^stopped by the job tool: the operation was cancelled; state was preserved/);
    const kept = await server.structured('execute', { code: '(before, partial)' });
    expect(kept.result.value).toEqual(['kept', 1]);
  }, 60_000);

  it('waiting on a cell that crashes the worker returns the crash with the epoch change', async () => {
    const before = await server.structured('runtime_status');
    const look = await server.structured('execute', { code: 'time.sleep(1.5)\nos._exit(3)', detach_after_seconds: 0.5, timeout_seconds: 30 });
    expect(look.status).toBe('running');
    const crashed = await server.call('job', { job: look.job, wait_seconds: 30 });
    expect(crashed.isError).toBe(true);
    const structured = crashed.structuredContent as Record<string, any>;
    expect(structured.error.code).toBe('worker_crashed');
    expect(structured.runtime.epoch).toBeGreaterThan(before.epoch);
    await server.structured('execute', { code: 'import time, os\nbefore = "kept"' });
  }, 60_000);

  it.each([
    ['zero', 0],
    ['negative', -1],
    ['a string', '5'],
    ['above the max', 121],
    ['null', null],
  ])('detach_after_seconds %s is refused and runs nothing', async (_label, value) => {
    const result = await server.call('execute', { code: 'ran_bad_detach = True', detach_after_seconds: value });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Record<string, any>).error.code).toBe('invalid_arguments');
    const check = await server.structured('execute', { code: '"ran_bad_detach" in globals()' });
    expect(check.result.value).toBe(false);
  });

  it.each([
    ['an unknown handle of this namespace', 'default-1-999999', 'unknown'],
    ['a handle of another namespace', 'research-1-1', 'other_namespace'],
    ['junk', 'not a handle', 'malformed'],
  ])('the job tool refuses %s', async (_label, handle, reason) => {
    const result = await server.call('job', { job: handle });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as Record<string, any>).error;
    expect(error.code).toBe('job_not_found');
    expect(error.details.reason).toBe(reason);
  });

  it.each([
    ['a number', { job: 7 }],
    ['no job', {}],
    ['a negative wait', { job: 'default-1-1', wait_seconds: -1 }],
    ['a wait above 600 s', { job: 'default-1-1', wait_seconds: 601 }],
    ['an unknown field', { job: 'default-1-1', forever: true }],
  ])('the job tool refuses %s as invalid arguments', async (_label, args) => {
    const result = await server.call('job', args);
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Record<string, any>).error.code).toBe('invalid_arguments');
  });

  it('100 detached cells in a row hold the admission bounds exactly: 32 wait in the queue, 68 get runtime_busy', async () => {
    const blocker = await server.structured('execute', { code: 'time.sleep(600)', detach_after_seconds: 0.3, timeout_seconds: 120 });
    expect(blocker.status).toBe('running');
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, index) => server.structured('execute', { code: `${index}`, detach_after_seconds: 1, timeout_seconds: 60 })),
    );
    const busy = answers.filter((answer) => answer.error?.code === 'runtime_busy');
    const queued = answers.filter((answer) => answer.status === 'running');
    // The pending bound (IPYTHON_MCP_MAX_PENDING_OPERATIONS, 32 by default) behind the running cell, no more and no less.
    expect(queued.length).toBe(32);
    expect(busy.length).toBe(68);
    for (const answer of busy) expect(answer.error.retry_after_ms).toBeGreaterThan(0);
    expect((await server.structured('runtime_status')).queue_depth).toBe(32);
    const stopped = await server.structured('job', { job: blocker.job, stop: true });
    expect(stopped.error.code).toBe('operation_cancelled');
    const values: number[] = [];
    for (const answer of queued) {
      const done = await server.structured('job', { job: answer.job, wait_seconds: 60 });
      expect(done.status ?? 'ok').toBe('ok');
      values.push(done.result.value as number);
    }
    // They ran in their places: the first 32 that arrived, in order.
    expect(values).toEqual(Array.from({ length: 32 }, (_, index) => index));
    expect((await server.structured('runtime_status')).queue_depth ?? 0).toBe(0);
  }, 120_000);
});

/** A result as a model reads it: everything but the run's own metadata (sequence numbers, timings) in _meta. */
const asRead = (result: CallToolResult) => ({ isError: result.isError, content: result.content, structuredContent: result.structuredContent });

describe('call_function and dynamic tools detach too', () => {
  beforeAll(async () => {
    const code = [
      'def nap(seconds: float, tag: str = "done") -> dict:',
      '    "Sleeps, then answers."',
      '    global naps',
      '    naps += 1',
      '    print(f"napping {seconds}", flush=True)',
      '    time.sleep(seconds)',
      '    return {"slept": seconds, "tag": tag}',
      'def owns(detach_after_seconds: int = 0) -> int:',
      '    "Takes a parameter of the reserved name."',
      '    return detach_after_seconds * 2',
      'naps = 0',
    ].join('\n');
    await server.structured('execute', { code });
    expect((await server.structured('register_tool', { name: 'nap' })).tool_name).toBe('nap');
    expect((await server.structured('register_tool', { name: 'owns' })).tool_name).toBe('owns');
  });

  it('publishes detach_after_seconds on call_function and every dynamic tool, except one whose function has that parameter', async () => {
    const { tools } = await server.client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.call_function!.inputSchema.properties).toHaveProperty('detach_after_seconds');
    expect(byName.nap!.inputSchema.properties).toMatchObject({ detach_after_seconds: { type: 'number', exclusiveMinimum: 0 }, timeout_seconds: { type: 'number' } });
    // The function's own parameter stays as the function declared it.
    expect(byName.owns!.inputSchema.properties).toEqual({ detach_after_seconds: { type: 'integer', default: 0 }, timeout_seconds: expect.any(Object) });
  });

  it('call_function: the running shape, then through job the same result the blocking call gives', async () => {
    const args = { name: 'nap', arguments: { seconds: 1.5, tag: 'cf' } };
    const blocking = await server.call('call_function', args);
    const look = await server.call('call_function', { ...args, detach_after_seconds: 0.3, timeout_seconds: 30 });
    const running = look.structuredContent as Record<string, any>;
    expect(running).toMatchObject({ status: 'running', job: expect.stringMatching(/^default-\d+-\d+$/) });
    // The function's output so far, as a running cell shows it.
    expect(running.stdout).toContain('napping 1.5');
    expect((look.content[0] as { text: string }).text).toContain('call the job tool');
    const done = await server.call('job', { job: running.job, wait_seconds: 30 });
    expect(asRead(done)).toEqual(asRead(blocking));
    expect((done.structuredContent as Record<string, any>).value).toEqual({ slept: 1.5, tag: 'cf' });
  }, 60_000);

  it('a dynamic tool: the running shape, then through job the same result the blocking call gives; stop interrupts it', async () => {
    const blocking = await server.call('nap', { seconds: 1.5, tag: 'dyn' });
    const look = await server.call('nap', { seconds: 1.5, tag: 'dyn', detach_after_seconds: 0.3 });
    const running = look.structuredContent as Record<string, any>;
    expect(running.status).toBe('running');
    expect(running.stdout).toContain('napping 1.5');
    const done = await server.call('job', { job: running.job, wait_seconds: 30 });
    expect(asRead(done)).toEqual(asRead(blocking));
    const long = await server.structured('nap', { seconds: 600, detach_after_seconds: 0.3, timeout_seconds: 120 });
    expect(long.status).toBe('running');
    const stopped = await server.call('job', { job: long.job, stop: true });
    expect(stopped.isError).toBe(true);
    expect((stopped.structuredContent as Record<string, any>).error.code).toBe('operation_cancelled');
    expect((await server.structured('execute', { code: 'before' })).result.value).toBe('kept');
  }, 60_000);

  it('a function with a detach_after_seconds parameter gets the argument: its call never detaches', async () => {
    const result = await server.structured('owns', { detach_after_seconds: 5 });
    expect(result.value).toBe(10);
    expect(result.status).toBeUndefined();
  });

  it.each([
    ['call_function', { name: 'nap', arguments: { seconds: 0 }, detach_after_seconds: 0 }],
    ['nap', { seconds: 0, detach_after_seconds: -1 }],
    ['nap', { seconds: 0, detach_after_seconds: '1' }],
  ] as const)('%s refuses a bad detach_after_seconds (%j), naming it, and runs nothing', async (name, args) => {
    const naps = (await server.structured('execute', { code: 'naps' })).result.value;
    const result = await server.call(name, args);
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Record<string, any>).error.code).toBe('invalid_arguments');
    expect((result.content[0] as { text: string }).text).toContain('detach_after_seconds');
    expect((await server.structured('execute', { code: 'naps' })).result.value).toBe(naps);
  });
});

describe('over --http, across sessions', () => {
  it('a cell detached in one session is read from a new session after the first one disconnects', async () => {
    const http = await startHttpServer({ IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: '60' });
    try {
      const first = await connectHttp(http.url, http.token);
      const look = await first.structured('execute', { code: 'import time\ntime.sleep(3)\n"survived"', detach_after_seconds: 0.5, timeout_seconds: 30 });
      expect(look.status).toBe('running');
      const firstSession = first.transport.sessionId as string;
      // close() ends the session (DELETE) and the transport: the server no longer knows it.
      await first.close();
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
      const gone = await rawPost(http, ping, { 'Mcp-Session-Id': firstSession, 'Mcp-Protocol-Version': '2025-06-18' });
      expect(gone.status).toBe(404);
      const second = await connectHttp(http.url, http.token);
      expect(second.transport.sessionId).not.toBe(firstSession);
      // The cell is still running, and the new session sees it.
      expect((await second.structured('job', { job: look.job })).status).toBe('running');
      const done = await second.structured('job', { job: look.job, wait_seconds: 30 });
      expect(done.result.value).toBe('survived');
      await second.close();
    } finally {
      expect(await http.stop()).toBe(0);
    }
  }, 60_000);
});
