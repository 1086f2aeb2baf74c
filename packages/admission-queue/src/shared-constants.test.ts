import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isRetryableAdmissionCode, type AdmissionErrorCode } from './errors.js';
import { MAX_TIMER_DELAY_MS } from './options.js';

// This package depends on nothing of ours, so it cannot import @ipython-mcp/protocol; it reads the shared corpus
// instead, which is where both languages' definitions of these constants come from.
const fixture = (name: string): any =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../../../fixtures/protocol/${name}`, import.meta.url)), 'utf8'));

describe('constants shared with the protocol', () => {
  it('retries exactly the codes error-codes.json lists as retryable', () => {
    const codes: AdmissionErrorCode[] = ['runtime_busy', 'queue_timeout', 'operation_cancelled', 'runtime_closed'];
    const retryable: string[] = fixture('error-codes.json').retryable;
    for (const code of codes) expect(isRetryableAdmissionCode(code), code).toBe(retryable.includes(code));
    expect(retryable.every((code) => (codes as string[]).includes(code))).toBe(true);
  });

  it('bounds timers by MAX_INT32 from constants.json', () => {
    expect(MAX_TIMER_DELAY_MS).toBe(fixture('constants.json').constants.MAX_INT32.value);
  });
});
