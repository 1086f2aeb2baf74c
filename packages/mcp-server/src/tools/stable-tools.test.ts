import { describe, expect, it } from 'vitest';
import { STABLE_TOOLS, STABLE_TOOL_DEFINITIONS, STABLE_TOOL_NAMES, findStableTool, plainExecuteInput } from './stable-tools.js';
import { defineStableTools } from './tool-definition.js';

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

describe('a stable tool is one definition object', () => {
  it('keys each definition by its own name, in the published order', () => {
    expect(Object.entries(STABLE_TOOL_DEFINITIONS).map(([key, tool]) => [key, tool.name])).toEqual(STABLE_TOOL_NAMES.map((name) => [name, name]));
    expect(STABLE_TOOLS.map((tool) => tool.name)).toEqual([...STABLE_TOOL_NAMES]);
  });

  it.each(STABLE_TOOLS.map((tool) => [tool.name, tool] as const))('%s has its compaction, text, output schema and journal policy', (_name, tool) => {
    expect(typeof tool.compact).toBe('function');
    expect(typeof tool.text).toBe('function');
    expect(tool.outputSchema).toMatchObject({ type: 'object' });
    expect(['cell', 'call', 'none']).toContain(tool.journal);
  });

  it('does not compile a tool without a text rule or a compaction', () => {
    const { text: _text, ...withoutText } = STABLE_TOOL_DEFINITIONS.list;
    const { compact: _compact, ...withoutCompact } = STABLE_TOOL_DEFINITIONS.list;
    // @ts-expect-error -- `text` is required: a tool without a text rule is a compile error, not a silent fallback.
    defineStableTools({ list: withoutText });
    // @ts-expect-error -- likewise `compact`.
    defineStableTools({ list: withoutCompact });
    // @ts-expect-error -- and a key must be its definition's name.
    defineStableTools({ other: STABLE_TOOL_DEFINITIONS.list });
  });

  it('finds only its own tools, never an inherited property', () => {
    expect(findStableTool('execute')).toBe(STABLE_TOOL_DEFINITIONS.execute);
    expect(findStableTool('toString')).toBeUndefined();
    expect(findStableTool('call_tool')).toBeUndefined();
  });
});
