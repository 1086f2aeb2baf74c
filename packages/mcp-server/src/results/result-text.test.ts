import { describe, expect, it } from 'vitest';
import { executeText, failureText, valueText } from './result-text.js';

describe('executeText', () => {
  it('reads like a Python session', () => {
    expect(executeText({ execution_count: 1 })).toBe('In [1]: ok');
    expect(executeText({ execution_count: 4, stdout: 'step 0\nstep 1\n', result: { value: 3 } })).toBe('step 0\nstep 1\nOut[4]: 3');
    expect(executeText({ execution_count: 2, stderr: 'warn\n' })).toBe('[stderr]\nwarn\nIn [2]: ok');
    expect(executeText({ execution_count: 5, result: { kind: 'repr', repr: '{1, 2}' } })).toBe('Out[5]: {1, 2}');
  });

  it('states every flag: truncation, omitted counts, displays, escaped text, runtime', () => {
    const text = executeText({
      execution_count: 3,
      stdout: 'xxx',
      stdout_omitted_chars: 1234,
      truncated: { stdout: true, result: true },
      result: { value: '10', encoded: { $: 'int' } },
      displays: [{ data: { 'text/plain': '<Figure>', 'image/png': '[image 1: image/png, 8 base64 characters, returned as MCP image content]' }, truncated: true }],
      displays_omitted: 2,
      escaped: ['stdout'],
      runtime: { epoch: 2 },
    });
    expect(text.split('\n')).toEqual([
      'xxx',
      '[stdout truncated: 1,234 characters omitted]',
      '[display 1, truncated]',
      '<Figure>',
      'image/png: [image 1: image/png, 8 base64 characters, returned as MCP image content]',
      '[2 more displays omitted]',
      'Out[3]: 10',
      '[value written exactly above; in structured content as strings: $ int]',
      '[value truncated]',
      '[escaped text (lone surrogates as \\udcXX) in: stdout]',
      '[runtime: epoch 2]',
    ]);
  });

  it('shows a failed cell as its traceback, and the message when the traceback lacks it', () => {
    const traceback = 'Cell In[6], line 1\n----> 1 1/0\n\nZeroDivisionError: division by zero';
    expect(executeText({ status: 'error', execution_count: 6, error: { kind: 'exception', type: 'ZeroDivisionError', message: 'division by zero', traceback } })).toBe(
      `In [6] raised ZeroDivisionError\n${traceback}`,
    );
    expect(
      executeText({ status: 'error', execution_count: 7, error: { kind: 'syntax', type: 'SyntaxError', message: 'invalid syntax', traceback: '', filename: '<cell>', lineno: 1 } }),
    ).toBe('In [7] did not compile (SyntaxError)\nSyntaxError: invalid syntax\n[in <cell>, line 1]');
  });
});

describe('valueText and failureText', () => {
  it('writes a call result as Python and a failure as code, message, advice and metadata', () => {
    expect(valueText({ value: { a: [1, null] } })).toBe("{'a': [1, None]}");
    expect(valueText({ value: 'x', truncated: true })).toBe("'x'\n[value truncated]");
    expect(failureText({ error: { code: 'runtime_busy', message: 'the queue is full', retryable: true, retry_after_ms: 50 } })).toBe(
      'error runtime_busy: the queue is full\n[retryable, after 50 ms]',
    );
    expect(
      failureText({
        error: { code: 'operation_timeout', message: 'deadline passed', retryable: false, details: { timeout_ms: 1000 } },
        runtime: { request_id: 3, sequence: 2, epoch: 1, queue_wait_ms: 0, duration_ms: 1001, interruption: 'timeout', namespace: 'preserved' },
      }),
    ).toBe(
      'error operation_timeout: deadline passed\n[not retryable]\n[details: {"timeout_ms":1000}]\n' +
        '[runtime: request_id 3, sequence 2, epoch 1, queue_wait_ms 0, duration_ms 1001, interruption timeout, namespace preserved]',
    );
  });
});

describe('a cell another client of the kernel stopped', () => {
  it('says so in a sentence beside the runtime note', () => {
    const text = executeText({
      execution_count: 4,
      error: { type: 'KeyboardInterrupt', message: '', traceback: 'KeyboardInterrupt' },
      runtime: { interruption: null, ran: true, stopped_by: 'other_client' },
    });
    expect(text).toContain('[runtime: interruption none, ran true, stopped_by other_client]');
    expect(text).toContain("[another client of the kernel stopped this cell (the person's stop button in Jupyter); ipython-mcp sent no interrupt]");
  });
});

describe('executeText of a head-and-tail stream', () => {
  it('puts the note where the characters were cut out and names the spill file', () => {
    const text = executeText({
      execution_count: 3,
      stdout: 'head\ntail\n',
      stdout_omitted_chars: 990,
      stdout_omitted_at: 5,
      stdout_spill: '/tmp/ipython-mcp-output-x/1-cell3-stdout.txt',
      truncated: { stdout: true },
    });
    expect(text.split('\n')).toEqual([
      'head',
      '[stdout truncated: 990 characters omitted here]',
      'tail',
      '[whole stdout in /tmp/ipython-mcp-output-x/1-cell3-stdout.txt; read it with execute, e.g. open(path).read()[-5000:]]',
      'In [3]: ok',
    ]);
  });

  it('counts the cut position in code points, as the worker does', () => {
    const text = executeText({ execution_count: 5, stdout: '😀😀ab', stdout_omitted_chars: 3, stdout_omitted_at: 2, truncated: { stdout: true } });
    expect(text.split('\n').slice(0, 3)).toEqual(['😀😀', '[stdout truncated: 3 characters omitted here]', 'ab']);
  });

  it('says when the spill itself was capped', () => {
    const text = executeText({
      execution_count: 4,
      stderr: 'ab',
      stderr_omitted_chars: 10,
      stderr_omitted_at: 1,
      stderr_spill: '/s/e.txt',
      stderr_spill_omitted_chars: 1234,
      truncated: { stderr: true },
    });
    expect(text).toContain('[stderr]\na\n[stderr truncated: 10 characters omitted here]\nb');
    expect(text).toContain('[start of stderr (all but its last 1,234 characters: spill cap) in /s/e.txt;');
  });

  it("says why a kernel's spill file was not all fetched", () => {
    const text = executeText({
      execution_count: 4,
      stdout: 'ab',
      stdout_omitted_chars: 10,
      stdout_omitted_at: 1,
      stdout_spill: '/s/o.txt',
      stdout_spill_omitted_chars: 7,
      stdout_spill_cut: "5 of its 12 bytes came: the kernel's connection ended",
      truncated: { stdout: true },
    });
    expect(text).toContain(
      "[start of stdout (all but its last 7 characters: the kernel's file was not all fetched: 5 of its 12 bytes came: the kernel's connection ended) in /s/o.txt;",
    );
  });
});
