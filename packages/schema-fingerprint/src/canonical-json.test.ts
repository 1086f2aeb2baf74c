import { describe, expect, it } from 'vitest';

import { CANONICAL_JSON_ERROR_CODES, CanonicalJsonError, canonicalJson } from './canonical-json.js';
import type { CanonicalJsonErrorCode } from './canonical-json.js';

function codeOf(value: unknown): CanonicalJsonErrorCode | undefined {
  try {
    canonicalJson(value);
  } catch (error) {
    if (error instanceof CanonicalJsonError) {
      return error.code;
    }
    throw error;
  }
  return undefined;
}

describe('canonicalJson', () => {
  it('formats numbers like Number.prototype.toString', () => {
    expect(canonicalJson(1.0)).toBe('1');
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson(1e21)).toBe('1e+21');
    expect(canonicalJson(1e-7)).toBe('1e-7');
    expect(canonicalJson(1e-6)).toBe('0.000001');
    expect(canonicalJson(0.1)).toBe('0.1');
    expect(canonicalJson(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(canonicalJson(-Number.MAX_SAFE_INTEGER)).toBe('-9007199254740991');
  });

  it('sorts keys by UTF-16 code units, not code points', () => {
    expect(canonicalJson({ '\ue000': 1, '\u{1f600}': 2, b: 3, a: 4 })).toBe('{"a":4,"b":3,"\u{1f600}":2,"\ue000":1}');
  });

  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson([{ b: [{ d: 1, c: 2 }], a: null }, 2, 1])).toBe('[{"a":null,"b":[{"c":2,"d":1}]},2,1]');
  });

  it('escapes only quote, backslash and control characters', () => {
    expect(canonicalJson('"\\\b\f\n\r\t\u0000\u001f\u007f/é')).toBe('"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u007f/é"');
  });

  it('accepts null-prototype objects', () => {
    const record = Object.create(null) as Record<string, unknown>;
    record['k'] = true;
    expect(canonicalJson(record)).toBe('{"k":true}');
  });

  it('refuses values without a canonical form, with stable codes', () => {
    expect(codeOf(Number.NaN)).toBe('non_finite_number');
    expect(codeOf(-Infinity)).toBe('non_finite_number');
    expect(codeOf(2 ** 53)).toBe('unsafe_integer');
    expect(codeOf(-(2 ** 53))).toBe('unsafe_integer');
    expect(codeOf(1e20)).toBe('unsafe_integer');
    expect(codeOf(1e21)).toBeUndefined();
    expect(codeOf('\ud83d')).toBe('lone_surrogate');
    expect(codeOf({ '\ude00': 1 })).toBe('lone_surrogate');
    expect(codeOf({ [Symbol('s')]: 1 })).toBe('non_string_key');
    expect(codeOf(undefined)).toBe('unsupported_type');
    expect(codeOf({ a: undefined })).toBe('unsupported_type');
    expect(codeOf([1, , 3])).toBe('unsupported_type');
    expect(codeOf(1n)).toBe('unsupported_type');
    expect(codeOf(() => 1)).toBe('unsupported_type');
    expect(codeOf(new Date(0))).toBe('unsupported_type');
    expect(codeOf(new Map())).toBe('unsupported_type');
    const cycle: Record<string, unknown> = {};
    cycle['self'] = [cycle];
    expect(codeOf(cycle)).toBe('circular_reference');
  });

  it('allows the same container twice when it is not its own ancestor', () => {
    const shared = { x: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"x":1},{"x":1}]');
  });

  it('reports where the problem is', () => {
    try {
      canonicalJson({ a: [0, Number.NaN] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CanonicalJsonError);
      expect((error as CanonicalJsonError).path).toBe('$.a[1]');
      expect((error as CanonicalJsonError).name).toBe('CanonicalJsonError');
    }
  });

  it('publishes the same error codes as the Python worker', () => {
    expect([...CANONICAL_JSON_ERROR_CODES]).toEqual([
      'non_finite_number',
      'unsafe_integer',
      'lone_surrogate',
      'non_string_key',
      'unsupported_type',
      'circular_reference',
    ]);
  });
});
