// The value contract in Code Mode (docs/protocol.md, "Value contract"), with the real kernel: what a TypeScript
// tool returns reaches Python with every number exact (fast-check generates the values), and what run_code
// returns is exact JSON or IPython's text, never a BigInt or a silently rounded number.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPython } from '../test/python.js';
import { CodeMode } from './run-code.js';
import type { ToolDefinition } from './tool-functions.js';

const RUNS = { seed: 20261201, numRuns: 60, endOnFailure: true };

let current: unknown = null;
let mode: CodeMode;

const give: ToolDefinition = { name: 'give', inputSchema: { type: 'object' }, execute: () => current };
const echo: ToolDefinition = { name: 'echo', inputSchema: { type: 'object' }, execute: (input) => input };

beforeAll(async () => {
  mode = new CodeMode({ kernelOptions: { python: testPython() }, tools: [give, echo] });
  await mode.runCode({
    code: [
      'import math',
      'def tag(v):',
      '    if v is None or isinstance(v, (bool, str)): return v',
      "    if isinstance(v, int): return ['int', str(v)]",
      "    if isinstance(v, float): return ['float', v if math.isfinite(v) else repr(v)]",
      '    if isinstance(v, list): return [tag(i) for i in v]',
      '    return {k: tag(i) for k, i in v.items()}',
    ].join('\n'),
  });
});
afterAll(async () => {
  await mode.close();
});

/** What Python should hold for a JS tool value, tagged as `tag` above writes it. */
function expected(value: unknown): unknown {
  if (typeof value === 'bigint') return ['int', value.toString()];
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return ['float', 'nan'];
    if (!Number.isFinite(value)) return ['float', value > 0 ? 'inf' : '-inf'];
    return Number.isSafeInteger(value) ? ['int', String(value === 0 ? 0 : value)] : ['float', value];
  }
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : expected(item)));
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined).map(([key, item]) => [key, expected(item)]));
  }
  return value ?? null;
}

const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(5_000_000_000, 2 ** 53, 2 ** 60, 1e21, -0, Number.NaN, Infinity, -Infinity),
  fc.bigInt({ min: -(2n ** 90n), max: 2n ** 90n }),
);
const jsValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    number,
    fc.string({ maxLength: 8 }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.date({ noInvalidDate: true }),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
})).value;

describe('Code Mode value boundary', () => {
  it('hands Python every tool value with its numbers exact', async () => {
    await fc.assert(
      fc.asyncProperty(jsValue, async (value) => {
        current = value;
        const result = await mode.runCode({ code: '[tag(give())]' });
        expect(result.return).toEqual({ kind: 'value', value: [expected(value)] });
      }),
      RUNS,
    );
  });

  it('hands a tool the arguments Python passed, exactly, or raises ToolCallError before the call', async () => {
    const result = await mode.runCode({
      code: [
        'out = [echo(n=2**53 - 1, big=5_000_000_000, f=0.1, s="caf\\u00e9 \\U0001f600")]',
        'for bad in (2**70, "caf\\udce9", float("nan")):',
        '    try:',
        '        echo(x=bad)',
        '    except ToolCallError as error:',
        '        out.append(type(error).__name__)',
        'out',
      ].join('\n'),
    });
    expect(result.return).toEqual({
      kind: 'value',
      value: [{ n: 2 ** 53 - 1, big: 5_000_000_000, f: 0.1, s: 'caf\u00e9 \ud83d\ude00' }, 'ToolArgumentError', 'ToolArgumentError', 'ToolArgumentError'],
    });
  });

  it('returns run_code values JSON holds as data and the others as IPython text', async () => {
    const cases: [string, unknown][] = [
      ['2**40', 2 ** 40],
      ['{"id": 5_000_000_000}', { id: 5_000_000_000 }],
      ['10**20', '100000000000000000000'],
      ['{"n": 10**20}', "{'n': 100000000000000000000}"],
      ['float("nan")', 'nan'],
      ['[0.1, -0.0]', '[0.1, -0.0]'],
      ['"caf\\udce9"', "'caf\\udce9'"],
    ];
    for (const [code, value] of cases) {
      const result = await mode.runCode({ code });
      expect(result.return, code).toEqual({ kind: 'value', value });
      expect(JSON.parse(JSON.stringify(result.return))).toEqual(result.return);
    }
    const state = await mode.runCode({ code: 'tag(1)' });
    expect(state.return).toEqual({ kind: 'value', value: ['int', '1'] });
  });
});
