// The value contract (docs/protocol.md, "Value contract") through the real server and a real MCP client, on both
// codecs: fast-check builds Python values (ints of any size, float specials, text with lone surrogates and astral
// characters, bytes, tuples, sets, mixed keys, objects whose __repr__ raises or is huge), the worker makes each one
// from its source, and the client checks what arrives: JSON-safe, exact where the contract says so, flagged
// everywhere else, and the namespace still there.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

const RUNS = { seed: 20261201, numRuns: 150, endOnFailure: true };
const MAX_SAFE = 2n ** 53n - 1n;

type Py =
  | { t: 'none' }
  | { t: 'bool'; v: boolean }
  | { t: 'int'; v: bigint }
  | { t: 'float'; v: number }
  | { t: 'str'; v: string }
  | { t: 'bytes'; v: number[] }
  | { t: 'list' | 'tuple'; items: Py[] }
  | { t: 'dict'; entries: [Py, Py][] }
  | { t: 'set'; items: bigint[] }
  | { t: 'object'; source: string };

const OBJECTS = [
  'class RaisingRepr:',
  '    def __repr__(self): raise ValueError("no repr")',
  'class ExitingRepr:',
  '    def __repr__(self): raise SystemExit(3)',
  'class HugeRepr:',
  '    def __repr__(self): return "x" * 3_000_000',
  'class SurrogateRepr:',
  '    def __repr__(self): return "bad \\udcff"',
  'import os',
  "sentinel = 'kept'",
].join('\n');

/** A Python literal for a JS string, code point by code point: lone surrogates become Python's lone surrogates. */
function pyString(text: string): string {
  let out = "'";
  for (const char of text) {
    const point = char.codePointAt(0) as number;
    out += point >= 0x20 && point < 0x7f && char !== "'" && char !== '\\' ? char : `\\U${point.toString(16).padStart(8, '0')}`;
  }
  return `${out}'`;
}

function source(value: Py): string {
  switch (value.t) {
    case 'none':
      return 'None';
    case 'bool':
      return value.v ? 'True' : 'False';
    case 'int':
      return `(${value.v.toString()})`;
    case 'float':
      if (Number.isNaN(value.v)) return "float('nan')";
      if (!Number.isFinite(value.v)) return value.v > 0 ? "float('inf')" : "float('-inf')";
      return Object.is(value.v, -0) ? '-0.0' : `float.fromhex('${floatHex(value.v)}')`;
    case 'str':
      return pyString(value.v);
    case 'bytes':
      return `bytes([${value.v.join(', ')}])`;
    case 'list':
      return `[${value.items.map(source).join(', ')}]`;
    case 'tuple':
      return `(${value.items.map((item) => `${source(item)}, `).join('')})`;
    case 'dict':
      return `{${value.entries.map(([key, item]) => `${source(key)}: ${source(item)}`).join(', ')}}`;
    case 'set':
      return `frozenset([${value.items.map((item) => `(${item.toString()})`).join(', ')}])`;
    case 'object':
      return value.source;
  }
}

/** The exact hex form of a double, as Python's float.fromhex reads it. */
function floatHex(value: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const sign = bits >> 63n ? '-' : '';
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const mantissa = (bits & ((1n << 52n) - 1n)).toString(16).padStart(13, '0');
  if (exponent === 0) return `${sign}0x0.${mantissa}p-1022`;
  return `${sign}0x1.${mantissa}p${exponent - 1023}`;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Python's escaping of text with lone surrogates: backslashes doubled, each surrogate as \udcXX. */
function escaped(text: string): string | undefined {
  if (!LONE_SURROGATE.test(text)) return undefined;
  let out = '';
  for (const char of text.replace(/\\/g, '\\\\')) {
    const point = char.codePointAt(0) as number;
    out += point >= 0xd800 && point <= 0xdfff ? `\\u${point.toString(16).padStart(4, '0')}` : char;
  }
  return out;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}]`;
}

/** The contract as an oracle: the JSON form and `encoded` map of a value, or undefined when it has none. */
function jsonForm(value: Py, path: string, marks: Record<string, string>): unknown {
  // An escaped key whose value is encoded too is marked `key+<kind>`.
  const encoded = new Proxy(marks, {
    set: (target, key: string, kind: string) => {
      target[key] = target[key] === undefined ? kind : `${target[key]}+${kind}`;
      return true;
    },
  });
  return formOf(value, path, encoded);
}

function formOf(value: Py, path: string, encoded: Record<string, string>): unknown {
  switch (value.t) {
    case 'none':
      return null;
    case 'bool':
      return value.v;
    case 'int':
      if (value.v >= -MAX_SAFE && value.v <= MAX_SAFE) return Number(value.v);
      encoded[path] = 'int';
      return value.v.toString();
    case 'float':
      if (Number.isNaN(value.v) || !Number.isFinite(value.v) || Object.is(value.v, -0)) {
        encoded[path] = 'float';
        return Number.isNaN(value.v) ? 'NaN' : Object.is(value.v, -0) ? '-0.0' : value.v > 0 ? 'Infinity' : '-Infinity';
      }
      return value.v;
    case 'str': {
      const text = escaped(value.v);
      if (text === undefined) return value.v;
      encoded[path] = 'text';
      return text;
    }
    case 'list':
    case 'tuple': {
      const items = value.items.map((item, index) => formOf(item, `${path}[${index}]`, encoded));
      return items.includes(undefined) ? undefined : items;
    }
    case 'dict': {
      const out: Record<string, unknown> = {};
      for (const [key, item] of value.entries) {
        if (key.t !== 'str') return undefined;
        const text = escaped(key.v);
        if (text !== undefined) encoded[childPath(path, text)] = 'key';
        const form = formOf(item, childPath(path, text ?? key.v), encoded);
        if (form === undefined) return undefined;
        out[text ?? key.v] = form;
      }
      return out;
    }
    default:
      return undefined;
  }
}

const text = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', '\u0000', '\ud83d\ude00', 'caf\udce9', '\ud800', '\\udce9', 'a\\b'),
);
const integer = fc.oneof(
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.bigInt({ min: -1000n, max: 1000n }),
  fc.constantFrom(MAX_SAFE, MAX_SAFE + 1n, -MAX_SAFE - 1n, 2n ** 63n, 2n ** 64n, 10n ** 20n, 10n ** 400n),
);
const leaf: fc.Arbitrary<Py> = fc.oneof(
  fc.constant<Py>({ t: 'none' }),
  fc.boolean().map((v): Py => ({ t: 'bool', v })),
  integer.map((v): Py => ({ t: 'int', v })),
  fc.double().map((v): Py => ({ t: 'float', v })),
  text.map((v): Py => ({ t: 'str', v })),
  fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 6 }).map((v): Py => ({ t: 'bytes', v })),
  fc.constantFrom('RaisingRepr()', 'ExitingRepr()', 'HugeRepr()', 'SurrogateRepr()', 'object()').map((s): Py => ({ t: 'object', source: s })),
);
const value: fc.Arbitrary<Py> = fc.letrec<{ py: Py }>((tie) => ({
  py: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('py'), { maxLength: 4 }).map((items): Py => ({ t: 'list', items })),
    fc.array(tie('py'), { maxLength: 4 }).map((items): Py => ({ t: 'tuple', items })),
    fc
      .uniqueArray(fc.tuple(text, tie('py')), { maxLength: 4, selector: ([key]) => key })
      .map((entries): Py => ({ t: 'dict', entries: entries.map(([key, item]) => [{ t: 'str', v: key }, item]) })),
    fc
      .uniqueArray(fc.tuple(fc.integer({ min: -5, max: 5 }), tie('py')), { maxLength: 3, selector: ([key]) => key })
      .map((entries): Py => ({ t: 'dict', entries: entries.map(([key, item]) => [{ t: 'int', v: BigInt(key) }, item]) })),
    fc.uniqueArray(integer, { maxLength: 3 }).map((items): Py => ({ t: 'set', items })),
  ),
})).py;

for (const codec of ['msgpack', 'json'] as const) {
  describe(`values through the real server (${codec} codec)`, () => {
    let server: TestServer;
    let pid: number;

    beforeAll(async () => {
      server = await startServer(codec === 'json' ? { IPYTHON_MCP_WORKER_CODECS: 'json' } : {});
      await server.structured('execute', { code: OBJECTS });
      // The text block shows a value as Python writes it: evaluated back, it is the value (tuples read as lists and
      // integral floats as ints, as in the JSON form).
      await server.structured('execute', {
        code: [
          'import ast as _ast',
          'def _norm(v):',
          '    if isinstance(v, (list, tuple)): return [_norm(i) for i in v]',
          '    if isinstance(v, dict): return {k: _norm(i) for k, i in v.items()}',
          '    if isinstance(v, float) and v.is_integer(): return int(v)',
          '    return v',
          'def text_is_value(text: str) -> bool:',
          '    return _norm(_ast.literal_eval(text)) == _norm(value)',
        ].join('\n'),
      });
      pid = (await server.structured('execute', { code: 'os.getpid()' })).result.value as number;
    });
    afterAll(async () => {
      await server?.close();
    });

    async function survives(): Promise<void> {
      const check = await server.structured('execute', { code: 'sentinel, os.getpid()' });
      expect(check.result).toEqual({ value: ['kept', pid] });
    }

    it('answers each case of the issue as the contract says (examples beside the properties)', async () => {
      // [cell, structured result (kind "json" is the default, so absent), the value as the text block shows it]
      const cases: [string, unknown, string][] = [
        ['2**40', { value: 2 ** 40 }, '1099511627776'],
        ['import time\ntime.time_ns() > 10**18', { value: true }, 'True'],
        ['int(time.time() * 1000) > 0', { value: true }, 'True'],
        ['10**20', { value: '100000000000000000000', encoded: { $: 'int' } }, '100000000000000000000'],
        ['2**64', { value: '18446744073709551616', encoded: { $: 'int' } }, '18446744073709551616'],
        ['import math\nmath.factorial(25)', { value: '15511210043330985984000000', encoded: { $: 'int' } }, '15511210043330985984000000'],
        ['2**53 + 1', { value: '9007199254740993', encoded: { $: 'int' } }, '9007199254740993'],
        ['chr(0xd800)', { value: '\\ud800', encoded: { $: 'text' } }, "'\\ud800'"],
        ["[float('nan'), -0.0]", { value: ['NaN', '-0.0'], encoded: { '$[0]': 'float', '$[1]': 'float' } }, '[nan, -0.0]'],
        ["{'a': None, 'b': [1.5, 'it\\'s']}", { value: { a: null, b: [1.5, "it's"] } }, `{'a': None, 'b': [1.5, "it's"]}`],
      ];
      for (const [code, expected, shown] of cases) {
        const result = await server.call('execute', { code });
        const structured = result.structuredContent as Record<string, any>;
        expect(structured.result, code).toEqual(expected);
        const text = (result.content[0] as { text: string }).text.split('\n');
        expect(text[0], code).toBe(`Out[${structured.execution_count}]: ${shown}`);
        // Places written as strings in the structured copy are named in the text too.
        if (structured.result.encoded) expect(text[1], code).toMatch(/^\[value written exactly above; in structured content as strings: \$/);
      }
      const idResult = await server.structured('execute', { code: 'id(object())' });
      expect(typeof idResult.result.value).toBe('number');
      const big = await server.structured('execute', { code: '10**400' });
      expect(big.result.value).toBe(`1${'0'.repeat(400)}`);
      const printed = await server.structured('execute', { code: "print('\\udcff')" });
      expect(printed).toMatchObject({ stdout: '\\udcff\n', escaped: ['stdout'] });
      const raised = await server.structured('execute', { code: "raise ValueError('bad \\udcff')" });
      expect(raised.error.message).toBe('bad \\udcff');
      expect(raised.escaped).toContain('error.message');
      const listed = await server.structured('execute', {
        code: "import os, tempfile\nd = tempfile.mkdtemp()\nopen(os.path.join(d.encode(), b'caf\\xe9'), 'w').close()\nos.listdir(d)",
      });
      expect(listed.result).toEqual({ value: ['caf\\udce9'], encoded: { '$[0]': 'text' } });
      await server.call('execute', { code: 'def huge() -> int:\n    return 10**20' });
      const called = await server.structured('call_function', { name: 'huge' });
      expect(called).toEqual({ value: '100000000000000000000', encoded: { $: 'int' } });
      await server.call('register_tool', { name: 'huge' });
      const dynamic = await server.call('huge', {});
      expect(dynamic.structuredContent).toMatchObject({ value: '100000000000000000000', encoded: { $: 'int' } });
      await server.call('unregister_tool', { names: ['huge'] });
      await survives();
    });

    it('refuses a request whose text holds a lone surrogate, on both codecs alike, and loses nothing', async () => {
      const code = await server.call('execute', { code: "s = '\ud800'" });
      expect(code.isError).toBe(true);
      expect(code.structuredContent).toMatchObject({ error: { code: 'invalid_arguments', details: { path: 'params.code' } } });
      const argument = await server.call('call_function', { name: 'give', arguments: { k: ['ok', 'v\udc80'] } });
      expect(argument.structuredContent).toMatchObject({ error: { code: 'invalid_arguments', details: { path: 'params.arguments.k[1]' } } });
      const escapedCode = await server.structured('execute', { code: "len('\\ud800')" });
      expect(escapedCode.result).toEqual({ kind: 'json', value: 1 });
      await survives();
    });

    it('answers every value JSON-safe, exact where the contract says so, flagged elsewhere', async () => {
      await fc.assert(
        fc.asyncProperty(value, async (py) => {
          const code = `value = ${source(py)}\nvalue`;
          const result = await server.call('execute', { code });
          const structured = result.structuredContent as Record<string, any>;
          expect(result.isError ?? false, code).toBe(false);
          expect(JSON.parse(JSON.stringify(structured))).toEqual(structured);
          const text = (result.content[0] as { text: string }).text;
          const encoded: Record<string, string> = {};
          const form = jsonForm(py, '$', encoded);
          if (py.t === 'none') {
            expect(structured).not.toHaveProperty('result');
            expect(text).toBe(`In [${structured.execution_count}]: ok`);
          } else if (form !== undefined && structured.truncated?.result !== true) {
            const expected: Record<string, unknown> = { value: form };
            if (Object.keys(encoded).length > 0) expected.encoded = encoded;
            expect(structured.result, code).toEqual(expected);
            const prompt = `Out[${structured.execution_count}]: `;
            expect(text.startsWith(prompt), text).toBe(true);
            // NaN and infinities read back only as names; every other exact value evaluates back to itself.
            if (!Object.values(encoded).includes('float')) {
              const shown = text.slice(prompt.length).split('\n[value written exactly above')[0]!;
              const back = await server.call('call_function', { name: 'text_is_value', arguments: { text: shown } });
              expect((back.structuredContent as Record<string, any>).value, `${code}\n${shown}`).toBe(true);
            }
          } else if (form === undefined) {
            expect(structured.result.kind, code).toBe('repr');
            expect(typeof structured.result.repr).toBe('string');
          }
          await survives();
        }),
        RUNS,
      );
    });

    it('prints, raises and returns every value from a function without losing the namespace', async () => {
      await fc.assert(
        fc.asyncProperty(value, async (py) => {
          await server.call('execute', { code: `value = ${source(py)}\ndef give():\n    return value` });
          for (const [tool, args] of [
            ['execute', { code: 'print(value)' }],
            ['execute', { code: 'raise ValueError(value)' }],
            ['call_function', { name: 'give' }],
          ] as const) {
            const result = await server.call(tool, args);
            const structured = result.structuredContent as Record<string, any>;
            expect(JSON.parse(JSON.stringify(structured))).toEqual(structured);
            if (tool === 'call_function' && result.isError === true) {
              expect(structured.error.code).toBe('result_not_json');
              expect(jsonForm(py, '$', {})).toBeUndefined();
            }
          }
          await survives();
        }),
        { ...RUNS, numRuns: 40 },
      );
    });

    it('hands JSON arguments to Python with safe integral numbers as int', async () => {
      await server.call('execute', {
        code: [
          'def tags(**kw):',
          '    def tag(v):',
          '        if isinstance(v, bool) or v is None or isinstance(v, str): return v',
          "        if isinstance(v, int): return ['int', str(v)]",
          "        if isinstance(v, float): return ['float', v]",
          '        if isinstance(v, list): return [tag(i) for i in v]',
          '        return {k: tag(i) for k, i in v.items()}',
          '    return tag(kw)',
        ].join('\n'),
      });
      const tag = (item: unknown): unknown => {
        if (typeof item === 'number') return Number.isSafeInteger(item) ? ['int', String(item === 0 ? 0 : item)] : ['float', item];
        if (Array.isArray(item)) return item.map(tag);
        if (item !== null && typeof item === 'object') return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, tag(v)]));
        return item;
      };
      await fc.assert(
        fc.asyncProperty(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), async (args) => {
          const sent = JSON.parse(JSON.stringify(args)) as Record<string, unknown>;
          const result = await server.call('call_function', { name: 'tags', arguments: sent });
          expect(result.isError ?? false).toBe(false);
          expect((result.structuredContent as Record<string, any>).value).toEqual(tag(sent));
        }),
        RUNS,
      );
      await survives();
    });
  });
}
