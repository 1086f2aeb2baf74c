import { DEFAULT_WORKER_LIMITS } from '@ipython-mcp/protocol';
import { describe, expect, it } from 'vitest';
import { defaultMemoryLimitMb } from './memory-watch.js';
import { RUNTIME_DEFAULTS, resolveRuntimeOptions } from './runtime-options.js';

describe('resolveRuntimeOptions', () => {
  it('fills every default, in ms', () => {
    const resolved = resolveRuntimeOptions({ python: 'python3' });
    expect(resolved).toMatchObject({ ...RUNTIME_DEFAULTS, limits: DEFAULT_WORKER_LIMITS, libraryPaths: [], preloadModules: [], moduleAliases: {} });
    expect(resolved.memoryLimitMb).toBe(defaultMemoryLimitMb());
  });

  it('keeps what is given: single limits over the defaults, null turns the memory guard off', () => {
    const resolved = resolveRuntimeOptions({
      python: 'python3',
      operationTimeoutMs: 250,
      memoryLimitMb: null,
      worker: { limits: { maxTextChars: 10 }, preloadModules: ['json'] },
    });
    expect(resolved.operationTimeoutMs).toBe(250);
    expect(resolved.memoryLimitMb).toBeNull();
    expect(resolved.limits).toEqual({ ...DEFAULT_WORKER_LIMITS, maxTextChars: 10 });
    expect(resolved.preloadModules).toEqual(['json']);
  });
});
