import { DEFAULT_WORKER_LIMITS } from '@ipython-mcp/protocol';
import { describe, expect, it } from 'vitest';
import { defaultMemoryLimitMb } from './memory-watch.js';
import { RUNTIME_DEFAULTS, resolveRuntimeOptions, statePathFor } from './runtime-options.js';

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

describe('statePathFor', () => {
  it('puts a runtime name before the extension; the unnamed runtime keeps the path', () => {
    expect(statePathFor('/data/ns.state', undefined)).toBe('/data/ns.state');
    expect(statePathFor('/data/ns.state', '')).toBe('/data/ns.state');
    expect(statePathFor('/data/ns.state', 'alpha')).toBe('/data/ns.alpha.state');
    expect(statePathFor('/data/ns', 'alpha')).toBe('/data/ns.alpha');
    expect(statePathFor('/data/.state', 'alpha')).toBe('/data/.state.alpha');
    expect(statePathFor('/data.d/ns', 'alpha')).toBe('/data.d/ns.alpha');
    expect(statePathFor('relative.state', 'b')).toBe('relative.b.state');
  });

  it('gives distinct names distinct files in the same directory', () => {
    const names = ['a', 'b', 'a.b', 'default', 'x-1'];
    const paths = names.map((name) => statePathFor('/data/ns.state', name));
    expect(new Set(paths).size).toBe(names.length);
    for (const path of paths) expect(path.startsWith('/data/ns.')).toBe(true);
  });
});
