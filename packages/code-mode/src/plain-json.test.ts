// The plain-JSON fast path of a nested call's value must give exactly what the general path gives: the same text
// for Python (toPythonJson) and the same record (JSON.parse of it), whatever the value.
import { toPythonJson } from '@ipython-mcp/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolResultError } from './errors.js';
import { toKernelValue } from './nested-call.js';
import { NOT_PLAIN, plainJsonCopy } from './plain-json.js';

const SEED = { seed: 20261201, numRuns: 500 };

/** What toKernelValue gave before the fast path: toPythonJson, and the record as JSON.parse reads that text. */
function reference(value: unknown): { valueJson: string; value: unknown } {
  const valueJson = toPythonJson(value);
  let recorded: unknown;
  try {
    recorded = JSON.parse(valueJson);
  } catch {
    recorded = JSON.parse(JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item)) ?? 'null');
  }
  return { valueJson, value: recorded };
}

const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(2 ** 53, -(2 ** 53), 2 ** 60, 1e21, 1e300, -0, 0.1, 5_000_000_000, Number.NaN, Infinity, -Infinity),
  fc.bigInt({ min: -(2n ** 100n), max: 2n ** 100n }),
);
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('\ud800', 'a\udc00b', '\ud83d\ude00', '__proto__'));
const leaf = fc.oneof(
  number,
  text,
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
  fc.constant(() => 1),
  fc.constant(Symbol('s')),
  fc.constant(Object.create(null) as object),
  fc.constant({ toJSON: () => ({ n: 2 ** 60 }) }),
  fc.constant(new Map([[1, 2]])),
  fc.constant(Object.assign(Object.create(null) as object, { a: 1 })),
);
const values = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object'), tie('sparse')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  sparse: fc.sparseArray(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
})).value;

describe('toKernelValue', () => {
  it('gives the same text and record on the fast path as the general path, for any value', () => {
    fc.assert(
      fc.property(values, (value) => {
        const expected = reference(value);
        const actual = toKernelValue(value, 'tool');
        expect(actual.valueJson).toBe(expected.valueJson);
        expect(actual.value).toStrictEqual(expected.value);
        expect(Object.is(actual.value, -0)).toBe(false);
      }),
      SEED,
    );
  });

  it('takes the fast path for plain JSON and copies it', () => {
    const value = { a: [1, 2.5, 'x', null, true, undefined], b: { c: -0 }, d: undefined };
    const copied = plainJsonCopy(value);
    expect(copied).toStrictEqual({ a: [1, 2.5, 'x', null, true, null], b: { c: 0 } });
    expect(copied).not.toBe(value);
    value.a.push(3);
    expect(copied).toStrictEqual({ a: [1, 2.5, 'x', null, true, null], b: { c: 0 } });
  });

  it('leaves what JSON cannot hold exactly to the general path', () => {
    for (const value of [Number.NaN, Infinity, 2 ** 53, 1n, new Date(0), [new Date(0)], { toJSON: () => 1 }, Symbol('s'), () => 1]) {
      expect(plainJsonCopy(value)).toBe(NOT_PLAIN);
    }
    expect(plainJsonCopy(JSON.parse('{"__proto__": 1}'))).toBe(NOT_PLAIN);
    expect(toKernelValue(JSON.parse('{"__proto__": {"x": 1}}'), 'tool').valueJson).toBe('{"__proto__":{"x":1}}');
    expect(toKernelValue({ n: 2 ** 60, nan: Number.NaN }, 'tool').valueJson).toBe('{"n":1.152921504606847e+18,"nan":NaN}');
  });

  it('refuses a cycle, however deep, as a value with no JSON form', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = { inner: cycle };
    expect(() => toKernelValue(cycle, 'tool')).toThrow(ToolResultError);
    expect(() => toKernelValue(cycle, 'tool')).toThrow(/no JSON form/);
  });

  it('words a throwing getter as a value with no JSON form', () => {
    const value = {
      get bad(): never {
        throw new Error('boom');
      },
    };
    expect(() => toKernelValue(value, 'tool')).toThrow(/no JSON form \(boom\)/);
  });

  it('keeps values deeper than the fast path goes', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 200; level += 1) deep = [deep];
    expect(toKernelValue(deep, 'tool').valueJson).toBe(`${'['.repeat(200)}1${']'.repeat(200)}`);
  });
});
