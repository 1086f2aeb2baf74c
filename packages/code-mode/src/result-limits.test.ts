import { afterEach, describe, expect, it } from 'vitest';
import { survivors, testPython } from '../test/python.js';
import { KERNEL_IPC_LIMIT_BYTES } from './kernel-ipc-limit.js';
import { kernelRuntimeOptions } from './kernel.js';
import { MAX_RESULT_BYTES } from './result-cut.js';
import { MAX_OUTPUT_CHARS, type CodeModeReturn } from './return-value.js';
import { CodeMode } from './run-code.js';

const modes: CodeMode[] = [];

function valueOf(value: CodeModeReturn): unknown {
  expect(value.kind).toBe('value');
  return value;
}

function codeMode(): CodeMode {
  const created = new CodeMode({ kernelOptions: { python: testPython() } });
  modes.push(created);
  return created;
}

afterEach(async () => {
  const pids = modes.flatMap((mode) => mode.kernel?.workerPids() ?? []);
  await Promise.all(modes.splice(0).map((mode) => mode.close()));
  expect(await survivors(pids)).toEqual([]);
});

describe('results bounded by bytes, with a real kernel', () => {
  it('sizes the kernel IPC limit for the worst reply, and never cuts results by item count first', () => {
    const limits = kernelRuntimeOptions(60_000).worker?.limits ?? {};
    const worst = MAX_OUTPUT_CHARS * 6 + MAX_RESULT_BYTES * 4 + 50 * 2 * 1024 * 1024 + (limits.maxTracebackChars ?? 0) * 4;
    expect(limits.maxIpcMessageBytes).toBe(KERNEL_IPC_LIMIT_BYTES);
    expect(KERNEL_IPC_LIMIT_BYTES).toBeGreaterThan(worst);
    expect(limits.maxResults).toBeGreaterThanOrEqual(MAX_RESULT_BYTES);
  });

  it('returns a list of 50,000 ints whole', async () => {
    const result = await codeMode().runCode({ code: 'list(range(50_000))' });
    expect(result.return).toEqual({ kind: 'value', value: Array.from({ length: 50_000 }, (_, index) => index) });
  });

  it('cuts a result over 10 MiB to fit and tells the model exactly how much was dropped', async () => {
    // 3,000,000 items of "xxx" take 6 bytes each with the comma: 1,747,626 fit in 10 MiB after the brackets.
    const result = await codeMode().runCode({ code: "['xxx'] * 3_000_000" });
    expect(result.return.kind).toBe('value');
    const { output, result: kept } = (valueOf(result.return) as { value: { output: string; result: string[] } }).value;
    const fit = Math.floor((MAX_RESULT_BYTES - 2 + 1) / 6);
    expect(kept).toHaveLength(fit);
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(output).toBe(
      `[result cut: it is larger than the 10,485,760 bytes (10 MiB) of JSON run_code returns; dropped: ${(3_000_000 - fit).toLocaleString('en-US')} ` +
        'more list items or dict entries. Return a slice, a summary, or the nested part itself to see the rest.]\n',
    );
  });

  it('cuts a long string result by bytes and counts the characters dropped', async () => {
    const result = await codeMode().runCode({ code: "'é' * (6 * 1024 * 1024)" });
    const { output, result: kept } = (valueOf(result.return) as { value: { output: string; result: string } }).value;
    // Two bytes a character, and the two quotes.
    expect(kept).toHaveLength((MAX_RESULT_BYTES - 2) / 2);
    expect(output).toContain(`dropped: ${(6 * 1024 * 1024 - (MAX_RESULT_BYTES - 2) / 2).toLocaleString('en-US')} characters at the ends of strings.`);
  });

  it('says when a deep result was cut at the depth limit', async () => {
    const result = await codeMode().runCode({ code: 'deep = 0\nfor _ in range(40):\n    deep = [deep]\ndeep' });
    const { output } = (valueOf(result.return) as { value: { output: string } }).value;
    expect(output).toBe('[result cut: 1 container nested deeper than 32 levels was replaced with "…". Return a slice, a summary, or the nested part itself to see the rest.]\n');
  });

  it('caps printed output at 10 MiB with the exact count of what was dropped', async () => {
    const result = await codeMode().runCode({ code: "print('y' * (12 * 1024 * 1024), end='')\n7" });
    const { output, result: value } = (valueOf(result.return) as { value: { output: string; result: number } }).value;
    expect(value).toBe(7);
    expect(output.slice(0, MAX_OUTPUT_CHARS)).toBe('y'.repeat(MAX_OUTPUT_CHARS));
    expect(output.slice(MAX_OUTPUT_CHARS)).toBe(
      '\n[output truncated: 2,097,152 more characters were dropped; run_code keeps the first 10,485,760 characters (10 MiB) of printed output]\n',
    );
  });
});
