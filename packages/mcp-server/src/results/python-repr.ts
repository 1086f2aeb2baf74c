/**
 * A JSON value written the way Python's `repr` writes the value it came from: `None`, `True`, `'text'`,
 * `{'a': [1, 2.5]}`. Places the value contract wrote as strings to stay exact (`encoded`: big ints, NaN/±Infinity/
 * -0.0, text with lone surrogates) are written in their Python form again, so the text a model reads is the exact
 * value. One loss remains, shared with the JSON form: an integral float within ±2^53 (`1.0`) arrives as the number 1.
 */

import { pythonString } from '@ipython-mcp/session-journal';

type Encoded = Readonly<Record<string, string>>;

/** Python's `repr` of a float (shortest round-trip digits; exponent form below 1e-4 and from 1e16). */
export function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Object.is(value, -0)) return '-0.0';
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  const text = String(value);
  return text.includes('.') ? text : `${text}.0`;
}

const FLOAT_WORDS: Readonly<Record<string, string>> = { NaN: 'nan', Infinity: 'inf', '-Infinity': '-inf', '-0.0': '-0.0' };

function childPath(path: string, key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path}.${key}`;
  // As the worker's child_path writes it: json.dumps(key, ensure_ascii=True).
  const quoted = JSON.stringify(key).replace(/[\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${path}[${quoted}]`;
}

/** The Python rendering of `value`, with `encoded` places (docs/protocol.md, "Value contract") restored. */
export function pythonRepr(value: unknown, encoded: Encoded = {}, path = '$'): string {
  const kind = encoded[path];
  if (typeof value === 'string') {
    if (kind === 'int' || kind === 'int_hex') return value;
    if (kind === 'float') return FLOAT_WORDS[value] ?? value;
    return pythonString(value, kind === 'text');
  }
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  // Ints beyond ±(2^53 − 1) arrive as encoded strings, so an integral number out there was a float.
  if (typeof value === 'number') return Number.isSafeInteger(value) && !Object.is(value, -0) ? String(value) : pythonFloat(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map((item, index) => pythonRepr(item, encoded, `${path}[${index}]`)).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(([key, item]) => {
      const keyPath = childPath(path, key);
      const shownKey = pythonString(key, encoded[keyPath] === 'key');
      return `${shownKey}: ${pythonRepr(item, encoded, keyPath)}`;
    });
    return `{${entries.join(', ')}}`;
  }
  return String(value);
}
