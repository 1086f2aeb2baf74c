// Code Mode errors are recognised by marker, not by prototype: two copies of the package (a bundled app beside a
// dependency's copy) each have their own classes, so `instanceof` across them fails, and `isInstance` must not.
import { describe, expect, it } from 'vitest';
import * as errors from './errors.js';

type ErrorModule = typeof errors;

/** A second, separate copy of errors.ts: a query string makes Vite load the file again as another module. */
async function secondCopy(): Promise<ErrorModule> {
  const specifier = './errors.js?second-copy'; // a variable: TypeScript has no declaration for the query form
  return (await import(/* @vite-ignore */ specifier)) as ErrorModule;
}

/** One instance of every exported error class, made by `module`'s own classes. */
function samples(module: ErrorModule) {
  const cause = new module.CodeModeCancelledError();
  return {
    CodeExecutionError: new module.CodeExecutionError('m', { errorType: 'ValueError', executionCount: 1 }),
    CodeModeTimeoutError: new module.CodeModeTimeoutError('m', { timeoutMs: 1, outcome: 'interrupted' }),
    CodeModeMemoryLimitError: new module.CodeModeMemoryLimitError('m', { limitMb: 1, outcome: 'restarted' }),
    KernelDiedError: new module.KernelDiedError('m', { exitCode: 1, signal: null }),
    KernelStartupError: new module.KernelStartupError('m'),
    KernelClosedError: new module.KernelClosedError(),
    KernelOperationError: new module.KernelOperationError('m', { wireCode: 'internal_error' }),
    CodeModeCancelledError: cause,
    MaxRetriesExceededError: new module.MaxRetriesExceededError('m', { maxCodeRetries: 1, failures: 2 }, cause),
    InvalidCodeModeOptionsError: new module.InvalidCodeModeOptionsError('m', { option: 'timeout' }),
    InvalidRunCodeInputError: new module.InvalidRunCodeInputError('m'),
    ToolNotFoundError: new module.ToolNotFoundError('t'),
    ToolInputError: new module.ToolInputError('t', 'p'),
    ToolApprovalRequiredError: new module.ToolApprovalRequiredError('t'),
    ToolResultError: new module.ToolResultError('t', 'p'),
  } satisfies Record<string, errors.CodeModeError>;
}

/** Every exported error class, by name. */
function classes(module: ErrorModule): Record<string, typeof errors.CodeModeError> {
  return Object.fromEntries(
    Object.entries(module).filter(([, value]) => typeof value === 'function' && (value === module.CodeModeError || value.prototype instanceof module.CodeModeError)),
  ) as Record<string, typeof errors.CodeModeError>;
}

describe('Code Mode errors by marker', () => {
  it('the sample list covers every exported error class, and each class declares its own marker', () => {
    const names = Object.keys(classes(errors)).filter((name) => name !== 'CodeModeError').sort();
    expect(Object.keys(samples(errors)).sort()).toEqual(names);
    const markers = Object.values(classes(errors)).map((type) => (Object.prototype.hasOwnProperty.call(type, 'marker') ? type.marker : undefined));
    expect(markers.every((marker) => typeof marker === 'symbol')).toBe(true);
    expect(new Set(markers).size).toBe(markers.length);
  });

  it('across two copies of the package, isInstance holds where instanceof fails', async () => {
    const other = await secondCopy();
    expect(other.CodeModeError).not.toBe(errors.CodeModeError); // really a second copy
    const made = samples(other);
    const ours = classes(errors);
    for (const [name, error] of Object.entries(made)) {
      expect(error instanceof errors.CodeModeError, name).toBe(false);
      expect(errors.CodeModeError.isInstance(error), name).toBe(true);
      for (const [className, type] of Object.entries(ours)) {
        if (className === 'CodeModeError') continue;
        expect(type.isInstance(error), `${className}.isInstance(${name})`).toBe(className === name);
      }
    }
    expect(errors.isModelRetry(made.CodeModeTimeoutError)).toBe(true);
    expect(errors.isModelRetry(made.KernelClosedError)).toBe(false);
  });

  it('ordinary values and look-alikes are not Code Mode errors; the markers stay out of JSON', () => {
    for (const value of [null, undefined, 0, 'CODE_MODE_TIMEOUT', new Error('x'), { code: 'CODE_MODE_TIMEOUT', retry: true }, Object.create(null)]) {
      expect(errors.CodeModeError.isInstance(value)).toBe(false);
      expect(errors.isModelRetry(value)).toBe(false);
    }
    const error = samples(errors).ToolNotFoundError;
    expect(Object.keys(JSON.parse(JSON.stringify(error)))).toEqual(Object.keys(error));
    expect(Object.getOwnPropertySymbols(error).every((symbol) => !Object.prototype.propertyIsEnumerable.call(error, symbol))).toBe(true);
  });
});
