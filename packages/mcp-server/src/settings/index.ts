// The settings room: the env vars and flags.
// What other rooms and the package's index use of it: they import the room through this file only.
export { CLIENT_TOKEN_CAP, MAX_TIMEOUT_SECONDS, SETTING_DEFINITIONS, SettingsError, defaultSettings, resolveSettings, runtimeOptionsFromSettings } from './settings.js';
export type { SettingDefinition, SettingKind, Settings } from './settings.js';
