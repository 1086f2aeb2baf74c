import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/schema-fingerprint, pinned: adding or removing one is a deliberate change of public API (update
// this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/schema-fingerprint public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'CANONICAL_JSON_ERROR_CODES',
      'CanonicalJsonError',
      'canonicalJson',
      'schemaFingerprint',
    ]);
  });
});
