/**
 * Typed failures of the admission queue.
 *
 * Two classes, because they fail at different times for different readers: an
 * {@link AdmissionOptionsError} is a programming or configuration mistake found
 * while constructing the queue, while an {@link AdmissionError} is a runtime
 * outcome of one call that a caller may map onto a wire error and may retry.
 */

/**
 * Stable codes for why a call did not (or could no longer) run its task.
 *
 * - `runtime_busy`: the pending queue was full at admission; the task never ran.
 * - `queue_timeout`: the call waited longer than `queueWaitTimeoutMs`; the task never ran.
 * - `operation_cancelled`: the caller's signal aborted; before dispatch the entry is removed
 *   and the task never runs, after dispatch it is only the reason given to the task's signal.
 * - `runtime_closed`: the queue was closed before the task could run, or, as the reason of
 *   the active task's signal, while it was running.
 */
export type AdmissionErrorCode = 'runtime_busy' | 'queue_timeout' | 'operation_cancelled' | 'runtime_closed';

/**
 * Codes whose outcome means "nothing ran, the same request may succeed later".
 * Listed once so the `retryable` flag cannot drift from the code.
 */
const RETRYABLE_CODES: ReadonlySet<AdmissionErrorCode> = new Set<AdmissionErrorCode>(['runtime_busy', 'queue_timeout']);

/**
 * Reports whether an admission outcome with this code may be retried unchanged.
 *
 * @param code - the admission error code
 * @returns `true` for `runtime_busy` and `queue_timeout`, `false` otherwise
 */
export function isRetryableAdmissionCode(code: AdmissionErrorCode): boolean {
  return RETRYABLE_CODES.has(code);
}

/** Structured details carried by an {@link AdmissionError}. */
export interface AdmissionErrorDetails {
  /** Admission sequence of the call, or `undefined` when the call was never admitted. */
  readonly sequence?: number | undefined;
  /** Milliseconds the call spent queued before this outcome, when it was queued at all. */
  readonly queueWaitMs?: number | undefined;
  /** Retry hint; only kept for retryable codes, ignored otherwise. */
  readonly retryAfterMs?: number | undefined;
  /** The underlying reason, e.g. the caller's abort reason for `operation_cancelled`. */
  readonly cause?: unknown;
}

const MESSAGES: Readonly<Record<AdmissionErrorCode, string>> = {
  runtime_busy: 'Admission rejected: the pending queue is full',
  queue_timeout: 'Admission expired: the call waited too long in the queue',
  operation_cancelled: 'Operation cancelled by the caller',
  runtime_closed: 'Admission closed: the runtime is shutting down',
};

/**
 * One call's admission outcome other than running its task to completion.
 *
 * Messages are fixed per code and never include task data, so the error is safe to log.
 */
export class AdmissionError extends Error {
  override readonly name = 'AdmissionError';
  /** Stable machine-readable code. */
  readonly code: AdmissionErrorCode;
  /** Admission sequence of the call; `undefined` when it was rejected before admission. */
  readonly sequence: number | undefined;
  /** Whether the caller may retry the same request (`runtime_busy`, `queue_timeout`). */
  readonly retryable: boolean;
  /** Suggested delay before retrying; set only when {@link AdmissionError.retryable} is `true`. */
  readonly retryAfterMs: number | undefined;
  /** Milliseconds spent queued before this outcome; `undefined` when the call never queued. */
  readonly queueWaitMs: number | undefined;

  /**
   * @param code - why the call did not run or was told to stop
   * @param details - sequence, queue wait, retry hint and cause
   */
  constructor(code: AdmissionErrorCode, details: AdmissionErrorDetails = {}) {
    super(MESSAGES[code], details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.sequence = details.sequence;
    this.retryable = isRetryableAdmissionCode(code);
    this.retryAfterMs = this.retryable ? details.retryAfterMs : undefined;
    this.queueWaitMs = details.queueWaitMs;
  }
}

/**
 * Thrown by the `AdmissionQueue` constructor when an option is out of range.
 *
 * Carries the option name and the rejected value so configuration loaders can report
 * which setting was wrong without parsing the message.
 */
export class AdmissionOptionsError extends Error {
  override readonly name = 'AdmissionOptionsError';
  /** Stable machine-readable code. */
  readonly code = 'invalid_admission_options' as const;
  /** Name of the offending option, e.g. `maxPending`. */
  readonly option: string;
  /** The value that was rejected, as given. */
  readonly value: unknown;

  /**
   * @param option - name of the offending option
   * @param value - the rejected value
   * @param requirement - human-readable constraint, e.g. "a positive integer"
   */
  constructor(option: string, value: unknown, requirement: string) {
    super(`Invalid admission option ${option}: expected ${requirement}, got ${describe(value)}`);
    this.option = option;
    this.value = value;
  }
}

function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value);
  }
  return typeof value;
}
