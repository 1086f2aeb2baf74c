import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IMAGE_MIME_TYPES, MAX_INT32, RUN_CODE_DROPPED_FIELDS } from './constants.js';
import { OPERATION_FACTS, OPERATION_NAMES, checkOperationParams, checkOperationResult, isOperationName, operationsJsonSchema } from './operations.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = (name: string): string => readFileSync(`${root}fixtures/protocol/${name}`, 'utf8');
const REGENERATE = 'stale: run `pnpm exec turbo run build && node tooling/scripts/gen-protocol.mjs`';

interface Example {
  name: string;
  op: string;
  params: unknown;
  result: unknown;
}
const { examples } = JSON.parse(fixture('operations.json')) as { examples: Example[] };

describe('the operations catalogue', () => {
  it('has an example of every operation in the shared corpus, and no example of an unknown one', () => {
    expect([...new Set(examples.map((example) => example.op))].sort()).toEqual([...OPERATION_NAMES].sort());
    expect(examples.filter((example) => !isOperationName(example.op))).toEqual([]);
  });

  it.each(examples.map((example) => [example.name, example] as const))('%s validates against the catalogue', (_name, example) => {
    if (!isOperationName(example.op)) throw new Error(`unknown op ${example.op}`);
    expect(checkOperationParams(example.op, example.params).error?.issues).toBeUndefined();
    expect(checkOperationResult(example.op, example.result).error?.issues).toBeUndefined();
  });

  it('is strict: an unknown field and a missing required field are both errors', () => {
    const execute = examples.find((example) => example.op === 'execute')!.result as Record<string, unknown>;
    expect(checkOperationResult('execute', { ...execute, extra: 1 }).success).toBe(false);
    const { stdout: _stdout, ...withoutStdout } = execute;
    expect(checkOperationResult('execute', withoutStdout).success).toBe(false);
  });

  it("derives run_code's result from execute's without the fields run_code never has", () => {
    const runCode = examples.find((example) => example.op === 'run_code')!.result as Record<string, unknown>;
    for (const field of RUN_CODE_DROPPED_FIELDS) {
      expect(runCode).not.toHaveProperty(field);
      expect(checkOperationResult('run_code', { ...runCode, [field]: field.endsWith('chars') ? 0 : '' }).success).toBe(false);
    }
  });

  it(`writes fixtures/protocol/operations.schema.json as generated (${REGENERATE})`, () => {
    expect(JSON.parse(fixture('operations.schema.json')), REGENERATE).toEqual(operationsJsonSchema());
  });
});

describe('the operation facts', () => {
  const { facts, operations } = JSON.parse(fixture('operation-facts.json')) as {
    facts: Record<string, { values: unknown[] }>;
    operations: Record<string, Record<string, unknown>>;
  };
  const camel = (name: string): string => name.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());

  it('cover every catalogue operation and nothing else, in both the fixture and the generated table', () => {
    expect(Object.keys(operations).sort()).toEqual([...OPERATION_NAMES].sort());
    expect(Object.keys(OPERATION_FACTS).sort()).toEqual([...OPERATION_NAMES].sort());
  });

  it.each(OPERATION_NAMES)('%s states every fact, with an allowed value', (op) => {
    const stated = OPERATION_FACTS[op] as unknown as Record<string, unknown>;
    expect(Object.keys(stated).sort()).toEqual(Object.keys(facts).map(camel).sort());
    for (const [name, { values }] of Object.entries(facts)) {
      expect(values, `${op}.${name}`).toContain(stated[camel(name)]);
      expect(stated[camel(name)], `${op}.${name}`).toBe(operations[op]?.[name]);
    }
  });

  it('keep the worker reconciling after every operation that may change the catalog', () => {
    for (const op of OPERATION_NAMES) {
      if (OPERATION_FACTS[op].catalogEffect !== 'none') expect(OPERATION_FACTS[op].workerReconciles, op).toBe(true);
    }
  });

  it("say remove only may change the catalog (a backing name's removal makes its registration stale, as a del does)", () => {
    expect(OPERATION_FACTS.remove.catalogEffect).toBe('may-change');
    expect(OPERATION_FACTS.execute.catalogEffect).toBe(OPERATION_FACTS.remove.catalogEffect);
    expect(OPERATION_NAMES.filter((op) => OPERATION_FACTS[op].catalogEffect === 'changes').sort()).toEqual(['register_tool', 'reset', 'unregister_tool']);
    expect(OPERATION_NAMES.filter((op) => OPERATION_FACTS[op].spillsStreams)).toEqual(['execute']);
  });
});

describe('constants both languages read', () => {
  it(`match fixtures/protocol/constants.json (${REGENERATE})`, async () => {
    // @ts-expect-error -- a plain .mjs script without types
    const { constantSources } = (await import('../../../tooling/scripts/gen-protocol.mjs')) as {
      constantSources: () => Record<string, string>;
    };
    for (const [path, text] of Object.entries(constantSources())) expect(readFileSync(root + path, 'utf8'), `${path} ${REGENERATE}`).toBe(text);
    expect(IMAGE_MIME_TYPES).toEqual(['image/png', 'image/jpeg']);
    expect(MAX_INT32).toBe(2 ** 31 - 1);
  });
});
