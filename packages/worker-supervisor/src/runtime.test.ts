// Runtime and WorkerProcess against real Python workers: deadlines from dispatch, stale interrupts, close.
import { eventually, isAlive as alive, testPython } from '@ipython-mcp/test-support';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PausableTimer } from './pausable-timer.js';
import { Runtime } from './runtime.js';
import type { RuntimeOptions } from './runtime-options.js';
import type { OperationOutcome } from './runtime-types.js';
import { WorkerProcess } from './worker-process.js';
import { localProcessBackend } from './local-process-backend.js';
import type { WorkerBackend } from './worker-backend.js';

function settings(overrides: Partial<RuntimeOptions> = {}): Omit<RuntimeOptions, 'python'> {
  return { operationTimeoutMs: 1000, interruptionGraceMs: 1000, ...overrides };
}

const runtimes: Runtime[] = [];
const workers: WorkerProcess[] = [];
const seenPids = new Set<number>();

function newRuntime(overrides: Partial<RuntimeOptions> = {}, warmStandby = true): Runtime {
  const runtime = new Runtime({ python: testPython(), ...settings(overrides), warmStandby });
  runtimes.push(runtime);
  runtime.start();
  return runtime;
}

function remember(runtime: Runtime): void {
  for (const pid of runtime.workerPids()) seenPids.add(pid);
}

function value(outcome: OperationOutcome): unknown {
  if (!outcome.ok) throw new Error(`operation failed: ${outcome.error.code}`);
  return (outcome.result.result as { value?: unknown } | null)?.value;
}

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) {
    remember(runtime);
    await runtime.close();
  }
  for (const worker of workers.splice(0)) {
    if (worker.pid !== undefined) seenPids.add(worker.pid);
    worker.kill();
    await worker.exited;
  }
  const left = await eventually(() => [...seenPids].filter(alive), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
  seenPids.clear();
});

describe('PausableTimer', () => {
  it('fires once after its duration, not while paused, and never after clear', async () => {
    let fired = 0;
    const timer = new PausableTimer(60, () => (fired += 1));
    timer.pause();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fired).toBe(0);
    timer.resume();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fired).toBe(1);
    const cleared = new PausableTimer(20, () => (fired += 1));
    cleared.clear();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired).toBe(1);
    const never = new PausableTimer(Infinity, () => (fired += 1));
    never.clear();
    expect(fired).toBe(1);
  });

  it('a pause that ends before the armed timeout moves the deadline later by the paused time', async () => {
    let fired = 0;
    const start = performance.now();
    const timer = new PausableTimer(80, () => (fired += 1));
    await new Promise((resolve) => setTimeout(resolve, 10));
    timer.pause();
    await new Promise((resolve) => setTimeout(resolve, 60));
    timer.resume();
    // The armed timeout comes due at ~80 ms; the deadline is now ~140 ms, so it re-arms instead of firing.
    await new Promise((resolve) => setTimeout(resolve, 100 - (performance.now() - start)));
    expect(fired).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(fired).toBe(1);
    timer.clear();
  });

  it('moves the deadline later by time learnt after the fact, and not once it has fired', async () => {
    let fired = 0;
    const timer = new PausableTimer(40, () => (fired += 1));
    timer.extend(60);
    timer.extend(-500);
    timer.extend(Number.NaN);
    await new Promise((resolve) => setTimeout(resolve, 70));
    expect(fired).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(fired).toBe(1);
    timer.extend(1000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fired).toBe(1);
  });

  it('with readFirst, found due, reads what has already arrived first: a pause or a later deadline there keeps it from firing; without, it fires in its turn', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const peer = await accepted;
    try {
      for (const action of ['pause', 'extend', 'none'] as const) {
        let fired = 0;
        const timer = new PausableTimer(20, () => (fired += 1), { readFirst: action !== 'none' });
        const read = new Promise<void>((resolve) =>
          peer.once('data', () => {
            if (action === 'pause') timer.pause();
            else if (action === 'extend') timer.extend(200);
            resolve();
          }),
        );
        client.write('x');
        // The event loop is held past the deadline while the byte arrives: the timer and the read are both ready.
        const until = performance.now() + 60;
        while (performance.now() < until);
        await read;
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(fired, action).toBe(action === 'none' ? 1 : 0);
        if (action === 'pause') timer.resume();
        await new Promise((resolve) => setTimeout(resolve, 250));
        expect(fired, action).toBe(1);
        timer.clear();
      }
    } finally {
      client.destroy();
      peer.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('nested pauses need as many resumes', async () => {
    let fired = 0;
    const timer = new PausableTimer(30, () => (fired += 1));
    timer.pause();
    timer.pause();
    timer.resume();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(fired).toBe(0);
    timer.resume();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(fired).toBe(1);
  });
});

describe('WorkerProcess interrupts', () => {
  async function startWorker(): Promise<WorkerProcess> {
    const worker = WorkerProcess.spawn({
      python: testPython(),
      maxMessageBytes: 4 * 1024 * 1024,
      startupTimeoutMs: 20_000,
      configure: { limits: {}, library_paths: [], preload_modules: [], module_aliases: {}, reserved_tool_names: [] },
    });
    workers.push(worker);
    await worker.ready;
    return worker;
  }

  it('an interrupt for a finished request never reaches the next one', async () => {
    const worker = await startWorker();
    for (let round = 0; round < 20; round += 1) {
      const first = worker.request('execute', { code: 'x = 1' });
      expect((await first.reply).ok).toBe(true);
      worker.interrupt(first.id); // late: its request already answered
      const second = worker.request('execute', { code: 'import time\ntime.sleep(0.02)\n"done"' });
      const reply = await second.reply;
      expect(reply.ok).toBe(true);
      if (!reply.ok) return;
      expect(reply.result.status).toBe('ok');
      expect(reply.result.result).toEqual({ kind: 'json', value: 'done' });
    }
  });

  it('an interrupt sent right after its request stops it even before the worker armed it', async () => {
    const worker = await startWorker();
    const started = performance.now();
    const blocked = worker.request('execute', { code: 'import time\ntime.sleep(10**6)' });
    worker.interrupt(blocked.id);
    const reply = await blocked.reply;
    expect(performance.now() - started).toBeLessThan(5_000);
    // Interrupted as it was armed (before any user code ran) or inside the cell.
    if (reply.ok) expect(reply.result.error).toMatchObject({ kind: 'interrupted', type: 'KeyboardInterrupt' });
    else expect(reply.error.code).toBe('operation_cancelled');
    const next = await worker.request('execute', { code: '2 + 2' }).reply;
    expect(next.ok && next.result.result).toEqual({ kind: 'json', value: 4 });
  });
});

describe('Runtime deadlines and admission', () => {
  it('the deadline counts from dispatch: time spent queued does not consume it', async () => {
    const runtime = newRuntime({ operationTimeoutMs: 1000 });
    expect(value(await runtime.run('execute', { code: '1' }))).toBe(1);
    const first = runtime.run('execute', { code: 'import time\ntime.sleep(0.7)' });
    const second = runtime.run('execute', { code: 'import time\ntime.sleep(0.6)\n"second"' });
    const [a, b] = await Promise.all([first, second]);
    expect(a.ok).toBe(true);
    expect(b.ok).toBe(true);
    expect(value(b)).toBe('second');
    expect(b.meta.queueWaitMs).toBeGreaterThanOrEqual(500);
    expect(b.meta.interruption).toBeNull();
  });

  it('a timeout reports preserved only after the operation stopped and the worker answered a health probe', async () => {
    const runtime = newRuntime();
    await runtime.run('execute', { code: 'items = []' });
    const outcome = await runtime.run('execute', { code: 'while True:\n    items.append(1) if len(items) < 1000 else None' });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.code).toBe('operation_timeout');
    expect(outcome.meta).toMatchObject({ interruption: 'timeout', namespace: 'preserved', epoch: 1 });
    expect(runtime.status()).toMatchObject({ state: 'ready', epoch: 1, lastInterruption: { kind: 'timeout', namespace: 'preserved', epoch: 1 } });
    expect(value(await runtime.run('execute', { code: 'len(items)' }))).toBe(1000);
  });

  it('a failed reconciliation makes the outcome unknown and replaces the worker', async () => {
    const runtime = new Runtime({
      python: testPython(),
      ...settings(),
      afterInterrupt: {
        operation: 'health',
        params: () => ({}),
        needed: () => true,
        accept: () => {
          throw new Error('registry out of sync');
        },
      },
    });
    runtimes.push(runtime);
    await runtime.run('execute', { code: 'kept = 1' });
    const outcome = await runtime.run('execute', { code: 'import time\ntime.sleep(10**6)' });
    expect(outcome.ok).toBe(false);
    expect(outcome.meta).toMatchObject({ interruption: 'timeout', namespace: 'reset', epoch: 2 });
    const after = await runtime.run('execute', { code: 'kept' });
    expect(after.ok && after.result.status).toBe('error');
  });

  it('without a warm standby a hard reset cold-starts the replacement and still reports its time', async () => {
    const runtime = newRuntime({}, false);
    await runtime.run('execute', { code: 'x = 1' });
    expect(runtime.status().standby).toBe('none');
    const outcome = await runtime.run('execute', { code: 'import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass' });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.meta).toMatchObject({ namespace: 'reset', epoch: 2 });
    expect(outcome.error.details?.replacement_startup_ms).toBeGreaterThan(0);
    expect(runtime.status().replacementStartupMs).toBe(outcome.error.details?.replacement_startup_ms);
    expect(value(await runtime.run('execute', { code: '3' }))).toBe(3);
    expect(runtime.status().standby).toBe('none');
  });
});

describe('Runtime.switchBackend', () => {
  it('a worker of the new backend takes over in line with the operations: the epoch advances, the old worker and standby end', async () => {
    const runtime = newRuntime();
    expect(value(await runtime.run('execute', { code: 'x = 1\nx' }))).toBe(1);
    await eventually(() => runtime.status().standby, (standby) => standby === 'ready', 10_000);
    const oldPids = runtime.workerPids();
    for (const pid of oldPids) seenPids.add(pid);
    const changes: unknown[] = [];
    runtime.onEpochChange((change) => changes.push(change));
    // A running cell is not cut: the switch waits for it in the admission queue.
    const running = runtime.run('execute', { code: 'import time\ntime.sleep(0.5)\n"done"' });
    const switched = await runtime.switchBackend(localProcessBackend, { warmStandby: false });
    expect(value(await running)).toBe('done');
    expect(switched).toEqual({ epoch: 2 });
    expect(changes).toEqual([{ epoch: 2, reason: 'reset' }]);
    expect(runtime.status()).toMatchObject({ epoch: 2, state: 'ready', standby: 'none' });
    expect(value(await runtime.run('execute', { code: 'globals().get("x", "gone")' }))).toBe('gone');
    const left = await eventually(() => oldPids.filter(alive), (pids) => pids.length === 0, 5_000);
    expect(left).toEqual([]);
  });

  it('a new worker that cannot start changes nothing: the old one stays active with its names', async () => {
    const runtime = newRuntime({}, false);
    expect(value(await runtime.run('execute', { code: 'kept = 7\nkept' }))).toBe(7);
    const broken: WorkerBackend = { name: 'broken', capabilities: localProcessBackend.capabilities, start: (options) => localProcessBackend.start({ ...options, python: '/nonexistent/python' }) };
    await expect(runtime.switchBackend(broken, { warmStandby: false })).rejects.toThrow();
    expect(runtime.status()).toMatchObject({ epoch: 1, state: 'ready' });
    expect(value(await runtime.run('execute', { code: 'kept' }))).toBe(7);
  });
});

describe('Runtime close', () => {
  it('queued work ends runtime_closed, the active one is interrupted, repeated close is safe, nothing survives', async () => {
    const runtime = newRuntime();
    await runtime.run('execute', { code: '0' });
    await eventually(() => runtime.status().standby, (standby) => standby === 'ready');
    remember(runtime);
    expect(seenPids.size).toBe(2);
    const active = runtime.run('execute', { code: 'import time\ntime.sleep(10**6)' }, { timeoutMs: null });
    const queued = [runtime.run('execute', { code: '1' }), runtime.run('execute', { code: '2' })];
    await eventually(() => runtime.status().queueDepth, (depth) => depth === 2);
    const closedAt = performance.now();
    const first = runtime.close();
    const second = runtime.close();
    expect(second).toBe(first);
    for (const outcome of await Promise.all(queued)) {
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.error.code).toBe('runtime_closed');
    }
    const stopped = await active;
    expect(stopped.ok).toBe(false);
    if (!stopped.ok) expect(stopped.error.code).toBe('runtime_closed');
    expect(stopped.meta.interruption).toBe('shutdown');
    await first;
    expect(performance.now() - closedAt).toBeLessThan(1000 + 2000);
    expect([...seenPids].filter(alive)).toEqual([]);
    expect(runtime.status().state).toBe('closed');
    const after = await runtime.run('execute', { code: '3' });
    expect(!after.ok && after.error.code).toBe('runtime_closed');
    await runtime.close();
  });

  it('a non-cooperative active operation is killed after the grace', async () => {
    const runtime = newRuntime();
    await runtime.run('execute', { code: '0' });
    remember(runtime);
    const active = runtime.run(
      'execute',
      { code: 'import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass' },
      { timeoutMs: null },
    );
    await eventually(() => runtime.status().active, (flag) => flag);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closedAt = performance.now();
    await runtime.close();
    const elapsed = performance.now() - closedAt;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(1000 + 2000);
    const outcome = await active;
    expect(!outcome.ok && outcome.error.code).toBe('runtime_closed');
    expect([...seenPids].filter(alive)).toEqual([]);
  });
});

describe('Runtime closed during start-up', () => {
  it.each([0, 150, 400])('close() %i ms after start(): closed, not unavailable; one info line, no warning or error', async (delayMs) => {
    const lines: Array<{ level: string; event: string }> = [];
    const record = (level: string) => (event: string) => lines.push({ level, event });
    const logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
    const runtime = new Runtime({ python: testPython(), ...settings(), logger });
    runtimes.push(runtime);
    runtime.start();
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    remember(runtime);
    await runtime.close();
    expect(runtime.status()).toMatchObject({ state: 'closed', error: null });
    expect(lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    expect(lines.filter((line) => line.event === 'runtime.startup_abandoned').length).toBeLessThanOrEqual(1);
    expect([...seenPids].filter(alive)).toEqual([]);
  });

  it('a worker start-up that really fails is still reported unavailable', async () => {
    const runtime = new Runtime({ python: testPython(), ...settings({ worker: { preloadModules: ['no_such_module_for_this_test'] } }) });
    runtimes.push(runtime);
    runtime.start();
    const outcome = await runtime.run('execute', { code: '1' });
    expect(!outcome.ok && outcome.error.code).toBe('runtime_unavailable');
    expect(runtime.status().state).toBe('unavailable');
  });
});

describe('Runtime with an interpreter that cannot start', () => {
  it('is unavailable with a clear error, and close() still resolves', async () => {
    const runtime = new Runtime({ python: '/nonexistent/python3', ...settings() });
    runtime.start();
    const outcome = await runtime.run('execute', { code: '1' });
    expect(!outcome.ok && outcome.error.code).toBe('runtime_unavailable');
    expect(runtime.status()).toMatchObject({ state: 'unavailable' });
    expect(runtime.status().error).toContain('Python interpreter not found: /nonexistent/python3');
    const closed = await Promise.race([
      runtime.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 5000)),
    ]);
    expect(closed).toBe('closed');
  });
});

describe('a library directory that does not exist', () => {
  it('leaves the runtime unavailable before any worker starts, naming the setting, and tells onUnavailable', async () => {
    const runtime = new Runtime({ python: testPython(), ...settings({ worker: { libraryPaths: ['/nonexistent/ipython-mcp-lib'] } }) });
    runtimes.push(runtime);
    const heard: string[] = [];
    runtime.onUnavailable((error) => heard.push(error));
    runtime.start();
    expect(runtime.status().state).toBe('unavailable');
    expect(runtime.workerPids()).toEqual([]);
    await eventually(() => heard.length, (count) => count === 1);
    expect(heard[0]).toContain('IPYTHON_MCP_LIBRARY_PATHS');
    expect(runtime.status().error).toContain('/nonexistent/ipython-mcp-lib');
    const outcome = await runtime.run('execute', { code: '1' });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.code).toBe('runtime_unavailable');
      expect(outcome.error.message).toContain('Fix: create it');
    }
  });
});
