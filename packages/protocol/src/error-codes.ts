import { ERROR_CODE_LIST, RETRYABLE_ERROR_CODE_LIST } from './constants.js';

/**
 * The stable error codes shared by the parent and the worker, generated from `fixtures/protocol/error-codes.json`
 * (tooling/scripts/gen-protocol.mjs), which the worker's constants.py is generated from too.
 */
export const ERROR_CODES = ERROR_CODE_LIST;

/** One stable string per failure outcome. */
export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN: ReadonlySet<string> = new Set(ERROR_CODE_LIST);

/** Whether `code` is one of the stable error codes (a worker's answer is checked at the boundary with it). */
export function isErrorCode(code: string): code is ErrorCode {
  return KNOWN.has(code);
}

/** Codes whose operation never ran, so the caller may simply try again. */
export const RETRYABLE_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(RETRYABLE_ERROR_CODE_LIST);
