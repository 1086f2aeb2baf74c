import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IPYTHON_RUNTIME_NAMES } from './runtime-names.js';
import { SettingsError, resolveSettings } from './settings.js';

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
