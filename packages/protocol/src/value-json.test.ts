import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBody, encodeFrame } from './frame-codec.js';
import { loneSurrogatePath, toPythonJson } from './value-json.js';

const SEED = { seed: 20261201, numRuns: 300 };

/** What Python receives for a JS value, as the same tagged tree: numbers as [int|float, text]. */
function expected(value: unknown): unknown {
  if (typeof value === 'bigint') return ['int', value.toString()];
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return ['float', 'NaN'];
    if (!Number.isFinite(value)) return ['float', value > 0 ? 'Infinity' : '-Infinity'];
    return Number.isSafeInteger(value) ? ['int', String(value === 0 ? 0 : value)] : ['float', String(value)];
  }
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : expected(item)));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined).map(([key, item]) => [key, expected(item)]));
  }
  return value ?? null;
}

/** The tagged tree of a text in Python's reading: int when a number is written as digits, float otherwise. */
function tagged(text: string): unknown {
  // Swap every number token outside strings for a placeholder string, then parse as plain JSON.
  const numbers: string[] = [];
  let marked = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      marked += text.slice(index, end + 1);
      index = end + 1;
    } else if (/[-\dNI]/.test(char)) {
      const token = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|NaN|-?Infinity)/.exec(text.slice(index))?.[0] as string;
      numbers.push(token);
      marked += JSON.stringify(`#${numbers.length - 1}`);
      index += token.length;
    } else {
      marked += char;
      index += 1;
    }
  }
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string' && node.startsWith('#')) {
      const token = numbers[Number(node.slice(1))] as string;
      if (/^-?\d+$/.test(token)) return ['int', BigInt(token).toString()];
      if (token === 'NaN' || token.endsWith('Infinity')) return ['float', token];
      return ['float', String(Number(token))];
    }
    if (typeof node === 'string') return node;
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    return node;
  };
  return walk(JSON.parse(marked) as unknown);
}

const numbers = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(2 ** 53, -(2 ** 53), 2 ** 60, 1e21, 1e300, -0, 5_000_000_000, Number.NaN, Infinity, -Infinity),
  fc.bigInt({ min: -(2n ** 100n), max: 2n ** 100n }),
);
const values = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, numbers, fc.string().filter((text) => !text.startsWith('#')), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
})).value;

describe('toPythonJson', () => {
  it('gives Python every number exactly as the contract says, whatever the value', () => {
    fc.assert(
      fc.property(values, (value) => {
        const text = toPythonJson(value);
        expect(tagged(text)).toEqual(expected(value));
      }),
      SEED,
    );
  });

  it('is JSON.stringify for values JSON already holds exactly', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const plain = JSON.stringify(value, (_key, item: unknown) => item);
        const unsafe = /\d{16,}|e\+/.test(plain);
        if (!unsafe) expect(toPythonJson(value)).toBe(plain);
      }),
      SEED,
    );
  });

  it('keeps strings that look like its own placeholders', () => {
    const value = { a: '\u0000ipython-mcp-0123456789abcdef:NaN', b: Number.NaN };
    expect(toPythonJson(value)).toBe('{"a":"\\u0000ipython-mcp-0123456789abcdef:NaN","b":NaN}');
  });

  it('refuses a cycle with a clear message', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => toPythonJson(cycle)).toThrow(/circular/);
  });
});

describe('frame codec', () => {
  it('round-trips every JSON value through both codecs with the same result', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('msgpack' as const, 'json' as const), (value, codec) => {
        const message = { type: 'response', id: 1, ok: true, result: { value } };
        const frame = encodeFrame(message, codec, 1 << 24);
        const decoded = decodeBody(frame.subarray(4));
        expect(JSON.stringify(decoded)).toBe(JSON.stringify(message));
      }),
      SEED,
    );
  });

  it('decodes 64-bit integers within ±2^53 as numbers, never as BigInt', () => {
    // Python's msgpack writes every int beyond 32 bits as a 64-bit int: 2**40 arrives as uint64.
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 53n) + 1n, max: 2n ** 53n - 1n }), (big) => {
        const payload = Buffer.alloc(9);
        payload[0] = big < 0n ? 0xd3 : 0xcf;
        if (big < 0n) payload.writeBigInt64BE(big, 1);
        else payload.writeBigUInt64BE(big, 1);
        const decoded = decodeBody(Buffer.concat([Buffer.from([2]), payload]));
        expect(typeof decoded).toBe('number');
        expect(decoded).toBe(Number(big));
      }),
      SEED,
    );
  });
});

describe('loneSurrogatePath', () => {
  it('finds the first lone surrogate in any string or key, and nothing in well-formed text', () => {
    expect(loneSurrogatePath({ code: 'x = "\ud83d\ude00"' })).toBeUndefined();
    expect(loneSurrogatePath({ code: 'a\ud800' })).toBe('params.code');
    expect(loneSurrogatePath({ arguments: { k: [1, 'ok', '\udc80x'] } })).toBe('params.arguments.k[2]');
    expect(loneSurrogatePath({ arguments: { ['k\udc80']: 1 } })).toBe('params.arguments.k\ufffd (key)');
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(loneSurrogatePath(value) === undefined).toBe((text as unknown as { isWellFormed(): boolean }).isWellFormed());
      }),
      SEED,
    );
  });
});
