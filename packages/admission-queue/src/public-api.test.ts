import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/admission-queue, pinned: adding or removing one is a deliberate change of public API (update
// this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/admission-queue public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'AdmissionError',
      'AdmissionOptionsError',
      'AdmissionQueue',
      'DEFAULT_RETRY_AFTER_MS',
      'MAX_TIMER_DELAY_MS',
      'isRetryableAdmissionCode',
    ]);
  });
});
