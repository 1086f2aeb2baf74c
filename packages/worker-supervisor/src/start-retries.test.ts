// Starts that fail for a passing cause (a Jupyter server that is away): retried in the background, and a call made
// after the cause passed is never answered from an older failure. An in-memory backend whose starts fail while `down`.
import { testPython } from '@ipython-mcp/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelWorker } from './channel-worker.js';
import { Runtime } from './runtime.js';
import type { WorkerBackend } from './worker-backend.js';
import { InMemoryChannel } from './worker-channel.js';
import { WorkerStartupError } from './worker-connection.js';
import type { WorkerHandle, WorkerInfo } from './worker-handle.js';

/** A worker whose start failed at once, with `error`. */
function failedWorker(error: Error): WorkerHandle {
  const ready = Promise.reject(error) as Promise<WorkerInfo>;
  ready.catch(() => undefined);
  return {
    ready,
    exited: Promise.resolve({ code: 1, signal: null }),
    pid: undefined,
    alive: false,
    request: () => ({ id: 0, reply: Promise.reject(new Error('not started')) }),
    interrupt: () => undefined,
    sendToolResult: () => undefined,
    kill: () => undefined,
    shutdown: async () => undefined,
    setHeld: () => undefined,
  };
}

/** A worker that answers every `execute` with 42. */
function answeringWorker(): WorkerHandle {
  const [near, far] = InMemoryChannel.createLinkedPair();
  far.onmessage = (raw) => {
    const message = raw as { type: string; id: number };
    if (message.type === 'shutdown') far.close();
    if (message.type === 'request') far.send({ type: 'response', id: message.id, ok: true, result: { status: 'ok', stdout: '', stderr: '', result: { kind: 'json', value: 42 } } });
  };
  return new ChannelWorker(near);
}

/** Starts fail while `down` (with `retry` when `passing`), and succeed otherwise. */
function flakyBackend(afterMs: number, passing = true): WorkerBackend & { down: boolean; starts: number } {
  return {
    name: 'flaky',
    capabilities: new Set(),
    down: true,
    starts: 0,
    start() {
      this.starts += 1;
      if (!this.down) return answeringWorker();
      const retry = passing ? { code: 'runtime_unavailable' as const, afterMs, waitingFor: 'the test server to answer' } : undefined;
      return failedWorker(new WorkerStartupError('No server answered (ECONNREFUSED)', retry));
    },
  };
}

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function runtimeOn(backend: WorkerBackend): Runtime {
  const runtime = new Runtime({ python: testPython(), backend, warmStandby: false });
  runtimes.push(runtime);
  runtime.start();
  return runtime;
}

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a start that fails for a passing cause', () => {
  it('is answered with what is awaited, since when and when the next try is; nothing runs', async () => {
    const backend = flakyBackend(60_000);
    const runtime = runtimeOn(backend);
    const outcome = await runtime.run('execute', { code: '1' });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ code: 'runtime_unavailable', retryable: true, details: { waiting_for: 'the test server to answer' } });
    expect(outcome.error.message).toMatch(/^No server answered \(ECONNREFUSED\); waiting for the test server to answer since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: ipython-mcp keeps trying in the background/);
    expect(outcome.error.message).not.toMatch(/until the server restarts/);
    expect(outcome.error.retryAfterMs).toBeGreaterThan(0);
    expect(outcome.error.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(runtime.status()).toMatchObject({ state: 'unavailable' });
  });

  it('a call made after the cause passed works at once, however far off the next background try is', async () => {
    const backend = flakyBackend(60_000);
    const runtime = runtimeOn(backend);
    expect((await runtime.run('execute', { code: '1' })).ok).toBe(false);
    backend.down = false;
    const startedAt = performance.now();
    const outcome = await runtime.run('execute', { code: '1' });
    expect(outcome.ok).toBe(true);
    expect(performance.now() - startedAt).toBeLessThan(2_000);
    expect(runtime.status()).toMatchObject({ state: 'ready', epoch: 1 });
  });

  it('recovers in the background with no call at all', async () => {
    const backend = flakyBackend(100);
    const runtime = runtimeOn(backend);
    await tick(50);
    expect(runtime.status().state).toBe('unavailable');
    backend.down = false;
    const deadline = performance.now() + 5_000;
    while (runtime.status().state !== 'ready' && performance.now() < deadline) await tick(20);
    expect(runtime.status().state).toBe('ready');
    const startsBeforeCall = backend.starts;
    expect((await runtime.run('execute', { code: '1' })).ok).toBe(true);
    expect(backend.starts).toBe(startsBeforeCall);
  });

  it('keeps trying in the background while it stays down, with the back-off the backend gives', async () => {
    const backend = flakyBackend(100);
    runtimeOn(backend);
    await tick(650);
    // One first start, then about one every 100 ms: the tries run whether or not anyone calls.
    expect(backend.starts).toBeGreaterThanOrEqual(3);
    expect(backend.starts).toBeLessThanOrEqual(9);
  });

  it('calls that arrive together share one start, and each is answered from a start no older than itself', async () => {
    const backend = flakyBackend(60_000);
    const runtime = runtimeOn(backend);
    await runtime.run('execute', { code: '1' });
    const before = backend.starts;
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => runtime.run('execute', { code: '1' })));
    expect(outcomes.every((outcome) => !outcome.ok && outcome.error.code === 'runtime_unavailable')).toBe(true);
    // Admission runs them one at a time: each arrived before the previous one's start began, so each had one.
    expect(backend.starts - before).toBeLessThanOrEqual(5);
    expect(backend.starts - before).toBeGreaterThanOrEqual(1);
  });
});

describe('a start that fails for good (no retry: a bad Python on the local worker)', () => {
  it('stays unavailable, and no start is tried again', async () => {
    const backend = flakyBackend(0, false);
    const runtime = runtimeOn(backend);
    const first = await runtime.run('execute', { code: '1' });
    backend.down = false;
    const second = await runtime.run('execute', { code: '1' });
    for (const outcome of [first, second]) {
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.error.code).toBe('runtime_unavailable');
    }
    expect(backend.starts).toBe(1);
  });
});
