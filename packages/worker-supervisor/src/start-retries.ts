import type { OperationFailure } from './runtime-types.js';
import type { WorkerStartupError } from './worker-connection.js';
import { MAX_ERROR_CHARS } from './outcome-wording.js';

/** What a runtime whose starts keep failing for a passing cause is waiting for, since when, and how it tries. */
interface Outage {
  readonly code: 'runtime_busy' | 'runtime_unavailable';
  /** The latest failure's words. */
  readonly message: string;
  /** What the runtime waits for, in the backend's words (`the Jupyter server at URL to answer`). */
  readonly waitingFor: string | undefined;
  /** When the first failed start of this outage happened (wall clock, for the answer's words). */
  readonly since: Date;
  /** Failed starts in this outage. */
  readonly attempts: number;
  /** When the latest failed start began (performance clock): a call that arrived after it has not heard from it. */
  readonly attemptBegan: number;
  /** When the next background start is due (performance clock). */
  readonly nextAt: number;
}

/**
 * The back-off of a runtime whose worker cannot start for now (a Jupyter server that is restarting, a kernel stuck
 * in a cell): another start runs in the background after the interval the backend gives, whether or not anyone
 * calls, and a call that arrives in between never gets an answer older than itself: it runs a start of its own
 * first (see WorkerPool.activeWorker). Success, or the runtime's close, ends the outage.
 */
export class StartRetries {
  #outage: Outage | undefined;
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param tryAgain - starts another worker in the background (the pool's replacement of the one that failed)
   * @param unref - whether the background timer may let Node exit (a library runtime with `unrefWhenIdle`)
   */
  constructor(
    private readonly tryAgain: () => void,
    private readonly unref: boolean,
  ) {}

  /** Whether the runtime is in an outage: unavailable for now, retrying. */
  get pending(): boolean {
    return this.#outage !== undefined;
  }

  /** The outage as runtime_status and logs describe it, or undefined. */
  get facts(): { since: string; attempts: number; nextInMs: number; waitingFor: string | null } | undefined {
    const outage = this.#outage;
    if (outage === undefined) return undefined;
    return {
      since: outage.since.toISOString(),
      attempts: outage.attempts,
      nextInMs: Math.max(0, Math.ceil(outage.nextAt - performance.now())),
      waitingFor: outage.waitingFor ?? null,
    };
  }

  /**
   * Records a start that failed for a passing cause and schedules the next one.
   *
   * @param error - the failure, with the backend's code and interval
   * @param began - when that start began (performance clock)
   */
  failed(error: WorkerStartupError & { retry: NonNullable<WorkerStartupError['retry']> }, began: number): void {
    const previous = this.#outage;
    const afterMs = Math.max(0, error.retry.afterMs);
    this.#outage = {
      code: error.retry.code,
      message: error.message.slice(0, MAX_ERROR_CHARS),
      waitingFor: error.retry.waitingFor ?? previous?.waitingFor,
      since: previous?.since ?? new Date(),
      attempts: (previous?.attempts ?? 0) + 1,
      attemptBegan: began,
      nextAt: performance.now() + afterMs,
    };
    this.#schedule(afterMs);
  }

  /** Whether the latest failed start began at or after `arrivedAt`: its answer is not older than the call. */
  freshFor(arrivedAt: number): boolean {
    return this.#outage !== undefined && this.#outage.attemptBegan >= arrivedAt;
  }

  /** What a call answers during the outage: the latest failure, what is awaited and since when, and when the next try is. */
  failure(): OperationFailure {
    const outage = this.#outage;
    if (outage === undefined) return { code: 'runtime_unavailable', message: 'the runtime has not started' };
    const retryAfterMs = Math.max(1, Math.ceil(outage.nextAt - performance.now()));
    const since = outage.since.toISOString().replace(/\.\d+Z$/, 'Z');
    const waiting = outage.waitingFor === undefined ? 'waiting' : `waiting for ${outage.waitingFor}`;
    return {
      code: outage.code,
      message: `${outage.message}; ${waiting} since ${since}: ipython-mcp keeps trying in the background, and a call made once it is back works (nothing was run)`,
      details: { waiting_for: outage.waitingFor ?? null, since: outage.since.toISOString(), attempts: outage.attempts },
      retryable: true,
      retryAfterMs,
    };
  }

  /** The outage is over (a worker started) or the runtime closes: no more background starts. */
  clear(): void {
    this.#outage = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** A call is about to run a start of its own: the background one due later is not needed. */
  cancelScheduled(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(afterMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.tryAgain();
    }, afterMs);
    if (this.unref) this.#timer.unref();
  }
}
