import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { CanonicalJsonError } from './canonical-json.js';
import { schemaFingerprint } from './fingerprint.js';

describe('schemaFingerprint', () => {
  it('is the SHA-256 of the canonical UTF-8 text', () => {
    const schema = { type: 'object', properties: { é: { type: 'string' } }, required: ['é'] };
    const canonical = '{"properties":{"é":{"type":"string"}},"required":["é"],"type":"object"}';
    expect(schemaFingerprint(schema)).toBe(createHash('sha256').update(Buffer.from(canonical, 'utf8')).digest('hex'));
  });

  it('ignores key order and number spelling', () => {
    expect(schemaFingerprint({ a: 1, b: [1.0] })).toBe(schemaFingerprint({ b: [1], a: 1.0 }));
  });

  it('changes when the schema changes', () => {
    expect(schemaFingerprint({ default: 1 })).not.toBe(schemaFingerprint({ default: 2 }));
    expect(schemaFingerprint({ default: true })).not.toBe(schemaFingerprint({ default: 1 }));
  });

  it('is 64 lowercase hex characters', () => {
    expect(schemaFingerprint({})).toMatch(/^[0-9a-f]{64}$/);
  });

  it('throws CanonicalJsonError for schemas without a canonical form', () => {
    expect(() => schemaFingerprint({ default: Number.NaN })).toThrow(CanonicalJsonError);
  });
});
