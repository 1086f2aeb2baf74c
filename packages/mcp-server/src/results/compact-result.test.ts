import { describe, expect, it } from 'vitest';
import type { OperationMeta } from '@ipython-mcp/worker-supervisor';
import { LONG_QUEUE_WAIT_MS, cleanTraceback, runtimeMeta, shownRuntime } from './compact-result.js';
import { STABLE_TOOL_DEFINITIONS, type StableToolName } from '../tools/stable-tools.js';
import { DYNAMIC_TOOL_RESULT } from './tool-result.js';

/** A result compacted by its tool's definition (a dynamic tool's rules for `call_tool`). */
const compactResult = (tool: StableToolName | 'call_tool', full: Record<string, unknown>): Record<string, unknown> =>
  (tool === 'call_tool' ? DYNAMIC_TOOL_RESULT : STABLE_TOOL_DEFINITIONS[tool]).compact(full);

const meta = (overrides: Partial<OperationMeta> = {}): OperationMeta => ({
  requestId: 7,
  sequence: 3,
  epoch: 1,
  queueWaitMs: 0,
  durationMs: 2,
  interruption: null,
  namespace: null,
  ...overrides,
});

const fullExecute = {
  status: 'ok',
  execution_count: 2,
  stdout: '',
  stderr: '',
  stdout_omitted_chars: 0,
  stderr_omitted_chars: 0,
  truncated: { stdout: false, stderr: false, result: false, displays: false },
  result: { kind: 'json', value: 42 },
  displays: [],
  displays_omitted: 0,
  error: null,
};

describe('compactResult', () => {
  it('keeps only the informative fields of an execute result, and never touches a value', () => {
    expect(compactResult('execute', fullExecute)).toEqual({ execution_count: 2, result: { value: 42 } });
    for (const value of [0, false, null, '', [], {}]) {
      expect(compactResult('execute', { ...fullExecute, result: { kind: 'json', value } }).result).toEqual({ value });
      expect(compactResult('call_function', { value, truncated: false })).toEqual({ value });
    }
  });

  it('keeps truncation flags that are set, exact omitted counts, a repr kind and the value-contract fields', () => {
    const cut = compactResult('execute', {
      ...fullExecute,
      stdout: 'x'.repeat(10),
      stdout_omitted_chars: 5,
      truncated: { stdout: true, stderr: false, result: false, displays: false },
      result: { kind: 'repr', repr: '{1, 2}' },
      escaped: ['stdout'],
      displays: [{ data: { 'text/plain': '1' }, metadata: {}, truncated: false }],
    });
    expect(cut).toEqual({
      execution_count: 2,
      stdout: 'x'.repeat(10),
      stdout_omitted_chars: 5,
      truncated: { stdout: true },
      result: { kind: 'repr', repr: '{1, 2}' },
      escaped: ['stdout'],
      displays: [{ data: { 'text/plain': '1' } }],
    });
    expect(compactResult('execute', { ...fullExecute, result: { kind: 'json', value: '1e20', encoded: { $: 'int' } } }).result).toEqual({
      value: '1e20',
      encoded: { $: 'int' },
    });
    expect(compactResult('call_function', { value: 1, truncated: false, escaped: [], encoded: {}, encoded_omitted: 0 })).toEqual({ value: 1 });
  });

  it('cleans a failed cell: status and error stay, false flags and the traceback banner go', () => {
    const traceback =
      '\u001b[31m---------------------------------------------------------------------------\u001b[0m\n' +
      'ZeroDivisionError                         Traceback (most recent call last)\nCell In[6], line 1\n----> 1 1/0\n\nZeroDivisionError: division by zero';
    const failed = compactResult('execute', {
      ...fullExecute,
      status: 'error',
      result: null,
      error: { kind: 'exception', type: 'ZeroDivisionError', message: 'division by zero', message_truncated: false, traceback, traceback_truncated: false },
    });
    expect(failed).toEqual({
      status: 'error',
      execution_count: 2,
      error: { kind: 'exception', type: 'ZeroDivisionError', message: 'division by zero', traceback: 'Cell In[6], line 1\n----> 1 1/0\n\nZeroDivisionError: division by zero' },
    });
  });

  it('leaves out totals equal to the items returned, empty partitions and default status fields', () => {
    expect(compactResult('list', { functions: [{ name: 'f', signature: '()', signature_truncated: false, module: null, doc: null, doc_truncated: false }], total: 1, truncated: false })).toEqual({
      functions: [{ name: 'f', signature: '()' }],
    });
    expect(compactResult('search', { matches: [], total: 3, truncated: true })).toEqual({ matches: [], total: 3, truncated: true });
    expect(compactResult('remove', { removed: ['x'], refused: [], unknown: [] })).toEqual({ removed: ['x'] });
    expect(compactResult('reset', { removed: ['a'], removed_count: 1, removed_truncated: false, execution_count: 4 })).toEqual({ removed: ['a'], execution_count: 4 });
    expect(compactResult('reset', { removed: ['a'], removed_count: 9, removed_truncated: true, execution_count: 4 })).toEqual({
      removed: ['a'],
      removed_count: 9,
      removed_truncated: true,
      execution_count: 4,
    });
    expect(compactResult('runtime_status', { state: 'busy', epoch: 1, queue_depth: 0, active: true, last_interruption: null, error: null, dynamic_tools: 0 })).toEqual({
      state: 'busy',
      epoch: 1,
      active: true,
    });
  });
});

describe('shownRuntime', () => {
  it('says nothing on a quiet success, the epoch when it changed, and a long wait', () => {
    expect(shownRuntime(meta(), false)).toBeUndefined();
    expect(shownRuntime(meta({ epoch: 2 }), true)).toEqual({ epoch: 2 });
    expect(shownRuntime(meta({ queueWaitMs: LONG_QUEUE_WAIT_MS }), false)).toEqual({ sequence: 3, queue_wait_ms: LONG_QUEUE_WAIT_MS });
    expect(shownRuntime(meta({ queueWaitMs: 12 }), false, 'queue_timeout')).toEqual({ sequence: 3, queue_wait_ms: 12 });
  });

  it('shows everything the seed names for an interrupted operation', () => {
    expect(shownRuntime(meta({ interruption: 'cancelled', namespace: 'preserved', durationMs: 300 }), false)).toEqual({
      request_id: 7,
      sequence: 3,
      epoch: 1,
      queue_wait_ms: 0,
      duration_ms: 300,
      interruption: 'cancelled',
      namespace: 'preserved',
    });
  });

  it('a local worker (no shared facts) carries none of the shared kernel fields', () => {
    expect(Object.keys(runtimeMeta(meta({ interruption: 'timeout', namespace: 'preserved' }))).sort()).toEqual(
      ['duration_ms', 'epoch', 'interruption', 'namespace', 'queue_wait_ms', 'request_id', 'sequence'],
    );
  });

  it('on a shared kernel: withdrawn, ran and interrupted, and stopped by the person are three blocks', () => {
    const withdrawn = shownRuntime(meta({ interruption: 'timeout', namespace: 'preserved', shared: { ran: false, waitedMs: 2000, behind: 'person', stoppedBy: null } }), false);
    expect(withdrawn).toMatchObject({ interruption: 'timeout', ran: false, kernel_wait_ms: 2000, waited_behind: 'person', stopped_by: null });
    const ran = shownRuntime(meta({ interruption: 'timeout', namespace: 'preserved', shared: { ran: true, waitedMs: 0, behind: null, stoppedBy: null } }), false);
    expect(ran).toMatchObject({ interruption: 'timeout', ran: true, kernel_wait_ms: 0, waited_behind: null, stopped_by: null });
    // Nobody here interrupted it: no interruption, yet the whole block shows who stopped it.
    const stopped = shownRuntime(meta({ shared: { ran: true, waitedMs: 0, behind: null, stoppedBy: 'other_client' } }), false);
    expect(stopped).toMatchObject({ interruption: null, ran: true, stopped_by: 'other_client' });
    // A success after a wait behind another agent says nothing new to the model: the wait is in _meta only.
    const waited = meta({ shared: { ran: true, waitedMs: 1500, behind: 'agent', stoppedBy: null } });
    expect(shownRuntime(waited, false)).toBeUndefined();
    expect(runtimeMeta(waited)).toMatchObject({ ran: true, kernel_wait_ms: 1500, waited_behind: 'agent', stopped_by: null });
  });
});

describe('cleanTraceback', () => {
  it('keeps a traceback without a banner as it is', () => {
    expect(cleanTraceback('  File "x.py", line 1\n    1/0\nZeroDivisionError: division by zero')).toBe('  File "x.py", line 1\n    1/0\nZeroDivisionError: division by zero');
  });
});
