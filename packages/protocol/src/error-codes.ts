import { RETRYABLE_ERROR_CODE_LIST } from './constants.js';

/**
 * The stable error codes shared by the parent and the worker. The list is pinned by
 * `fixtures/protocol/error-codes.json`, which the Python tests read too.
 */
export const ERROR_CODES = [
  'runtime_busy',
  'queue_timeout',
  'runtime_closed',
  'runtime_unavailable',
  'operation_timeout',
  'operation_cancelled',
  'memory_limit',
  'invalid_request',
  'invalid_arguments',
  'message_too_large',
  'protocol_error',
  'name_not_found',
  'not_callable',
  'binding_failed',
  'call_raised',
  'result_not_json',
  'protected_name',
  'invalid_name',
  'name_collision',
  'unsupported_signature',
  'registry_full',
  'stale_registration',
  'tool_not_found',
  'startup_failed',
  'worker_crashed',
  'internal_error',
] as const;

/** One stable string per failure outcome. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Codes whose operation never ran, so the caller may simply try again. */
export const RETRYABLE_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(RETRYABLE_ERROR_CODE_LIST);
