import { createHook } from 'node:async_hooks';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import {
  AdmissionError,
  AdmissionOptionsError,
  AdmissionQueue,
  DEFAULT_RETRY_AFTER_MS,
  MAX_TIMER_DELAY_MS,
  type AdmissionAbort,
  type AdmissionErrorCode,
  type AdmissionQueueOptions,
  type AdmissionTicket,
} from './index.js';

// Captured before any test installs fake timers: one real macrotask turn drains
// every pending microtask, whatever the number of promise hops inside the queue.
const realSetImmediate = globalThis.setImmediate;
const flush = (): Promise<void> =>
  new Promise((resolve) => {
    realSetImmediate(resolve);
  });

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { promise, resolve, reject };
}

/** Records a promise's outcome without letting a rejection go unhandled. */
function observe<T>(promise: Promise<T>): { readonly settled: boolean; readonly value?: T; readonly error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
}

function expectAdmissionError(error: unknown, code: AdmissionErrorCode): AdmissionError {
  expect(error).toBeInstanceOf(AdmissionError);
  const admissionError = error as AdmissionError;
  expect(admissionError.code).toBe(code);
  return admissionError;
}

/** Starts a task that holds the single active slot until released. */
function holdActive(queue: AdmissionQueue): {
  readonly result: Promise<string>;
  readonly release: () => void;
  readonly signal: () => AbortSignal;
} {
  const gate = deferred();
  let taskSignal: AbortSignal | undefined;
  const result = queue.run(async (_ticket, { signal }) => {
    taskSignal = signal;
    await gate.promise;
    return 'held';
  });
  return {
    result,
    release: () => gate.resolve(),
    signal: () => {
      if (taskSignal === undefined) throw new Error('the held task has not started');
      return taskSignal;
    },
  };
}

/**
 * A wait timeout no other timer in the process uses: the probe below counts only
 * Timeout objects with this exact delay, so the runner's own timers cannot disturb it.
 */
const PROBE_WAIT_TIMEOUT_MS = 61_237;

/**
 * Tracks the live real `Timeout` objects whose delay is `delayMs`. async_hooks
 * emits `init` when a timer is created and `destroy` when it is cleared or has
 * fired (a 61 s timer cannot fire within a test). `destroy` arrives as a native
 * immediate, which Node runs before the JS immediates of the same turn, so one
 * {@link flush} after a clear is enough for `live()` to see it.
 */
function trackTimeouts(delayMs: number): { live(): number; stop(): void } {
  const live = new Set<number>();
  const hook = createHook({
    init(asyncId, type, _triggerAsyncId, resource) {
      // `_idleTimeout` is Node's own field for a Timeout's delay; no public getter exists.
      if (type === 'Timeout' && (resource as { _idleTimeout?: unknown })._idleTimeout === delayMs) {
        live.add(asyncId);
      }
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return { live: () => live.size, stop: () => hook.disable() };
}

const baseOptions: AdmissionQueueOptions = { maxPending: 4, queueWaitTimeoutMs: 1000 };

describe('AdmissionQueue options', () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2'])('rejects maxPending %s', (maxPending) => {
    const create = () => new AdmissionQueue({ ...baseOptions, maxPending: maxPending as number });
    expect(create).toThrow(AdmissionOptionsError);
    try {
      create();
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_admission_options', option: 'maxPending', value: maxPending });
    }
  });

  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY, MAX_TIMER_DELAY_MS + 1])(
    'rejects queueWaitTimeoutMs %s',
    (queueWaitTimeoutMs) => {
      expect(() => new AdmissionQueue({ ...baseOptions, queueWaitTimeoutMs })).toThrow(
        expect.objectContaining({ option: 'queueWaitTimeoutMs' }),
      );
    },
  );

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('rejects retryAfterMs %s', (retryAfterMs) => {
    expect(() => new AdmissionQueue({ ...baseOptions, retryAfterMs })).toThrow(
      expect.objectContaining({ option: 'retryAfterMs' }),
    );
  });

  it('rejects a missing options object from untyped callers', () => {
    expect(() => new AdmissionQueue(undefined as unknown as AdmissionQueueOptions)).toThrow(AdmissionOptionsError);
  });

  it('accepts the boundary values', () => {
    expect(() => new AdmissionQueue({ maxPending: 1, queueWaitTimeoutMs: 0.5, retryAfterMs: 0 })).not.toThrow();
    expect(() => new AdmissionQueue({ maxPending: 1, queueWaitTimeoutMs: MAX_TIMER_DELAY_MS })).not.toThrow();
  });
});

describe('AdmissionQueue sequencing and FIFO dispatch', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs admitted calls one at a time in sequence order', async () => {
    const queue = new AdmissionQueue({ maxPending: 50, queueWaitTimeoutMs: 60_000 });
    const finished: number[] = [];
    const tickets: AdmissionTicket[] = [];
    let running = 0;
    let maxRunning = 0;
    const count = 20;
    const calls = Array.from({ length: count }, (_, index) =>
      queue.run(async (ticket) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        tickets.push(ticket);
        // Earlier calls sleep longer: any overlap would finish them out of order.
        await new Promise((resolve) => setTimeout(resolve, (count - index) * 10));
        finished.push(ticket.sequence);
        running -= 1;
        return ticket.sequence;
      }),
    );

    await vi.runAllTimersAsync();
    const results = await Promise.all(calls);

    const expected = Array.from({ length: count }, (_, index) => index + 1);
    expect(finished).toEqual([...finished].sort((left, right) => left - right));
    expect(finished).toEqual(expected);
    expect(results).toEqual(expected);
    expect(maxRunning).toBe(1);
    expect(queue.lastSequence).toBe(count);
    for (const ticket of tickets) {
      expect(Object.isFrozen(ticket)).toBe(true);
      expect(ticket.queueWaitMs).toBe(ticket.dispatchedAt - ticket.admittedAt);
    }
    // Call 3 waits while calls 1 and 2 sleep 200 ms and 190 ms.
    expect(tickets[2]?.queueWaitMs).toBe(200 + 190);
  });

  it('dispatches a call on an idle queue synchronously with no queue wait', async () => {
    const queue = new AdmissionQueue(baseOptions);
    expect(queue.active).toBe(false);
    let seen: AdmissionTicket | undefined;
    const call = queue.run(async (ticket) => {
      seen = ticket;
      return 'done';
    });
    expect(seen).toMatchObject({ sequence: 1, queueWaitMs: 0 });
    expect(queue.active).toBe(true);
    expect(queue.pending).toBe(0);
    await expect(call).resolves.toBe('done');
    expect(queue.active).toBe(false);
  });

  it('keeps a task that calls run() from inside itself behind itself', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const order: string[] = [];
    let inner: Promise<string> | undefined;
    const outer = queue.run(async () => {
      inner = queue.run(async () => {
        order.push('inner');
        return 'inner';
      });
      order.push('outer');
      return 'outer';
    });
    expect(queue.pending).toBe(1);
    await expect(outer).resolves.toBe('outer');
    await expect(inner).resolves.toBe('inner');
    expect(order).toEqual(['outer', 'inner']);
  });
});

describe('AdmissionQueue pending bound', () => {
  it('queues exactly maxPending behind the active call and rejects the rest at once', async () => {
    const queue = new AdmissionQueue({ maxPending: 2, queueWaitTimeoutMs: 60_000 });
    const started: number[] = [];
    const gate = deferred();
    const calls = Array.from({ length: 50 }, () =>
      observe(
        queue.run(async (ticket) => {
          started.push(ticket.sequence);
          await gate.promise;
          return ticket.sequence;
        }),
      ),
    );

    await flush();
    const rejected = calls.filter((call) => call.settled);
    expect(rejected).toHaveLength(47);
    expect(queue.active).toBe(true);
    expect(queue.pending).toBe(2);
    expect(queue.lastSequence).toBe(3);
    expect(started).toEqual([1]);
    for (const call of rejected) {
      const error = expectAdmissionError(call.error, 'runtime_busy');
      expect(error.retryable).toBe(true);
      expect(error.retryAfterMs).toBe(DEFAULT_RETRY_AFTER_MS);
      expect(error.sequence).toBeUndefined();
      expect(error.queueWaitMs).toBeUndefined();
    }

    gate.resolve();
    await queue.onIdle();
    await flush();
    expect(started).toEqual([1, 2, 3]);
    expect(calls.slice(0, 3).map((call) => call.value)).toEqual([1, 2, 3]);
    expect(queue.lastSequence).toBe(3);
  });

  it('uses the configured retry hint and frees a slot once a call is dispatched', async () => {
    const queue = new AdmissionQueue({ maxPending: 1, queueWaitTimeoutMs: 60_000, retryAfterMs: 250 });
    const first = holdActive(queue);
    const second = deferred();
    const secondCall = queue.run(() => second.promise);
    const busy = queue.run(async () => 'never');
    await expect(busy).rejects.toMatchObject({ code: 'runtime_busy', retryAfterMs: 250 });

    first.release();
    await first.result;
    // The second call is active now, so the pending slot is free again.
    expect(queue.active).toBe(true);
    expect(queue.pending).toBe(0);
    const third = queue.run(async (ticket) => ticket.sequence);
    expect(queue.pending).toBe(1);
    second.resolve();
    await secondCall;
    await expect(third).resolves.toBe(3);
  });
});

describe('AdmissionQueue queue wait timeout', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects a call that waits too long and never runs its task', async () => {
    const queue = new AdmissionQueue({ maxPending: 4, queueWaitTimeoutMs: 100 });
    const active = holdActive(queue);
    const task = vi.fn(async () => 'late');
    const waiting = observe(queue.run(task));
    const behind = observe(queue.run(async (ticket) => ticket));

    await vi.advanceTimersByTimeAsync(99);
    expect(waiting.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = expectAdmissionError(waiting.error, 'queue_timeout');
    expect(error).toMatchObject({ sequence: 2, retryable: true, retryAfterMs: DEFAULT_RETRY_AFTER_MS, queueWaitMs: 100 });
    // The later call was admitted at the same instant, so it expires too.
    await flush();
    expect(behind.error).toMatchObject({ code: 'queue_timeout', sequence: 3 });
    expect(queue.pending).toBe(0);
    expect(vi.getTimerCount()).toBe(0);

    active.release();
    await expect(active.result).resolves.toBe('held');
    expect(task).not.toHaveBeenCalled();
    expect(active.signal().aborted).toBe(false);
  });

  it('stops counting queue time at dispatch', async () => {
    const queue = new AdmissionQueue({ maxPending: 4, queueWaitTimeoutMs: 100 });
    const active = holdActive(queue);
    let taskSignal: AbortSignal | undefined;
    const call = queue.run(async (ticket, { signal }) => {
      taskSignal = signal;
      // Runs far longer than the queue wait bound: that bound no longer applies.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return ticket;
    });

    await vi.advanceTimersByTimeAsync(90);
    active.release();
    await active.result;
    await flush();
    expect(taskSignal).toBeDefined();
    // Only the task's own sleep is left: the wait timer went with the dispatch.
    expect(vi.getTimerCount()).toBe(1);

    await vi.advanceTimersByTimeAsync(500);
    const ticket = await call;
    expect(ticket.queueWaitMs).toBe(90);
    expect(taskSignal?.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('AdmissionQueue cancellation', () => {
  it('removes exactly the cancelled queued call and keeps the order of the others', async () => {
    const queue = new AdmissionQueue({ maxPending: 8, queueWaitTimeoutMs: 60_000 });
    const ran: number[] = [];
    const record = async (ticket: AdmissionTicket): Promise<number> => {
      ran.push(ticket.sequence);
      return ticket.sequence;
    };
    const active = holdActive(queue);
    const controller = new AbortController();
    const cancelledTask = vi.fn(record);
    const second = queue.run(record);
    const third = queue.run(record);
    const fourth = observe(queue.run(cancelledTask, { signal: controller.signal }));
    const fifth = queue.run(record);

    controller.abort('caller went away');
    await flush();
    const error = expectAdmissionError(fourth.error, 'operation_cancelled');
    expect(error).toMatchObject({ sequence: 4, retryable: false, retryAfterMs: undefined, cause: 'caller went away' });
    expect(error.queueWaitMs).toBeGreaterThanOrEqual(0);
    expect(queue.pending).toBe(3);

    active.release();
    await expect(Promise.all([second, third, fifth])).resolves.toEqual([2, 3, 5]);
    expect(ran).toEqual([2, 3, 5]);
    expect(cancelledTask).not.toHaveBeenCalled();
  });

  it('rejects an already-aborted signal before admission', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const task = vi.fn(async () => 'never');
    const reason = new Error('already gone');
    await expect(queue.run(task, { signal: AbortSignal.abort(reason) })).rejects.toMatchObject({
      code: 'operation_cancelled',
      sequence: undefined,
      cause: reason,
    });
    expect(task).not.toHaveBeenCalled();
    expect(queue.lastSequence).toBe(0);
  });

  it('after dispatch only signals the task and waits for it to settle', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const controller = new AbortController();
    const gate = deferred();
    let taskSignal: AbortSignal | undefined;
    const call = queue.run(
      async (_ticket, { signal }) => {
        taskSignal = signal;
        await gate.promise;
        return 'finished anyway';
      },
      { signal: controller.signal },
    );
    const nextTask = vi.fn(async () => 'next');
    const next = queue.run(nextTask);

    controller.abort('stop please');
    await flush();
    expect(taskSignal?.aborted).toBe(true);
    const reason = expectAdmissionError(taskSignal?.reason, 'operation_cancelled');
    expect(reason).toMatchObject({ sequence: 1, cause: 'stop please' });
    // The queue neither abandons the task nor lets the next one start beside it.
    expect(queue.active).toBe(true);
    expect(nextTask).not.toHaveBeenCalled();

    gate.resolve();
    await expect(call).resolves.toBe('finished anyway');
    await expect(next).resolves.toBe('next');
  });

  it('tells onAbort listeners once, and a signal read only after the abort is already aborted', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const controller = new AbortController();
    const gate = deferred();
    const heard: unknown[] = [];
    let abortView: AdmissionAbort | undefined;
    const call = queue.run(
      async (_ticket, abort) => {
        abortView = abort;
        abort.onAbort((reason) => heard.push(reason));
        const removed = abort.onAbort(() => heard.push('removed listener ran'));
        removed();
        expect(abort.aborted).toBe(false);
        expect(abort.reason).toBeUndefined();
        await gate.promise;
        return 'done';
      },
      { signal: controller.signal },
    );
    await flush();
    controller.abort('stop');
    controller.abort('again');
    expect(heard).toHaveLength(1);
    expectAdmissionError(heard[0], 'operation_cancelled');
    expect(abortView?.aborted).toBe(true);
    expect(abortView?.reason).toBe(heard[0]);
    // The standard signal is made on first read and carries the same reason.
    expect(abortView?.signal.aborted).toBe(true);
    expect(abortView?.signal.reason).toBe(heard[0]);
    // A listener added after the abort is never called: the task checks `aborted` first.
    abortView?.onAbort(() => heard.push('late'));
    gate.resolve();
    await expect(call).resolves.toBe('done');
    expect(heard).toHaveLength(1);
  });

  it('ignores a caller abort that arrives after the call settled', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const controller = new AbortController();
    let taskSignal: AbortSignal | undefined;
    await queue.run(
      async (_ticket, { signal }) => {
        taskSignal = signal;
      },
      { signal: controller.signal },
    );
    controller.abort();
    expect(taskSignal?.aborted).toBe(false);
  });
});

describe('AdmissionQueue close', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects queued calls, signals the active task, and still awaits it', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const active = holdActive(queue);
    const queuedTask = vi.fn(async () => 'never');
    const second = observe(queue.run(queuedTask));
    const third = observe(queue.run(queuedTask));
    await vi.advanceTimersByTimeAsync(10);

    queue.close();
    expect(queue.closed).toBe(true);
    expect(queue.pending).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    const reason = expectAdmissionError(active.signal().reason, 'runtime_closed');
    expect(reason.sequence).toBe(1);

    const afterClose = queue.run(queuedTask);
    await expect(afterClose).rejects.toMatchObject({ code: 'runtime_closed', sequence: undefined, retryable: false });
    expect(queue.lastSequence).toBe(3);

    await flush();
    for (const [call, sequence] of [
      [second, 2],
      [third, 3],
    ] as const) {
      const error = expectAdmissionError(call.error, 'runtime_closed');
      expect(error).toMatchObject({ sequence, retryable: false, retryAfterMs: undefined, queueWaitMs: 10 });
    }

    const idle = observe(queue.onIdle());
    await flush();
    expect(idle.settled).toBe(false);
    expect(queue.active).toBe(true);

    queue.close();
    active.release();
    await expect(active.result).resolves.toBe('held');
    await flush();
    expect(idle.settled).toBe(true);
    expect(queue.active).toBe(false);
    expect(queuedTask).not.toHaveBeenCalled();
  });

  it('lets the active task turn the close into its own failure', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const call = queue.run(
      (_ticket, { signal }) =>
        new Promise<never>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    );
    queue.close();
    await expect(call).rejects.toMatchObject({ code: 'runtime_closed', sequence: 1 });
    await queue.onIdle();
  });

  it('is safe on an idle queue and when repeated', async () => {
    const queue = new AdmissionQueue(baseOptions);
    queue.close();
    queue.close();
    expect(queue.closed).toBe(true);
    await expect(queue.onIdle()).resolves.toBeUndefined();
    await expect(queue.run(async () => 1)).rejects.toMatchObject({ code: 'runtime_closed' });
  });
});

describe('AdmissionQueue task failures', () => {
  it('rejects only the failing call and keeps dispatching', async () => {
    const queue = new AdmissionQueue(baseOptions);
    const asyncFailure = new Error('async failure');
    const syncFailure = new Error('sync failure');
    const first = queue.run(async () => 'first');
    const second = queue.run(async () => {
      throw asyncFailure;
    });
    const third = queue.run((): Promise<never> => {
      throw syncFailure;
    });
    const fourth = queue.run(async (ticket) => ticket.sequence);

    await expect(first).resolves.toBe('first');
    await expect(second).rejects.toBe(asyncFailure);
    await expect(third).rejects.toBe(syncFailure);
    await expect(fourth).resolves.toBe(4);
    expect(queue.active).toBe(false);
    expect(queue.pending).toBe(0);
  });
});

describe('AdmissionQueue onIdle', () => {
  it('resolves at once when idle and after the queue drains otherwise', async () => {
    const queue = new AdmissionQueue(baseOptions);
    await expect(queue.onIdle()).resolves.toBeUndefined();
    const active = holdActive(queue);
    const queued = queue.run(async () => 'queued');
    const idle = observe(queue.onIdle());
    active.release();
    await active.result;
    await queued;
    await flush();
    expect(idle.settled).toBe(true);
  });
});

/**
 * One wait timer per waiting entry, each cleared on cancel, on dispatch and on close. `live()` counts the queue's
 * timers; the count is read after every step has settled (`flush`), so a timer's asynchronous teardown is seen too.
 */
async function expectEveryWaitTimerCleared(live: () => number, queueWaitTimeoutMs: number): Promise<void> {
  const queue = new AdmissionQueue({ maxPending: 4, queueWaitTimeoutMs });
  const active = holdActive(queue);
  const controller = new AbortController();
  const dispatched = holdActive(queue);
  const cancelled = observe(queue.run(async () => 'never', { signal: controller.signal }));
  const closed = observe(queue.run(async () => 'never'));
  // Proves the probe sees the queue's timers at all: one per waiting entry.
  expect(live()).toBe(3);

  controller.abort();
  await flush();
  expect(live()).toBe(2);
  active.release();
  await active.result;
  await flush();
  expect(dispatched.signal().aborted).toBe(false);
  expect(live()).toBe(1);
  queue.close();
  await flush();
  expect(live()).toBe(0);
  dispatched.release();
  await queue.onIdle();
  await flush();
  expect(cancelled.error).toMatchObject({ code: 'operation_cancelled' });
  expect(closed.error).toMatchObject({ code: 'runtime_closed' });
  expect(live()).toBe(0);
}

describe('AdmissionQueue timers', () => {
  it('clears each wait timer on dispatch, cancel, and close (fake timers)', async () => {
    vi.useFakeTimers();
    try {
      await expectEveryWaitTimerCleared(() => vi.getTimerCount(), 60_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves no Timeout handle in the process (real timers)', async () => {
    const timers = trackTimeouts(PROBE_WAIT_TIMEOUT_MS);
    try {
      await expectEveryWaitTimerCleared(() => timers.live(), PROBE_WAIT_TIMEOUT_MS);
    } finally {
      timers.stop();
    }
  });
});
