import { describe, expect, it } from 'vitest';
import { STABLE_TOOLS, findStableTool, plainExecuteInput } from './stable-tools.js';

const execute = findStableTool('execute');

/** Well-formed and malformed execute arguments, the odd objects zod's strict model sees included. */
const CASES: unknown[] = [
  { code: '1+1' },
  { code: '' },
  { code: 'print("x")\n' },
  {},
  { code: 1 },
  { code: null },
  { code: undefined },
  { code: ['1'] },
  { code: new String('1') },
  { code: '1', extra: 2 },
  { extra: 1 },
  JSON.parse('{"code":"1","__proto__":{"x":1}}'),
  JSON.parse('{"__proto__":{"code":"1"}}'),
  Object.create({ code: 'inherited' }),
  Object.assign(Object.create({ extra: 1 }), { code: '1' }),
  [],
  null,
];

describe('plainInput', () => {
  it("accepts only arguments execute's model accepts, and returns what the model returns", () => {
    expect(execute).toBeDefined();
    for (const args of CASES) {
      const plain = plainExecuteInput(args as Record<string, unknown>);
      const parsed = execute!.input.safeParse(args);
      if (plain === undefined) continue;
      expect(parsed.success, JSON.stringify(args)).toBe(true);
      expect(plain).toEqual(parsed.data);
    }
  });

  it('takes the well-formed call itself, so it is the one zod never sees', () => {
    expect(plainExecuteInput({ code: 'print(1)' })).toEqual({ code: 'print(1)' });
    expect(plainExecuteInput({ code: 'print(1)', timeout: 1 })).toBeUndefined();
    expect(plainExecuteInput({ code: 7 })).toBeUndefined();
  });

  it('is set only on tools whose check is held against their model here', () => {
    expect(STABLE_TOOLS.filter((tool) => tool.plainInput !== undefined).map((tool) => tool.name)).toEqual(['execute']);
    expect(execute?.plainInput).toBe(plainExecuteInput);
  });
});
