import { describe, expect, it } from 'vitest';
import { plainJson } from './tool-result.js';

describe('plainJson', () => {
  it('returns a result without BigInts as it is, uncopied', () => {
    const result = { status: 'ok', result: { kind: 'json', value: [1, 2.5, 'x', null, { a: true }] }, displays: [] };
    expect(plainJson(result)).toBe(result);
  });

  it('writes a BigInt anywhere in the result as its digits rather than failing the response', () => {
    const result = { result: { value: [1, { deep: [2n ** 70n] }] }, count: 3n };
    const plain = plainJson(result);
    expect(plain).toEqual({ result: { value: [1, { deep: ['1180591620717411303424'] }] }, count: '3' });
    expect(() => JSON.stringify(plain)).not.toThrow();
  });

  it('keeps a result nested past the walk bound JSON-safe (copied through JSON)', () => {
    let deep: unknown = 7n;
    for (let level = 0; level < 400; level += 1) deep = [deep];
    const plain = plainJson({ value: deep });
    expect(JSON.stringify(plain)).toBe(`{"value":${'['.repeat(400)}"7"${']'.repeat(400)}}`);
    const clean = { value: JSON.parse(`${'['.repeat(400)}1${']'.repeat(400)}`) as unknown };
    expect(plainJson(clean)).toEqual(clean);
  });
});
