import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WORKER_LIMITS, workerLimits } from '@ipython-mcp/protocol';
import { describe, expect, it } from 'vitest';
import { IPYTHON_RUNTIME_NAMES } from './runtime-names.js';
import { SETTING_DEFINITIONS, SettingsError, defaultSettings, resolveSettings, runtimeOptionsFromSettings } from './settings.js';

const fixture = JSON.parse(readFileSync(fileURLToPath(new URL('../../../../fixtures/protocol/runtime-names.json', import.meta.url)), 'utf8')) as {
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

const workerLimitsFixture = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../../fixtures/protocol/worker-limits.json', import.meta.url)), 'utf8'),
) as { limits: Record<string, { default: number; env: string; description: string; summary: string; minimum: number; maximum?: number }> };

describe('the worker-limit settings from worker-limits.json', () => {
  const limits = Object.entries(workerLimitsFixture.limits);

  it('are one setting each, with the fixture\'s env name, texts, default and bounds', () => {
    for (const [name, limit] of limits) {
      const definition = SETTING_DEFINITIONS.find((candidate) => candidate.env === limit.env);
      expect(definition, name).toMatchObject({
        kind: 'count',
        flag: `--${name.replaceAll('_', '-')}`,
        defaultValue: limit.default,
        description: limit.description,
        summary: limit.summary,
        minimum: limit.minimum,
        maximum: limit.maximum ?? Number.MAX_SAFE_INTEGER,
      });
      expect(workerLimits(defaultSettings())[name], name).toBe(limit.default);
    }
  });

  it.each(limits)('%s refuses a value outside its bounds and takes one inside', (name, limit) => {
    expect(() => resolveSettings({ [limit.env]: String(limit.minimum - 1) })).toThrow(SettingsError);
    expect(resolveSettings({ [limit.env]: String(limit.minimum) })).toMatchObject({ [SETTING_DEFINITIONS.find((item) => item.env === limit.env)!.key]: limit.minimum });
    const maximum = limit.maximum;
    if (maximum !== undefined) {
      expect(() => resolveSettings({ [limit.env]: String(maximum + 1) })).toThrow(/at most/);
      expect(() => resolveSettings({}, { [`--${name.replaceAll('_', '-')}`]: String(maximum + 1) })).toThrow(SettingsError);
    }
  });

  it('reach the worker as configured: runtimeOptionsFromSettings passes every limit through', () => {
    const settings = { ...defaultSettings(), maxResults: 7, maxIpcMessageBytes: 65_536 };
    expect(runtimeOptionsFromSettings(settings).worker?.limits).toEqual({ ...DEFAULT_WORKER_LIMITS, maxResults: 7, maxIpcMessageBytes: 65_536 });
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
