/**
 * Canonical JSON after RFC 8785 (JCS), identical byte for byte to the Python worker's
 * `ipython_mcp_worker.schema.fingerprint.canonical_json`. `fixtures/schema-fingerprint/vectors.json` pins both.
 *
 * @packageDocumentation
 */

import { CANONICAL_JSON_ERROR_CODES } from './error-codes.js';

export { CANONICAL_JSON_ERROR_CODES };

/**
 * Why a value has no canonical JSON form:
 *
 * - `non_finite_number`: NaN, Infinity or -Infinity;
 * - `unsafe_integer`: an integral number of magnitude above `Number.MAX_SAFE_INTEGER` whose canonical
 *   form would be a plain integer literal (below 1e21); from 1e21 on, numbers print in exponent form and
 *   are accepted;
 * - `lone_surrogate`: a string or key with an unpaired UTF-16 surrogate (it has no UTF-8 form);
 * - `non_string_key`: an object with an own enumerable symbol key;
 * - `unsupported_type`: anything but `null`, booleans, numbers, strings, arrays and plain objects
 *   (including `undefined`, array holes, bigint, functions, class instances, `Map`, `Date`);
 * - `circular_reference`: an array or object that contains itself.
 */
export type CanonicalJsonErrorCode = (typeof CANONICAL_JSON_ERROR_CODES)[number];

/**
 * Thrown by {@link canonicalJson} for a value that has no canonical JSON form.
 */
export class CanonicalJsonError extends Error {
  /** Stable reason, shared with the Python implementation. */
  readonly code: CanonicalJsonErrorCode;
  /** Where the offending part sits: `$`, `$.key`, `$[0]`, ... */
  readonly path: string;

  /**
   * @param code - stable reason
   * @param path - location of the offending part
   * @param message - human-readable explanation (the path is appended)
   */
  constructor(code: CanonicalJsonErrorCode, path: string, message: string) {
    super(`${message} at ${path}`);
    this.name = 'CanonicalJsonError';
    this.code = code;
    this.path = path;
  }
}

const EXPONENT_FORM_FROM = 1e21;
const LONE_SURROGATE = /\p{Surrogate}/u;

function writeString(text: string, path: string): string {
  if (LONE_SURROGATE.test(text)) {
    throw new CanonicalJsonError('lone_surrogate', path, 'string contains a lone surrogate');
  }
  // For well-formed strings, JSON.stringify escapes exactly `"`, `\` and U+0000..U+001F, using
  // \b \f \n \r \t or \u00xx with lowercase hex, and emits everything else raw: the JCS rule.
  return JSON.stringify(text);
}

function writeNumber(value: number, path: string): string {
  if (!Number.isFinite(value)) {
    throw new CanonicalJsonError('non_finite_number', path, 'NaN and infinities have no JSON form');
  }
  const magnitude = Math.abs(value);
  if (Number.isInteger(value) && magnitude > Number.MAX_SAFE_INTEGER && magnitude < EXPONENT_FORM_FROM) {
    throw new CanonicalJsonError('unsafe_integer', path, 'integral number outside ±(2**53 - 1)');
  }
  // Number.prototype.toString is the JCS number form; it also turns -0 into "0".
  return String(value);
}

function compareUtf16(left: string, right: string): number {
  // Relational comparison of strings compares UTF-16 code units.
  if (left < right) {
    return -1;
  }
  return left > right ? 1 : 0;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return typeof value;
  }
  const constructorName: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof constructorName === 'string' ? constructorName : 'object';
}

class Serializer {
  private readonly parts: string[] = [];
  private readonly active = new Set<object>();

  result(): string {
    return this.parts.join('');
  }

  write(value: unknown, path: string): void {
    if (value === null) {
      this.parts.push('null');
      return;
    }
    switch (typeof value) {
      case 'boolean':
        this.parts.push(value ? 'true' : 'false');
        return;
      case 'number':
        this.parts.push(writeNumber(value, path));
        return;
      case 'string':
        this.parts.push(writeString(value, path));
        return;
      case 'object':
        this.writeContainer(value, path);
        return;
      default:
        throw new CanonicalJsonError('unsupported_type', path, `${typeof value} has no JSON form`);
    }
  }

  private writeContainer(value: object, path: string): void {
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) {
      throw new CanonicalJsonError('unsupported_type', path, `${describe(value)} has no JSON form`);
    }
    if (this.active.has(value)) {
      throw new CanonicalJsonError('circular_reference', path, 'container contains itself');
    }
    this.active.add(value);
    try {
      if (isArray) {
        this.writeArray(value as readonly unknown[], path);
      } else {
        this.writeObject(value as Record<string, unknown>, path);
      }
    } finally {
      this.active.delete(value);
    }
  }

  private writeArray(items: readonly unknown[], path: string): void {
    this.parts.push('[');
    for (let index = 0; index < items.length; index += 1) {
      if (index > 0) {
        this.parts.push(',');
      }
      if (!(index in items)) {
        throw new CanonicalJsonError('unsupported_type', `${path}[${index}]`, 'array hole has no JSON form');
      }
      this.write(items[index], `${path}[${index}]`);
    }
    this.parts.push(']');
  }

  private writeObject(record: Record<string, unknown>, path: string): void {
    if (Object.getOwnPropertySymbols(record).some((symbol) => Object.prototype.propertyIsEnumerable.call(record, symbol))) {
      throw new CanonicalJsonError('non_string_key', path, 'object has a symbol key');
    }
    const keys = Object.keys(record).sort(compareUtf16);
    for (const key of keys) {
      if (LONE_SURROGATE.test(key)) {
        throw new CanonicalJsonError('lone_surrogate', path, 'object key contains a lone surrogate');
      }
    }
    this.parts.push('{');
    keys.forEach((key, index) => {
      if (index > 0) {
        this.parts.push(',');
      }
      this.parts.push(writeString(key, path), ':');
      this.write(record[key], `${path}.${key}`);
    });
    this.parts.push('}');
  }
}

/**
 * Serialise a JSON value as RFC 8785 canonical JSON: keys sorted by UTF-16 code units, no whitespace,
 * minimal string escaping, ECMAScript number form.
 *
 * @param value - `null`, a boolean, a finite number, a string, an array or a plain object of those
 * @returns the canonical text
 * @throws {@link CanonicalJsonError} when the value (or a part of it) has no canonical form
 */
export function canonicalJson(value: unknown): string {
  const serializer = new Serializer();
  serializer.write(value, '$');
  return serializer.result();
}
