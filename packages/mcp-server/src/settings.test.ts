import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WORKER_LIMITS, workerLimits } from '@ipython-mcp/protocol';
import { describe, expect, it } from 'vitest';
import { IPYTHON_RUNTIME_NAMES } from './runtime-names.js';
import { SETTING_DEFINITIONS, SettingsError, defaultSettings, resolveSettings, runtimeOptionsFromSettings } from './settings.js';

const fixture = JSON.parse(readFileSync(fileURLToPath(new URL('../../../fixtures/protocol/runtime-names.json', import.meta.url)), 'utf8')) as {
  names: string[];
};

describe('IPython runtime names', () => {
  it('equal the shared fixture that the worker follows too', () => {
    expect([...IPYTHON_RUNTIME_NAMES].sort()).toEqual([...fixture.names].sort());
  });

  it.each(fixture.names)('a module alias may not take %s', (name) => {
    expect(() => resolveSettings({ IPYTHON_MCP_MODULE_ALIASES: JSON.stringify({ numpy: name }) })).toThrow(SettingsError);
  });
});

describe('runtimeOptionsFromSettings', () => {
  it('converts the settings once: seconds become ms, limits and paths pass through', () => {
    const settings = { ...defaultSettings(), operationTimeoutSeconds: 1.5, interruptionGraceSeconds: 0.25, workerStartupTimeoutSeconds: 3, queueWaitTimeoutSeconds: 4, maxTextChars: 77, libraryPaths: ['/lib'] };
    expect(runtimeOptionsFromSettings(settings)).toMatchObject({
      operationTimeoutMs: 1500,
      interruptionGraceMs: 250,
      startupTimeoutMs: 3000,
      queueWaitTimeoutMs: 4000,
      maxPendingOperations: settings.maxPendingOperations,
      memoryLimitMb: settings.memoryLimitMb,
      worker: { limits: { maxTextChars: 77, maxIpcMessageBytes: settings.maxIpcMessageBytes }, libraryPaths: ['/lib'] },
    });
  });
});

describe('the worker-limit settings', () => {
  it('are named after the wire names and default to the generated worker limits', () => {
    const wire = workerLimits(DEFAULT_WORKER_LIMITS);
    for (const [key, value] of Object.entries(DEFAULT_WORKER_LIMITS)) {
      const definition = SETTING_DEFINITIONS.find((candidate) => candidate.key === key);
      const wireName = Object.keys(wire).find((name) => name.replaceAll('_', '') === key.toLowerCase());
      expect(definition, key).toMatchObject({ env: `IPYTHON_MCP_${wireName?.toUpperCase()}`, defaultValue: value });
    }
  });
});
