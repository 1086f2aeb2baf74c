/**
 * Bounded FIFO admission with exactly one active operation.
 *
 * Why not p-queue: it was tried first and does not fit exactly, for three reasons
 * checked against p-queue 9.3.5.
 * 1. When a dispatched task's `signal` aborts, `add()` rejects at once and the
 *    concurrency slot is freed, so the next task starts while the aborted one is
 *    still running (two active at once). Here a dispatched task always keeps the
 *    slot until it settles.
 * 2. `clear()` drops queued tasks without settling their promises, so callers would
 *    hang. `close()` here must reject each one with `runtime_closed`.
 * 3. It has no bound on time spent waiting in the queue (its `timeout` counts from
 *    dispatch), and no admission sequence.
 * Working around all three would mean keeping our own entry list, timers and state
 * next to p-queue's copy of the same facts, so this file keeps one small FIFO instead:
 * a `Set` keeps insertion order and removes any entry in O(1). This package has no
 * dependencies (docs/decisions/0003-hand-written-admission-queue.md).
 */
import { AdmissionError } from './errors.js';
import { type AdmissionQueueOptions, type ResolvedAdmissionQueueOptions, resolveAdmissionQueueOptions } from './options.js';

/**
 * What a task learns about its own admission. All times are monotonic milliseconds
 * from `performance.now()`, so they compare only with each other, not with wall time.
 */
export interface AdmissionTicket {
  /** Admission sequence: 1 for the first admitted call, then 2, 3, and so on. */
  readonly sequence: number;
  /** When the call was admitted. */
  readonly admittedAt: number;
  /** When the task was started; a per-operation deadline should count from here. */
  readonly dispatchedAt: number;
  /** `dispatchedAt - admittedAt`: time spent waiting behind earlier calls. */
  readonly queueWaitMs: number;
}

/**
 * The task's view of its own cancellation. The queue aborts it when the caller cancels after dispatch (reason:
 * an {@link AdmissionError} `operation_cancelled` whose `cause` is the caller's reason) or when the queue closes
 * (reason: an {@link AdmissionError} `runtime_closed`). The queue never abandons the task: it waits for the
 * returned promise either way.
 *
 * Why not a plain `AbortSignal`: an `AbortController` and its `EventTarget` listeners cost several microseconds
 * per operation, and most operations are never cancelled. {@link AdmissionAbort.onAbort} is a plain callback;
 * {@link AdmissionAbort.signal} is created only when a task reads it, and is then aborted the same way.
 */
export interface AdmissionAbort {
  /** Whether the task has been told to stop. */
  readonly aborted: boolean;
  /** The abort reason once {@link AdmissionAbort.aborted}; `undefined` before. */
  readonly reason: unknown;
  /** A standard signal for APIs that take one; created on first read, already aborted if the task was. */
  readonly signal: AbortSignal;
  /**
   * Calls `listener` once with the reason when the task is aborted (never if it was already aborted: check
   * {@link AdmissionAbort.aborted} first). Returns a function that removes the listener.
   */
  onAbort(listener: (reason: unknown) => void): () => void;
}

/**
 * The work admitted by {@link AdmissionQueue.run}.
 *
 * @param ticket - the call's admission facts
 * @param abort - aborted when the caller cancels after dispatch or when the queue closes ({@link AdmissionAbort})
 */
export type AdmissionTask<T> = (ticket: AdmissionTicket, abort: AdmissionAbort) => Promise<T>;

/** Per-call options for {@link AdmissionQueue.run}. */
export interface AdmissionRunOptions {
  /**
   * The caller's cancellation. Aborting while the call waits removes exactly this
   * call (`operation_cancelled`); aborting after dispatch only aborts the task's signal.
   */
  readonly signal?: AbortSignal | undefined;
}

/** An admitted call still waiting for its turn. */
interface QueuedEntry {
  readonly sequence: number;
  readonly admittedAt: number;
  readonly callerSignal: AbortSignal | undefined;
  /** Runs the task; the returned thunk settles the caller's promise with the outcome. */
  readonly execute: (ticket: AdmissionTicket, abort: AdmissionAbort) => Promise<() => void>;
  readonly reject: (reason: unknown) => void;
  /** Clears the wait timer and the caller-abort listener; safe to call twice. */
  detach: () => void;
}

/** The one dispatched call. */
interface ActiveEntry {
  readonly ticket: AdmissionTicket;
  readonly abort: TaskAbort;
}

/** {@link AdmissionAbort} with its listeners in a plain array and its `AbortController` made on demand. */
class TaskAbort implements AdmissionAbort {
  #aborted = false;
  #reason: unknown = undefined;
  #controller: AbortController | undefined;
  #listeners: Array<(reason: unknown) => void> | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.#aborted) return () => undefined;
    const listeners = (this.#listeners ??= []);
    listeners.push(listener);
    return () => {
      const index = listeners.indexOf(listener);
      if (index !== -1) listeners.splice(index, 1);
    };
  }

  /** Aborts once; later calls do nothing, like `AbortController.abort`. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener(reason);
  }
}

const now = (): number => performance.now();

/**
 * A bounded FIFO admission controller that runs exactly one task at a time.
 *
 * Admitted calls receive consecutive sequence numbers and run strictly in admission
 * order. Rejections that happen before admission (`runtime_closed` after close,
 * `operation_cancelled` for an already-aborted signal, `runtime_busy` for a full
 * queue) consume no sequence number, so sequences count admitted work only.
 * Outcomes after admission (`queue_timeout`, `operation_cancelled` while queued,
 * `runtime_closed` while queued) keep the sequence they were given.
 */
export class AdmissionQueue {
  readonly #options: ResolvedAdmissionQueueOptions;
  readonly #queue = new Set<QueuedEntry>();
  #active: ActiveEntry | undefined;
  #closed = false;
  #lastSequence = 0;
  #idleWaiters: Array<() => void> = [];

  /**
   * @param options - pending bound, queue wait bound and retry hint
   * @throws AdmissionOptionsError when an option is out of range
   */
  constructor(options: AdmissionQueueOptions) {
    this.#options = resolveAdmissionQueueOptions(options);
  }

  /** Number of admitted calls waiting; the active call is not included. */
  get pending(): number {
    return this.#queue.size;
  }

  /** Whether a task is running now. */
  get active(): boolean {
    return this.#active !== undefined;
  }

  /** Whether {@link AdmissionQueue.close} has been called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Sequence of the most recently admitted call; 0 before the first admission. */
  get lastSequence(): number {
    return this.#lastSequence;
  }

  /**
   * Admits `task` and runs it once every earlier admitted call has settled.
   *
   * The returned promise settles with the task's own result or error, or rejects
   * with an {@link AdmissionError} if the task never ran: `runtime_busy`,
   * `queue_timeout`, `operation_cancelled` or `runtime_closed`.
   *
   * @param task - the work; it is called at most once, and never after a rejection
   * @param options - optional caller signal
   */
  run<T>(task: AdmissionTask<T>, options: AdmissionRunOptions = {}): Promise<T> {
    const callerSignal = options.signal;
    if (this.#closed) {
      return Promise.reject(new AdmissionError('runtime_closed'));
    }
    if (callerSignal?.aborted === true) {
      return Promise.reject(new AdmissionError('operation_cancelled', { cause: callerSignal.reason }));
    }
    // The invariant "nothing queued while nothing is active" makes an idle queue
    // accept even at maxPending, since the call is dispatched rather than queued.
    if (this.#active !== undefined && this.#queue.size >= this.#options.maxPending) {
      return Promise.reject(new AdmissionError('runtime_busy', { retryAfterMs: this.#options.retryAfterMs }));
    }

    return new Promise<T>((resolve, reject) => {
      const entry: QueuedEntry = {
        sequence: ++this.#lastSequence,
        admittedAt: now(),
        callerSignal,
        execute: (ticket, abort) =>
          // The executor turns a synchronous throw from `task` into a rejection.
          new Promise<T>((settle) => settle(task(ticket, abort))).then(
            (value) => () => resolve(value),
            (error: unknown) => () => reject(error),
          ),
        reject,
        detach: () => undefined,
      };
      if (this.#active === undefined) {
        this.#dispatch(entry);
      } else {
        this.#enqueue(entry);
      }
    });
  }

  /**
   * Stops admission and drains the queue. Every waiting call rejects with
   * `runtime_closed`, later calls reject the same way, and the active task's signal
   * is aborted with a `runtime_closed` {@link AdmissionError}. The active task is not
   * abandoned: await {@link AdmissionQueue.onIdle} to know when it has settled.
   * Calling it again does nothing.
   */
  close(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    const waiting = [...this.#queue];
    this.#queue.clear();
    const closedAt = now();
    for (const entry of waiting) {
      entry.detach();
      entry.reject(
        new AdmissionError('runtime_closed', { sequence: entry.sequence, queueWaitMs: closedAt - entry.admittedAt }),
      );
    }
    const active = this.#active;
    active?.abort.abort(
      new AdmissionError('runtime_closed', { sequence: active.ticket.sequence, queueWaitMs: active.ticket.queueWaitMs }),
    );
    this.#resolveIdleWaitersIfIdle();
  }

  /**
   * Resolves once nothing is active and nothing is waiting; immediately if that is
   * already so. After {@link AdmissionQueue.close} it resolves when the active task,
   * if any, has settled.
   */
  onIdle(): Promise<void> {
    if (this.#isIdle()) {
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve);
    });
  }

  #enqueue(entry: QueuedEntry): void {
    const timer = setTimeout(() => {
      this.#removeQueued(entry, 'queue_timeout');
    }, this.#options.queueWaitTimeoutMs);
    const onCallerAbort = (): void => {
      this.#removeQueued(entry, 'operation_cancelled');
    };
    const { callerSignal } = entry;
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    entry.detach = () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    };
    this.#queue.add(entry);
  }

  #removeQueued(entry: QueuedEntry, code: 'queue_timeout' | 'operation_cancelled'): void {
    // The entry may already have left the queue in this same turn (dispatched or
    // closed); its listeners are detached then, but be exact rather than lucky.
    if (!this.#queue.delete(entry)) {
      return;
    }
    entry.detach();
    entry.reject(
      new AdmissionError(code, {
        sequence: entry.sequence,
        queueWaitMs: now() - entry.admittedAt,
        retryAfterMs: this.#options.retryAfterMs,
        cause: code === 'operation_cancelled' ? entry.callerSignal?.reason : undefined,
      }),
    );
  }

  #dispatch(entry: QueuedEntry): void {
    entry.detach();
    const dispatchedAt = now();
    const ticket: AdmissionTicket = Object.freeze({
      sequence: entry.sequence,
      admittedAt: entry.admittedAt,
      dispatchedAt,
      queueWaitMs: dispatchedAt - entry.admittedAt,
    });
    const abort = new TaskAbort();
    // Set before the task is called, so a task that calls run() synchronously queues behind itself.
    this.#active = { ticket, abort };

    const { callerSignal } = entry;
    const forwardCancel = (): void => {
      abort.abort(
        new AdmissionError('operation_cancelled', {
          sequence: ticket.sequence,
          queueWaitMs: ticket.queueWaitMs,
          cause: callerSignal?.reason,
        }),
      );
    };
    callerSignal?.addEventListener('abort', forwardCancel, { once: true });

    void entry.execute(ticket, abort).then((deliver) => {
      callerSignal?.removeEventListener('abort', forwardCancel);
      this.#active = undefined;
      deliver();
      // Dispatch in the same turn the previous task settled: there is never a moment
      // where a call waits while nothing is active.
      this.#dispatchNext();
    });
  }

  #dispatchNext(): void {
    const next = this.#queue.values().next();
    if (next.done === true) {
      this.#resolveIdleWaitersIfIdle();
      return;
    }
    this.#queue.delete(next.value);
    this.#dispatch(next.value);
  }

  #isIdle(): boolean {
    return this.#active === undefined && this.#queue.size === 0;
  }

  #resolveIdleWaitersIfIdle(): void {
    if (!this.#isIdle() || this.#idleWaiters.length === 0) {
      return;
    }
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) {
      resolve();
    }
  }
}
