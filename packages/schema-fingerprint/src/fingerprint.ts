/**
 * The schema fingerprint of a dynamic tool, identical to the Python worker's `schema_fingerprint`.
 *
 * @packageDocumentation
 */

import { createHash } from 'node:crypto';

import { canonicalJson } from './canonical-json.js';

/**
 * Fingerprint an input schema: the lowercase hex SHA-256 of the UTF-8 bytes of its canonical JSON.
 *
 * @param schema - any value {@link canonicalJson} accepts (normally a JSON Schema object)
 * @returns 64 lowercase hex characters
 * @throws {@link CanonicalJsonError} when the schema has no canonical JSON form
 */
export function schemaFingerprint(schema: unknown): string {
  return createHash('sha256').update(canonicalJson(schema), 'utf8').digest('hex');
}
