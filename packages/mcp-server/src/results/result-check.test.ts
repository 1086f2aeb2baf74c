import { describe, expect, it } from 'vitest';
import { ResultCheck, ResultSchemaError, checksResultsByDefault } from './result-check.js';
import { STABLE_TOOL_DEFINITIONS } from '../tools/stable-tools.js';
import type { ResultRules } from './result-rules.js';
import { ResultWriter } from './tool-result.js';

const { execute, list } = STABLE_TOOL_DEFINITIONS;

describe('checksResultsByDefault', () => {
  it('checks in development and test builds only; an unset NODE_ENV (how clients launch the binary) is production', () => {
    expect(checksResultsByDefault({ NODE_ENV: 'test' })).toBe(true);
    expect(checksResultsByDefault({ NODE_ENV: 'development' })).toBe(true);
    expect(checksResultsByDefault({ NODE_ENV: 'production' })).toBe(false);
    expect(checksResultsByDefault({})).toBe(false);
  });
});

describe('ResultCheck', () => {
  it('passes a result its tool publishes, success and failure', () => {
    const check = new ResultCheck();
    expect(() => check.check(execute, { execution_count: 1, result: { value: 2 } })).not.toThrow();
    expect(() => check.check(execute, { status: 'error', error: { code: 'runtime_busy', message: 'busy' } })).not.toThrow();
    expect(() => check.check(list, { functions: [] })).not.toThrow();
  });

  it('refuses a result its own output schema refuses, naming the tool and the place', () => {
    const check = new ResultCheck();
    // An execute failure without status "error" would read as the default "ok".
    expect(() => check.check(execute, { error: { code: 'runtime_busy', message: 'busy' } })).toThrow(ResultSchemaError);
    expect(() => check.check(list, { functions: [{ name: 'f', signature: '()', stray: 1 }] })).toThrow(/^list wrote a result its output schema refuses: \/functions\/0/);
  });

  it('leaves a tool without an output schema alone', () => {
    const rules: ResultRules = { name: 'plain', compact: (full) => full, text: () => '' };
    expect(() => new ResultCheck().check(rules, { anything: 1 })).not.toThrow();
  });
});

describe('ResultWriter with checkResults', () => {
  // A compaction that drifted from its schema: it keeps a field the output schema does not allow.
  const drifted: ResultRules = { ...list, compact: (full) => ({ ...full, functions: [{ name: 'f', signature: '()', extra: true }] }) };

  it('fails the call on a result that does not match its schema when checking', () => {
    expect(() => new ResultWriter({ checkResults: true }).success(drifted, { functions: [], total: 0, truncated: false })).toThrow(ResultSchemaError);
  });

  it('writes it unchecked on the production path', () => {
    const result = new ResultWriter({ checkResults: false }).success(drifted, { functions: [], total: 0, truncated: false });
    expect(result.structuredContent).toMatchObject({ functions: [{ extra: true }] });
  });

  it('states execute\'s failure fields on every failure, from its definition', () => {
    const result = new ResultWriter({ checkResults: true }).failure(execute, { code: 'queue_timeout', message: 'waited too long' });
    expect(result.structuredContent).toEqual({ status: 'error', error: { code: 'queue_timeout', message: 'waited too long' } });
    expect(new ResultWriter({ checkResults: true }).failure(list, { code: 'queue_timeout', message: 'x' }).structuredContent).toEqual({ error: { code: 'queue_timeout', message: 'x' } });
  });
});
