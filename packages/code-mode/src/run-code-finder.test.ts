// run_code's description budget through a real kernel: stubs under the budget with the whole docstring one help()
// away, names only past it with find_tools in the kernel, and bad budgets refused before anything starts.
import { afterEach, describe, expect, it } from 'vitest';
import { survivors, testPython } from '../test/python.js';
import { InvalidCodeModeOptionsError } from './errors.js';
import { CodeMode, DEFAULT_DESCRIPTION_BUDGET, type CodeModeOptions } from './run-code.js';
import type { ToolDefinition } from './tool-functions.js';

const modes: CodeMode[] = [];

function codeMode(options: CodeModeOptions = {}): CodeMode {
  const created = new CodeMode({ kernelOptions: { python: testPython() }, ...options });
  modes.push(created);
  return created;
}

afterEach(async () => {
  const pids = modes.flatMap((mode) => mode.kernel?.workerPids() ?? []);
  await Promise.all(modes.splice(0).map((mode) => mode.close()));
  expect(await survivors(pids)).toEqual([]);
});

const LONG_DOC =
  'Store a note under a key. The note replaces any earlier one with the same key; keys are case-sensitive and at ' +
  'most 64 characters, and the text is kept as given.';

const calls: Array<Record<string, unknown>> = [];
const tools: ToolDefinition[] = [
  {
    name: 'save-note',
    description: LONG_DOC,
    inputSchema: {
      type: 'object',
      properties: { key: { type: 'string', description: 'The key.' }, text: { type: 'string' }, pinned: { type: 'boolean', default: false } },
      required: ['key', 'text'],
      additionalProperties: false,
    },
    execute: (input: Record<string, unknown>) => {
      calls.push(input);
      return { saved: input.key };
    },
  },
  ...Array.from({ length: 30 }, (_, index): ToolDefinition => ({
    name: `filler_${index}`,
    description: `Filler tool number ${index}, here to make the description long.`,
    inputSchema: { type: 'object', properties: { value: { type: 'integer' } } },
    execute: () => index,
  })),
];

describe('the description budget', () => {
  it('under the budget: compact stubs, and help() and ? give the whole docstring', async () => {
    const mode = codeMode({ tools });
    expect(mode.finder).toBeUndefined();
    expect(mode.description.length).toBeLessThanOrEqual(DEFAULT_DESCRIPTION_BUDGET);
    expect(mode.description).toContain('def save_note(*, key: str, text: str, pinned: bool = False) -> Any:\n    """Store a note under a key."""');
    expect(mode.description).not.toContain('case-sensitive');
    const result = await mode.runCode({ code: 'help(save_note)\nget_ipython().run_line_magic("pinfo", "save_note")' });
    expect(result.return.kind).toBe('value');
    const output = JSON.stringify(result.return);
    expect(output).toContain('case-sensitive and at most 64 characters');
    expect(output.split('case-sensitive').length - 1).toBe(2);
  });

  it('past the budget: names only, and a model that knows only a name finds the stub with one call and calls it', async () => {
    calls.length = 0;
    const mode = codeMode({ tools, descriptionBudget: 2000 });
    expect(mode.finder?.pythonName).toBe('find_tools');
    expect(mode.description).toContain('save_note, filler_0, filler_1');
    expect(mode.description).not.toContain('def save_note');
    // The scripted model: it read "save_note" in the description and nothing else about it.
    const lookup = await mode.runCode({ code: 'print(find_tools(query="save_note"))' });
    const stub = (lookup.return as { kind: 'value'; value: { output: string } }).value.output;
    const signature = /^def save_note\(\*, (.*)\) -> Any:/m.exec(stub);
    expect(signature).not.toBeNull();
    expect(stub).toContain('case-sensitive');
    const required = (signature?.[1] ?? '').split(', ').filter((parameter) => !parameter.includes('=')).map((parameter) => parameter.split(':')[0]);
    expect(required).toEqual(['key', 'text']);
    const answers: Record<string, string> = { key: 'todo', text: 'buy milk' };
    const call = `save_note(${required.map((name) => `${name}=${JSON.stringify(answers[name ?? ''])}`).join(', ')})`;
    const called = await mode.runCode({ code: call });
    expect(called.return).toEqual({ kind: 'value', value: { saved: 'todo' } });
    expect(calls).toEqual([{ key: 'todo', text: 'buy milk' }]);
  });

  it('refuses a bad lookup as ToolCallError and keeps the kernel and its functions', async () => {
    const mode = codeMode({ tools, descriptionBudget: 0 });
    const code = [
      'errors = []',
      'for bad in [dict(), dict(query=3), dict(query="x", limit=0)]:',
      '    try:',
      '        find_tools(**bad)',
      '    except (ToolCallError, TypeError) as error:',
      '        errors.append(type(error).__name__)',
      '[errors, find_tools(query="zebra")]',
    ].join('\n');
    const result = await mode.runCode({ code });
    expect(result.return).toEqual({
      kind: 'value',
      value: [['TypeError', 'ToolCallError', 'ToolCallError'], expect.stringMatching(/^No function matches "zebra"\. The functions are: save_note, filler_0/)],
    });
    expect((await mode.runCode({ code: 'filler_3()' })).return).toEqual({ kind: 'value', value: 3 });
  });

  it('refuses a budget that is not a non-negative integer before starting anything', () => {
    for (const descriptionBudget of [-1, 1.5, Number.NaN]) {
      expect(() => new CodeMode({ tools, descriptionBudget })).toThrow(InvalidCodeModeOptionsError);
    }
    expect(new CodeMode({ tools, descriptionBudget: null }).finder).toBeUndefined();
  });
});
