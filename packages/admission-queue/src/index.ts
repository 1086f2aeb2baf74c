/**
 * Public API of `@ipython-mcp/admission-queue`.
 *
 * Any new export here becomes public API: add names deliberately, one by one, and
 * never with `export *`.
 */
export { AdmissionQueue } from './admission-queue.js';
export type { AdmissionAbort, AdmissionRunOptions, AdmissionTask, AdmissionTicket } from './admission-queue.js';
export { AdmissionError, AdmissionOptionsError, isRetryableAdmissionCode } from './errors.js';
export type { AdmissionErrorCode, AdmissionErrorDetails } from './errors.js';
export { DEFAULT_RETRY_AFTER_MS, MAX_TIMER_DELAY_MS } from './options.js';
export type { AdmissionQueueOptions } from './options.js';
