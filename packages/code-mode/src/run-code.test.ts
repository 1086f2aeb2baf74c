import { afterEach, describe, expect, it } from 'vitest';
import { survivors, testPython } from '../test/python.js';
import { CodeExecutionError, CodeModeCancelledError, InvalidCodeModeOptionsError, InvalidRunCodeInputError, KernelOperationError } from './errors.js';
import { IPythonKernel } from './kernel.js';
import { CodeMode, type CodeModeOptions } from './run-code.js';
import type { ToolDefinition } from './tool-functions.js';

const modes: CodeMode[] = [];
const kernels: IPythonKernel[] = [];

function codeMode(options: CodeModeOptions = {}): CodeMode {
  const created = new CodeMode({ kernelOptions: { python: testPython() }, ...options });
  modes.push(created);
  return created;
}

function tool(name: string, execute: (input: Record<string, unknown>) => unknown): ToolDefinition {
  return { name, inputSchema: { type: 'object' }, execute: execute as ToolDefinition['execute'] };
}

afterEach(async () => {
  const pids = [...modes, ...kernels].flatMap((item) => (item instanceof CodeMode ? (item.kernel?.workerPids() ?? []) : item.workerPids()));
  await Promise.all(modes.splice(0).map((mode) => mode.close()));
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
  expect(await survivors(pids)).toEqual([]);
});

describe('CodeMode', () => {
  it('turns tool values into JSON for the kernel and refuses what has none', async () => {
    const mode = codeMode({
      tools: [
        tool('big', () => {
          const cycle: Record<string, unknown> = {};
          cycle.self = cycle;
          return cycle;
        }),
        tool('nothing', () => undefined),
        tool('when', () => new Date(Date.UTC(2020, 0, 2))),
        tool('nested', (input) => ({ echo: input, list: [1, { deep: true }] })),
      ],
    });
    const code =
      "try:\n    big()\nexcept ToolCallError as error:\n    print(error)\n[nothing(), when(), nested(a=(1, 2), b={'c': None})]";
    const result = await mode.runCode({ code });
    expect(result.return).toEqual({
      kind: 'value',
      value: {
        output: 'big returned a value with no JSON form (Converting circular structure to JSON)\n',
        result: [null, '2020-01-02T00:00:00.000Z', { echo: { a: [1, 2], b: { c: null } }, list: [1, { deep: true }] }],
      },
    });
    expect(result.metadata.toolReturns.map((entry) => ('error' in entry ? `error:${entry.toolName}` : entry.toolName))).toEqual([
      'error:big',
      'nothing',
      'when',
      'nested',
    ]);
  });

  it('keeps kernels shared by different tool sets consistent', async () => {
    const kernel = new IPythonKernel({ python: testPython() });
    kernels.push(kernel);
    const first = codeMode({ kernel, tools: [tool('alpha', () => 'a')] });
    const second = codeMode({ kernel, tools: [tool('beta', () => 'b')] });
    await first.runCode({ code: 'saved = alpha\nsaved()' });
    const result = await second.runCode({
      code: "try:\n    saved()\nexcept ToolCallError as error:\n    print(error)\n['alpha' in dir(), beta()]",
    });
    expect(result.return).toEqual({
      kind: 'value',
      value: { output: 'no tool named "alpha" is available to this code\n', result: [false, 'b'] },
    });
    expect((await first.runCode({ code: 'alpha()' })).return).toEqual({ kind: 'value', value: 'a' });
  });

  it('cancels running code through its signal, keeping the kernel state', async () => {
    const mode = codeMode({ timeout: null });
    await mode.runCode({ code: 'survivor = 7' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    await expect(mode.runCode({ code: 'import time\ntime.sleep(60)' }, { signal: controller.signal })).rejects.toBeInstanceOf(CodeModeCancelledError);
    expect((await mode.runCode({ code: 'survivor' })).return).toEqual({ kind: 'value', value: 7 });
    expect(mode.failures).toBe(0);
  });

  it('counts bad run_code input as a retry and validates its options', async () => {
    const mode = codeMode({ maxCodeRetries: 0 });
    await expect(mode.runCode({ source: 'x' })).rejects.toThrow(/giving up.*run_code needs `code`/);
    expect(mode.retriesExhausted).toBe(true);
    expect(() => new CodeMode({ maxCodeRetries: -1 })).toThrow(InvalidCodeModeOptionsError);
    expect(() => new CodeMode({ maxCodeRetries: 1, maxRetries: 2 })).toThrow(InvalidCodeModeOptionsError);
    expect(new CodeMode({ maxRetries: 5 }).maxCodeRetries).toBe(5);
    expect(() => new CodeMode({ maxToolCalls: 1.5 })).toThrow(InvalidCodeModeOptionsError);
    expect(() => new CodeMode({ timeout: 0 })).toThrow(InvalidCodeModeOptionsError);
    expect(new InvalidRunCodeInputError('x').retry).toBe(true);
  });

  it('counts failures in a row: a success starts the count again', async () => {
    const mode = codeMode({ maxCodeRetries: 1 });
    const fail = (): Promise<unknown> => mode.runCode({ code: '1 / 0' });
    for (let round = 0; round < 3; round += 1) {
      await expect(fail()).rejects.toThrow(/ZeroDivisionError/);
      expect(mode.failures).toBe(1);
      await mode.runCode({ code: '1' });
      expect(mode.failures).toBe(0);
    }
    await expect(fail()).rejects.toThrow(/ZeroDivisionError/);
    await expect(fail()).rejects.toThrow(/run_code failed 2 times in a row, more than maxCodeRetries \(1\) allows; giving up/);
    expect(mode.retriesExhausted).toBe(true);
  });

  it("tells a library's error as execute does: the user's line, library frames one line each, the exception", async () => {
    const mode = codeMode();
    await mode.runCode({ code: "import pandas as pd\nframe = pd.DataFrame({'a': [1, 2]})" });
    const failure = await mode.runCode({ code: "frame['nope']" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(CodeExecutionError);
    const message = (failure as CodeExecutionError).message;
    expect(message).toMatch(/^The code raised KeyError: 'nope'/);
    expect(message).toMatch(/^----> 1 frame\['nope'\]$/m);
    expect(message).toMatch(/^pandas\/core\/frame\.py:\d+ in __getitem__$/m);
    expect(message).toMatch(/^KeyError: 'nope'$/m);
    expect(message).toContain('The above exception was the direct cause of the following exception:');
    expect(message).not.toContain('site-packages');
    expect(message).not.toContain('Could not get source');
    expect(message).not.toMatch(/^-{20,}$/m);
    // The worker sends the unfolded text beside; Code Mode's model reads only the folded form.
    expect(message.length, message).toBeLessThanOrEqual(900);
  });

  it('returns a result that would not fit one message cut to 10 MiB, not as a failure', async () => {
    const mode = codeMode();
    const result = await mode.runCode({ code: "['x' * (10 * 1024 * 1024)] * 30" });
    const value = (result.return as { kind: 'value'; value: { output: string; result: string[] } }).value;
    expect(value.result).toEqual(['x'.repeat(10 * 1024 * 1024 - 4)]);
    expect(value.output).toContain('dropped: 29 more list items or dict entries and 4 characters at the ends of strings');
    expect(mode.failures).toBe(0);
    expect(new KernelOperationError('x', { wireCode: 'message_too_large' }, true).retry).toBe(true);
  });
});

describe('run_code timeout_seconds', () => {
  it('sets one call\'s deadline within the timeout option, and refuses what is outside it before running', async () => {
    const mode = codeMode({ timeout: 5000, maxCodeRetries: 20 });
    expect(mode.timeoutSecondsSchema).toEqual({ type: 'number', exclusiveMinimum: 0, maximum: 5 });
    const started = performance.now();
    await expect(mode.runCode({ code: 'import time\nran = 1\ntime.sleep(30)', timeout_seconds: 0.5 })).rejects.toThrow(/0.5 s timeout/);
    expect(performance.now() - started).toBeLessThan(5000 + 10_000);
    for (const bad of [0, -1, Number.NaN, '1', 5.5, null]) {
      await expect(mode.runCode({ code: 'ran = 2', timeout_seconds: bad }), String(bad)).rejects.toThrow(InvalidRunCodeInputError);
    }
    expect((await mode.runCode({ code: 'ran', timeout_seconds: 5 })).return).toEqual({ kind: 'value', value: 1 });
    expect(codeMode({ timeout: null }).maxTimeoutSeconds).toBe(2_147_483);
  }, 60_000);
});
