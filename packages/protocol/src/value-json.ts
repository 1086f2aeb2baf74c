import { randomBytes } from 'node:crypto';

/** What {@link toPythonJson} could not write, with where it was. */
export class ValueJsonError extends Error {
  /** JSONPath-like place of the offending part (`$.rows[3]`). */
  readonly path: string;
  constructor(message: string, path: string) {
    super(message);
    this.name = 'ValueJsonError';
    this.path = path;
  }
}

// Placeholders for the numbers JSON.stringify cannot write; a per-process nonce keeps user strings from matching.
const MARK = `\u0000ipython-mcp-${randomBytes(8).toString('hex')}:`;
const MARKED = new RegExp(`"${escapeRegExp(JSON.stringify(MARK).slice(1, -1))}([^"]*)"`, 'g');

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A JavaScript value as JSON text for the Python worker (docs/protocol.md, "Value contract"): what
 * `JSON.stringify` keeps (`toJSON`, dropped `undefined` and functions), except that no number is changed on the
 * way. Safe integers are written as digits (Python reads an `int`), other integral numbers as floats, BigInts as
 * their exact digits (an `int` of any size), and NaN and ±Infinity as the bare tokens Python's `json` reads.
 * `undefined` alone is `null`. Throws {@link ValueJsonError} for a cycle.
 */
export function toPythonJson(value: unknown): string {
  let marked = false;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, function replace(this: unknown, key: string, item: unknown): unknown {
      if (typeof item === 'number') {
        if (Number.isSafeInteger(item) || !Number.isInteger(item)) {
          if (Number.isFinite(item)) return item;
          marked = true;
          return `${MARK}${String(item)}`;
        }
        marked = true;
        return `${MARK}${item.toExponential()}`;
      }
      if (typeof item === 'bigint') {
        marked = true;
        return `${MARK}${item.toString()}`;
      }
      return item;
    });
  } catch (error) {
    throw new ValueJsonError((error as Error).message.split('\n')[0] ?? 'no JSON form', '$');
  }
  if (text === undefined) return 'null';
  return marked ? text.replace(MARKED, (_, token: string) => token) : text;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The place (`params.arguments.name`) of the first string in `value` that holds a lone surrogate, or undefined.
 * JSON text can carry one (`"\ud800"`), but msgpack cannot (msgpackr writes U+FFFD in its place), so a request
 * holding one is refused before it is sent rather than changed silently on one codec and not the other.
 */
export function loneSurrogatePath(value: unknown, path = 'params'): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const found = loneSurrogatePath(value[index], `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) return `${path}.${key.replace(/[\ud800-\udfff]/g, '\ufffd')} (key)`;
      const found = loneSurrogatePath(item, `${path}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
