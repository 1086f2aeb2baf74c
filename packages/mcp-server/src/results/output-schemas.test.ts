import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { STABLE_TOOLS } from '../tools/index.js';
import type { ResultRules } from './result-rules.js';
import { DYNAMIC_TOOL_RESULT } from './tool-result.js';

interface Example {
  name: string;
  op: string;
  result: Record<string, unknown>;
}
const corpus = fileURLToPath(new URL('../../../../fixtures/protocol/operations.json', import.meta.url));
const { examples } = JSON.parse(readFileSync(corpus, 'utf8')) as { examples: Example[] };
/** The rules of every tool that runs a worker operation, by that operation (dynamic tools run call_tool). */
const RULES: Record<string, ResultRules> = {
  ...Object.fromEntries(STABLE_TOOLS.filter((tool) => tool.op !== null).map((tool) => [tool.op, tool])),
  call_tool: DYNAMIC_TOOL_RESULT,
};
const tools = Object.keys(RULES);
const compactOutputSchema = (tool: string): Record<string, unknown> => RULES[tool]!.outputSchema!;
const compactResult = (tool: string, full: Record<string, unknown>): Record<string, unknown> => RULES[tool]!.compact(full);
// Draft-07 with the SDK client's leniency: what an MCP client checks structuredContent with.
const ajv = new Ajv({ strict: false, allErrors: true });

describe('stable tool output schemas derived from the operations catalogue', () => {
  const cases = examples.filter((example) => (tools as string[]).includes(example.op)).map((example) => [example.name, example] as const);
  it.each(cases)('the compact form of the real answer %s validates against its output schema', (_name, example) => {
    const validate = ajv.compile(compactOutputSchema(example.op));
    const compact = compactResult(example.op, example.result);
    expect(validate(compact) ? [] : validate.errors).toEqual([]);
  });

  it.each(tools)('%s accepts a structured failure (isError) beside its success shape', (tool) => {
    const validate = ajv.compile(compactOutputSchema(tool));
    const error = { code: 'name_not_found', message: "name 'x' is not defined", details: { name: 'x' } };
    const failure = { ...(tool === 'execute' ? { status: 'error' } : {}), error, runtime: { epoch: 2 } };
    expect(validate(failure) ? [] : validate.errors).toEqual([]);
  });

  it('has an example for every tool that runs a worker operation', () => {
    expect(tools.filter((tool) => !examples.some((example) => example.op === tool))).toEqual([]);
  });

  it('refuses a field no worker result has, below the top level', () => {
    const validate = ajv.compile(compactOutputSchema('execute'));
    expect(validate({ execution_count: 1, error: { kind: 'exception', type: 'E', message: '', traceback: '', extra: 1 } })).toBe(false);
    expect(validate({ execution_count: 1, truncated: { stdout: false } })).toBe(false);
  });

  it("requires an execute failure to say status \"error\", so its default \"ok\" is never read into it", () => {
    const validate = ajv.compile(compactOutputSchema('execute'));
    const busy = { error: { code: 'runtime_busy', message: 'busy', retryable: true } };
    expect(validate(busy)).toBe(false);
    expect(validate({ ...busy, status: 'ok' })).toBe(false);
    expect(validate({ ...busy, status: 'error' }) ? [] : validate.errors).toEqual([]);
  });

  it.each(['execute', 'call_function', 'call_tool'])('%s admits the running shape of a detached call, and only with its handle', (tool) => {
    const validate = ajv.compile(compactOutputSchema(tool));
    const running = { status: 'running', job: 'default-1-1', elapsed_s: 1.5, stdout: 'loss 0\n' };
    expect(validate(running) ? [] : validate.errors).toEqual([]);
    expect(validate({ status: 'running', elapsed_s: 1.5 })).toBe(false);
  });

  it('lets every detachable stable tool answer in the running shape', () => {
    const detachable = STABLE_TOOLS.filter((tool) => tool.detachable === true).map((tool) => tool.name);
    expect(detachable).toEqual(['execute', 'call_function']);
  });

  it('derives every worker-backed stable tool from the operation of its own name', () => {
    for (const tool of STABLE_TOOLS) {
      if (tool.op !== null) expect(tool.op, tool.name).toBe(tool.name);
    }
  });
});
