// Any new export here becomes public API of @ipython-mcp/schema-fingerprint: add it deliberately, by name.
/**
 * Canonical JSON (RFC 8785) and SHA-256 fingerprints of dynamic tool input schemas, byte-identical to the
 * Python worker and pinned by `fixtures/schema-fingerprint/vectors.json`.
 *
 * @packageDocumentation
 */

export { CANONICAL_JSON_ERROR_CODES, CanonicalJsonError, canonicalJson } from './canonical-json.js';
export type { CanonicalJsonErrorCode } from './canonical-json.js';
export { schemaFingerprint } from './fingerprint.js';
