import { describe, expect, it } from 'vitest';
import { outputsOfExecuteResult } from './execute-outputs.js';

describe('outputsOfExecuteResult', () => {
  it('notes a head-and-tail stream\'s omitted characters where they were', () => {
    const { outputs } = outputsOfExecuteResult({ execution_count: 1, stdout: 'head\ntail\n', stdout_omitted_chars: 90, stdout_omitted_at: 5 });
    expect(outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: 'head\n[… 90 characters were not kept here]\ntail\n' }]);
  });

  it('maps every field of a worker execute result to Jupyter outputs, in Jupyter order', () => {
    const { outputs, executionCount } = outputsOfExecuteResult({
      status: 'error',
      execution_count: 7,
      stdout: 'out',
      stderr: 'err\n',
      stdout_omitted_chars: 12,
      stderr_omitted_chars: 0,
      displays: [
        { data: { 'image/png': 'iVBOR', 'text/plain': '<Figure>' }, metadata: { width: 3 }, truncated: false },
        { data: { 'application/json': { a: 1 }, 'text/html': 5 }, metadata: null },
      ],
      displays_omitted: 2,
      result: { kind: 'repr', repr: '<object>', images: { 'image/png': 'AAAA' } },
      error: { kind: 'exception', type: 'ValueError', message: 'bad', traceback: 'Traceback\n  line\nValueError: bad\n' },
    });
    expect(executionCount).toBe(7);
    expect(outputs).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'out\n[… 12 more characters were not kept]\n' },
      { output_type: 'stream', name: 'stderr', text: 'err\n' },
      { output_type: 'display_data', data: { 'image/png': 'iVBOR', 'text/plain': '<Figure>' }, metadata: { width: 3 } },
      { output_type: 'display_data', data: { 'application/json': { a: 1 }, 'text/html': '5', 'text/plain': '<application/json>' }, metadata: {} },
      { output_type: 'stream', name: 'stderr', text: '[2 display item(s) were not kept]\n' },
      { output_type: 'execute_result', execution_count: 7, data: { 'image/png': 'AAAA', 'text/plain': '<object>' }, metadata: {} },
      { output_type: 'error', ename: 'ValueError', evalue: 'bad', traceback: ['Traceback', '  line', 'ValueError: bad'] },
    ]);
  });

  it('renders a JSON result as its Python literal and reads run_code output', () => {
    const { outputs } = outputsOfExecuteResult({ execution_count: 1, output: 'mixed\n', result: { kind: 'json', value: { k: [true, null] } } });
    expect(outputs).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'mixed\n' },
      { output_type: 'execute_result', execution_count: 1, data: { 'text/plain': "{'k': [True, None]}" }, metadata: {} },
    ]);
  });

  it('skips what is missing or malformed instead of throwing', () => {
    expect(outputsOfExecuteResult({})).toEqual({ outputs: [], executionCount: null });
    expect(outputsOfExecuteResult({ execution_count: -1, stdout: 5, displays: [null, 'x'], result: { kind: 'other' }, error: 'oops' })).toEqual({
      outputs: [],
      executionCount: null,
    });
    expect(outputsOfExecuteResult({ error: { type: '', message: 3 } }).outputs).toEqual([{ output_type: 'error', ename: 'Error', evalue: '', traceback: ['Error: '] }]);
  });

  it('keeps the unfolded traceback when the worker folded library frames for the model', () => {
    const folded = { type: 'KeyError', message: "'k'", traceback: 'lib.py:1 in f\nKeyError: k', full_traceback: 'File /x/lib.py:1, in f()\n-> 1 boom\nKeyError: k' };
    expect(outputsOfExecuteResult({ error: folded }).outputs[0]).toMatchObject({ traceback: ['File /x/lib.py:1, in f()', '-> 1 boom', 'KeyError: k'] });
  });
});
