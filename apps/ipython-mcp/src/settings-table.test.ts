import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SETTING_DEFINITIONS } from '@ipython-mcp/mcp-server';
import { describe, expect, it } from 'vitest';
import { HTTP_SETTINGS } from './http-request.js';
import { JUPYTER_SETTINGS } from './jupyter-request.js';
import { SANDBOX_SETTINGS } from './sandbox-request.js';
import { settingsTable, withSettingsTable } from './settings-table.js';

const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');

describe('the README settings table', () => {
  it('is what the settings definitions render (run: node apps/ipython-mcp/scripts/settings-table.mjs)', () => {
    expect(withSettingsTable(readme)).toBe(readme);
  });

  it('has one row per setting, server, sandbox, HTTP and Jupyter', () => {
    const rows = settingsTable().slice(2);
    expect(rows).toHaveLength(SETTING_DEFINITIONS.length + SANDBOX_SETTINGS.length + HTTP_SETTINGS.length + JUPYTER_SETTINGS.length);
    for (const definition of [...SETTING_DEFINITIONS, ...SANDBOX_SETTINGS, ...HTTP_SETTINGS, ...JUPYTER_SETTINGS]) {
      expect(rows.filter((row) => row.startsWith(`| \`${definition.env}\``)), definition.env).toHaveLength(1);
    }
  });
});
