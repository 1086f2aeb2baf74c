/**
 * Admission options: the public shape, its defaults, and the single resolver that
 * validates them. Every guard lives here so the queue itself can trust its numbers.
 */
import { AdmissionOptionsError } from './errors.js';

/** Options for an `AdmissionQueue`. */
export interface AdmissionQueueOptions {
  /**
   * How many calls may wait behind the active one. The active call is not counted,
   * so at most `maxPending + 1` admitted calls exist at any time. Positive integer.
   */
  readonly maxPending: number;
  /**
   * How long an admitted call may wait in the queue before it fails with
   * `queue_timeout`, in milliseconds. Positive and finite, and no larger than
   * {@link MAX_TIMER_DELAY_MS} because Node fires longer timers almost immediately.
   */
  readonly queueWaitTimeoutMs: number;
  /**
   * Retry hint put on retryable rejections (`runtime_busy`, `queue_timeout`), in
   * milliseconds. Finite and not negative; defaults to {@link DEFAULT_RETRY_AFTER_MS}.
   */
  readonly retryAfterMs?: number;
}

/** Retry hint used when {@link AdmissionQueueOptions.retryAfterMs} is not given. */
export const DEFAULT_RETRY_AFTER_MS = 1000;

/**
 * Largest delay Node's `setTimeout` honours (2^31 - 1 ms, about 24.8 days). Longer
 * delays overflow and fire after 1 ms, which would turn a generous wait bound into
 * an instant `queue_timeout`, so the resolver rejects them instead.
 */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** Options after validation, with every default filled in. */
export interface ResolvedAdmissionQueueOptions {
  readonly maxPending: number;
  readonly queueWaitTimeoutMs: number;
  readonly retryAfterMs: number;
}

/**
 * Validates options and fills defaults.
 *
 * @throws AdmissionOptionsError when a value is missing, of the wrong type, or out of range
 */
export function resolveAdmissionQueueOptions(options: AdmissionQueueOptions): ResolvedAdmissionQueueOptions {
  // Guards against untyped JavaScript callers; TypeScript callers cannot get here.
  if (typeof options !== 'object' || options === null) {
    throw new AdmissionOptionsError('options', options, 'an options object');
  }
  const { maxPending, queueWaitTimeoutMs, retryAfterMs = DEFAULT_RETRY_AFTER_MS } = options;
  if (typeof maxPending !== 'number' || !Number.isSafeInteger(maxPending) || maxPending < 1) {
    throw new AdmissionOptionsError('maxPending', maxPending, 'a positive integer');
  }
  if (
    typeof queueWaitTimeoutMs !== 'number' ||
    !Number.isFinite(queueWaitTimeoutMs) ||
    queueWaitTimeoutMs <= 0 ||
    queueWaitTimeoutMs > MAX_TIMER_DELAY_MS
  ) {
    throw new AdmissionOptionsError(
      'queueWaitTimeoutMs',
      queueWaitTimeoutMs,
      `a positive finite number of milliseconds up to ${MAX_TIMER_DELAY_MS}`,
    );
  }
  if (typeof retryAfterMs !== 'number' || !Number.isFinite(retryAfterMs) || retryAfterMs < 0) {
    throw new AdmissionOptionsError('retryAfterMs', retryAfterMs, 'a finite number of milliseconds, zero or more');
  }
  return { maxPending, queueWaitTimeoutMs, retryAfterMs };
}
