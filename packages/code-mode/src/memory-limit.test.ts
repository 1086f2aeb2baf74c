import { afterEach, describe, expect, it } from 'vitest';
import { survivors, testPython } from '../test/python.js';
import { CodeModeMemoryLimitError } from './errors.js';
import { IPythonKernel } from './kernel.js';
import { CodeMode } from './run-code.js';

const kernels: IPythonKernel[] = [];

afterEach(async () => {
  const pids = kernels.flatMap((kernel) => kernel.workerPids());
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
  expect(await survivors(pids)).toEqual([]);
});

describe('the kernel memory limit', () => {
  it('is checked like the other kernel options', () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 40]) {
      expect(() => new IPythonKernel({ memoryLimitMb: bad }), String(bad)).toThrow(RangeError);
    }
    expect(new IPythonKernel({ memoryLimitMb: 0 }).memoryLimitMb).toBeNull();
    expect(new IPythonKernel({ memoryLimitMb: null }).memoryLimitMb).toBeNull();
    expect(new IPythonKernel({ memoryLimitMb: 512 }).memoryLimitMb).toBe(512);
    expect(new IPythonKernel().memoryLimitMb).toBeGreaterThan(0);
  });

  it('stops a cell that passes it with CodeModeMemoryLimitError, a retry for the model, state kept', async () => {
    const kernel = new IPythonKernel({ python: testPython(), memoryLimitMb: 400 });
    kernels.push(kernel);
    const mode = new CodeMode({ kernel });
    await mode.runCode({ code: 'keep = 41' });
    const error = await mode.runCode({ code: "big = b'x' * 2**31" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CodeModeMemoryLimitError);
    expect(error).toMatchObject({ code: 'CODE_MODE_MEMORY_LIMIT', retry: true, details: { limitMb: 400, outcome: 'interrupted' } });
    expect((await mode.runCode({ code: 'keep' })).return).toEqual({ kind: 'value', value: 41 });
  });
});
