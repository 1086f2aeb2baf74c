// Detached cells through a real SDK client over stdio and over --http: an execute with detach_after_seconds that is
// still running then returns a handle and goes on; the job tool looks at it, waits for it (the whole result, as the
// execute would have returned it), or stops it (the namespace kept). Bad handles get a clear error and run nothing.
// Timed assertions are generous upper bounds only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';
import { connectHttp, retry, startHttpServer } from './http-harness.js';

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

  it('100 detached cells in a row hold the admission bounds: past the pending bound, runtime_busy', async () => {
    const calls = Array.from({ length: 100 }, (_, index) =>
      server.structured('execute', { code: `time.sleep(0.05); ${index}`, detach_after_seconds: 0.01, timeout_seconds: 60 }),
    );
    const answers = await Promise.all(calls);
    const busy = answers.filter((answer) => answer.error?.code === 'runtime_busy');
    const handles = answers.filter((answer) => answer.status === 'running').map((answer) => answer.job as string);
    const finished = answers.filter((answer) => (answer.status ?? 'ok') === 'ok' && answer.error == null);
    expect(busy.length + handles.length + finished.length).toBe(100);
    // The pending bound (32 by default) plus the running one is all that can be admitted at once.
    expect(busy.length).toBeGreaterThan(0);
    for (const job of handles) {
      const done = await server.structured('job', { job, wait_seconds: 60 });
      expect(done.status ?? 'ok').toBe('ok');
    }
  }, 120_000);
});

describe('over --http, across sessions', () => {
  it('a cell detached in one session is read from a new session after the first one disconnects', async () => {
    const http = await startHttpServer({ IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: '60' });
    try {
      const first = await connectHttp(http.url, http.token);
      const look = await first.structured('execute', { code: 'import time\ntime.sleep(2)\n"survived"', detach_after_seconds: 0.5, timeout_seconds: 30 });
      expect(look.status).toBe('running');
      await first.close();
      const second = await connectHttp(http.url, http.token);
      const done = await second.structured('job', { job: look.job, wait_seconds: 30 });
      expect(done.result.value).toBe('survived');
      await second.close();
    } finally {
      expect(await http.stop()).toBe(0);
    }
  }, 60_000);
});
