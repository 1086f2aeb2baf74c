import type { JsonValue } from './json-schema.js';

/** Deeper than this, a value takes the general path (which also reports a cycle). */
const MAX_PLAIN_DEPTH = 64;

/** Returned by {@link plainJsonCopy} for a value that is not plain JSON. */
export const NOT_PLAIN: unique symbol = Symbol('not plain JSON');

/**
 * A copy of `value` when it is plain JSON that `JSON.stringify` writes exactly as `toPythonJson` does, else
 * {@link NOT_PLAIN}. Plain: null, booleans, strings (lone surrogates included: both write them escaped), safe
 * integers and finite non-integral numbers, `undefined` where JSON drops it or writes null, arrays and objects whose
 * prototype is Object.prototype or null, without `toJSON` or an own `__proto__` key, at most 64 levels deep.
 * Anything else (BigInt, NaN, ±Infinity, integers beyond 2^53, Dates and other class instances, functions,
 * symbols, cycles) is NOT_PLAIN and goes the general way, so the copy is exactly what `JSON.parse` of the text
 * gives (-0 reads 0), and `JSON.stringify(copy)` is exactly `toPythonJson(value)`.
 *
 * Why: a nested call's value is most often plain JSON, and one JavaScript walk that checks and copies costs less
 * than `JSON.stringify` with a replacer (a call back into JavaScript per key) followed by `JSON.parse` of the text
 * for the run's records.
 */
export function plainJsonCopy(value: unknown): JsonValue | typeof NOT_PLAIN {
  return copy(value, 0);
}

function copy(value: unknown, depth: number): JsonValue | typeof NOT_PLAIN {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isSafeInteger(value)) return value === 0 ? 0 : value;
      return Number.isFinite(value) && !Number.isInteger(value) ? value : NOT_PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth >= MAX_PLAIN_DEPTH) return NOT_PLAIN;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const length = value.length;
    const out = new Array<JsonValue>(length);
    for (let index = 0; index < length; index += 1) {
      const item: unknown = value[index];
      // JSON writes null for undefined (and holes) in an array.
      const copied = item === undefined ? null : copy(item, depth + 1);
      if (copied === NOT_PLAIN) return NOT_PLAIN;
      out[index] = copied;
    }
    return out;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(record)) {
    // An own "__proto__" (JSON.parse makes one) would hit the setter on assignment: the general path keeps it.
    if (key === '__proto__') return NOT_PLAIN;
    const item = record[key];
    if (item === undefined) continue; // JSON drops the key
    const copied = copy(item, depth + 1);
    if (copied === NOT_PLAIN) return NOT_PLAIN;
    out[key] = copied;
  }
  return out;
}
