// The README's settings table, rendered from the settings definitions: the server's (SETTING_DEFINITIONS) and the
// app's sandbox and HTTP settings. scripts/settings-table.mjs writes it between the markers below; settings-table.test.ts
// fails while the README holds anything else there.
import { SETTING_DEFINITIONS, type SettingDefinition } from '@ipython-mcp/mcp-server';
import { HTTP_SETTINGS } from './http-request.js';
import { JUPYTER_SETTINGS } from './jupyter-request.js';
import { SANDBOX_SETTINGS, type SandboxSettingDefinition } from './sandbox-request.js';

/** The line before the generated table. */
export const SETTINGS_TABLE_START = '<!-- settings table: generated from the settings definitions by apps/ipython-mcp/scripts/settings-table.mjs -->';
/** The line after it. */
export const SETTINGS_TABLE_END = '<!-- end of the generated settings table -->';

const EMPTY = '—';

function serverDefault(definition: SettingDefinition): string {
  if (definition.defaultLabel !== undefined) return definition.defaultLabel;
  const value = definition.defaultValue;
  if (value === null || (Array.isArray(value) && value.length === 0)) return EMPTY;
  if (typeof value === 'object') return `\`${JSON.stringify(value)}\``;
  return String(value);
}

/** The flag is named only when it is not the env var's own spelling (`IPYTHON_MCP_STATE_FILE` is `--state`). */
function serverName(definition: SettingDefinition): string {
  const ownSpelling = `--${definition.env.slice('IPYTHON_MCP_'.length).toLowerCase().replaceAll('_', '-')}`;
  return definition.flag === ownSpelling ? `\`${definition.env}\`` : `\`${definition.env}\` (\`${definition.flag}\`)`;
}

function sandboxName(definition: SandboxSettingDefinition): string {
  const repeat = definition.single === true ? '' : ', repeatable';
  const flag = definition.placeholder === undefined ? `\`${definition.flag}\`` : `\`${definition.flag} ${definition.placeholder}\`${repeat}`;
  return `\`${definition.env}\` (${flag})`;
}

/** The table's lines: header, then every server setting, then the sandbox's. */
export function settingsTable(): string[] {
  return [
    '| variable | default | meaning |',
    '| --- | --- | --- |',
    ...SETTING_DEFINITIONS.map((definition) => `| ${serverName(definition)} | ${serverDefault(definition)} | ${definition.summary} |`),
    ...SANDBOX_SETTINGS.map((definition) => `| ${sandboxName(definition)} | ${definition.defaultLabel} | ${definition.summary} |`),
    ...HTTP_SETTINGS.map((definition) => `| ${sandboxName(definition)} | ${definition.defaultLabel} | ${definition.summary} |`),
    ...JUPYTER_SETTINGS.map((definition) => `| ${sandboxName(definition)} | ${definition.defaultLabel} | ${definition.summary} |`),
  ];
}

/** `readme` with the text between the markers replaced by the table. Throws when a marker is missing. */
export function withSettingsTable(readme: string): string {
  const lines = readme.split('\n');
  const start = lines.indexOf(SETTINGS_TABLE_START);
  const end = lines.indexOf(SETTINGS_TABLE_END);
  if (start < 0 || end < start) throw new Error(`the README needs the lines ${SETTINGS_TABLE_START} and ${SETTINGS_TABLE_END}, in that order`);
  return [...lines.slice(0, start + 1), ...settingsTable(), ...lines.slice(end)].join('\n');
}
