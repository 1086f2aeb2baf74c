import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { CanonicalJsonError, canonicalJson, schemaFingerprint } from './index.js';

const fixtures = new URL('../../../fixtures/schema-fingerprint/', import.meta.url);

interface Vector {
  readonly name: string;
  readonly input: unknown;
  readonly canonical: string;
  readonly sha256: string;
}

interface Reject {
  readonly name: string;
  readonly python: string;
  readonly js: string;
  readonly code: string;
}

interface VectorFile {
  readonly vectors: readonly Vector[];
  readonly rejects: readonly Reject[];
}

interface Manifest {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
}

const raw = readFileSync(new URL('vectors.json', fixtures));
const manifest = JSON.parse(readFileSync(new URL('manifest.json', fixtures), 'utf8')) as Manifest;
const file = JSON.parse(raw.toString('utf8')) as VectorFile;

function evaluate(expression: string): unknown {
  // The rejects are expressions because NaN, lone surrogates and cycles cannot be written as JSON.
  return (new Function(`return (${expression});`) as () => unknown)();
}

describe('shared vectors (fixtures/schema-fingerprint)', () => {
  it('match the manifest, so neither side can edit them alone', () => {
    expect(manifest.file).toBe('vectors.json');
    expect(raw.byteLength).toBe(manifest.bytes);
    expect(createHash('sha256').update(raw).digest('hex')).toBe(manifest.sha256);
  });

  it('cover the required cases', () => {
    expect(file.vectors.length).toBeGreaterThanOrEqual(15);
    expect(file.rejects.length).toBeGreaterThan(0);
    expect(new Set(file.vectors.map((vector) => vector.name)).size).toBe(file.vectors.length);
  });

  it.each(file.vectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    const text = canonicalJson(vector.input);
    expect(text).toBe(vector.canonical);
    expect(createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')).toBe(vector.sha256);
    expect(schemaFingerprint(vector.input)).toBe(vector.sha256);
    // The canonical text is itself canonical.
    expect(canonicalJson(JSON.parse(text))).toBe(text);
  });

  it.each(file.rejects.map((reject) => [reject.name, reject] as const))('rejects %s', (_name, reject) => {
    const value = evaluate(reject.js);
    let caught: unknown;
    try {
      canonicalJson(value);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CanonicalJsonError);
    expect((caught as CanonicalJsonError).code).toBe(reject.code);
    expect(() => schemaFingerprint(value)).toThrow(CanonicalJsonError);
  });
});
