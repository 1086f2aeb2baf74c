import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPython } from '../test/python.js';
import { ConsentGate, policyFromAnnotations, type AskConsent, type ConsentQuestion } from './consent.js';
import { IPythonKernel, kernelJournal } from './kernel.js';
import { CodeMode } from './run-code.js';
import type { ToolDefinition } from './tool-functions.js';

// The consent gate through a real kernel: what the code sees (a value, or ToolCallError naming who refused), what
// ran (the tools count their executions), and what the journal and the metadata record.

let scratch: string;
let kernel: IPythonKernel;
const ran: string[] = [];
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'code-mode-consent-'));
  kernel = new IPythonKernel({ python: testPython(), journal: join(scratch, 'journal.ipynb') });
});
afterAll(async () => {
  await kernel.shutdown();
  rmSync(scratch, { recursive: true, force: true });
});

function tool(name: string, annotations: ToolDefinition['annotations']): ToolDefinition {
  return {
    name,
    group: 'fs',
    annotations,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    execute: (input) => {
      ran.push(name);
      return `${name}:${(input as { path?: string }).path ?? ''}`;
    },
  };
}

const tools = [
  tool('read_file', { readOnlyHint: true, openWorldHint: false }),
  tool('write_file', { readOnlyHint: false, destructiveHint: false, openWorldHint: false }),
  tool('delete_file', undefined),
];

function gate(): ConsentGate {
  return new ConsentGate({
    policyOf: (subject) => (subject.tool === 'delete_file' ? { policy: 'refuse', source: 'servers file', reason: 'set by the test' } : policyFromAnnotations(subject.annotations)),
    howToAllow: () => 'change the test',
  });
}

const CATCH = (call: string): string => `try:\n    out = ${call}\nexcept ToolCallError as error:\n    out = "refused: " + str(error)\nout`;

describe('the consent gate in run_code', () => {
  it('runs read-only tools, asks for the others, and refuses by policy, recording each decision', async () => {
    const questions: ConsentQuestion[] = [];
    const answers = ['no', 'yes', 'session'] as const;
    const ask: AskConsent = async (question) => {
      questions.push(question);
      return { answer: answers[questions.length - 1] ?? 'no', by: 'the test person' };
    };
    const mode = new CodeMode({ kernel, tools, consent: gate() });
    ran.length = 0;
    const code = [
      'r = []',
      ...['read_file(path="a")', 'write_file(path="b")', 'write_file(path="c")', 'write_file(path="d")', 'write_file(path="e")', 'delete_file(path="f")'].map(
        (call) => `${CATCH(call).replace(/\nout$/, '')}\nr.append(out)`,
      ),
      'r',
    ].join('\n');
    const result = await mode.runCode({ code }, { ask });
    expect(result.return).toEqual({
      kind: 'value',
      value: [
        'read_file:a',
        'refused: the tool "write_file" of the MCP server "fs" was refused by the test person when asked; nothing ran',
        'write_file:c',
        'write_file:d',
        'write_file:e',
        expect.stringMatching(/^refused: the tool "delete_file" of the MCP server "fs" is refused by the consent policy/),
      ],
    });
    // "no" ran nothing; "session" answered the fourth and fifth calls without asking.
    expect(ran).toEqual(['read_file', 'write_file', 'write_file', 'write_file']);
    expect(questions.map((question) => question.input)).toEqual([{ path: 'b' }, { path: 'c' }, { path: 'd' }]);
    expect(result.metadata.toolCalls.map((call) => call.decision)).toEqual([
      'allowed by policy',
      'refused by the person',
      'asked and allowed',
      'allowed for the session',
      'allowed for the session',
      'refused by policy',
    ]);
    await kernelJournal(kernel)?.flushed();
    const journal = readFileSync(join(scratch, 'journal.ipynb'), 'utf8');
    expect(journal).toContain('[refused by the person] write_file(path=');
    expect(journal).toContain('[allowed by policy] read_file(path=');
  });

  it('refuses an ask tool when the caller cannot ask, naming the setting, and nothing runs', async () => {
    const mode = new CodeMode({ kernel, tools, consent: gate() });
    ran.length = 0;
    const result = await mode.runCode({ code: CATCH('write_file(path="z")') });
    expect(result.return).toEqual({ kind: 'value', value: expect.stringContaining('needs the person\'s yes') });
    expect(JSON.stringify(result.return)).toContain('change the test');
    expect(ran).toEqual([]);
  });

  it('treats a question that fails (the client went away) as a refusal', async () => {
    const mode = new CodeMode({ kernel, tools, consent: gate() });
    ran.length = 0;
    const ask: AskConsent = async () => {
      throw new Error('connection closed');
    };
    const result = await mode.runCode({ code: CATCH('write_file(path="z")') }, { ask });
    expect(JSON.stringify(result.return)).toContain('could not be answered (connection closed)');
    expect(ran).toEqual([]);
  });

  it('runs every call without a gate, as before', async () => {
    const mode = new CodeMode({ kernel, tools });
    ran.length = 0;
    const result = await mode.runCode({ code: 'delete_file(path="q")' });
    expect(result.return).toEqual({ kind: 'value', value: 'delete_file:q' });
    expect(result.metadata.toolCalls[0]?.decision).toBeUndefined();
  });
});
