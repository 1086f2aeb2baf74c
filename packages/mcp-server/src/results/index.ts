// The results room: how a tool result is written.
// What other rooms and the package's index use of it: they import the room through this file only.
export { COMMON, FUNCTION_DEFAULTS, INSPECT_DEFAULTS, MATCH_DEFAULTS, REGISTRATION_DEFAULTS, RELOAD_ITEM_DEFAULTS, REMOVE_DEFAULTS, RESET_DEFAULTS, STATUS_DEFAULTS, UNREGISTER_DEFAULTS, compactExecute, compactInspection, compactListingOf, compactReload, compactReset, compactValue, compactWith } from './compact-result.js';
export { COMPACT_EXECUTE, compactOutputSchema, flag, listingResult, trueFlagsSchema, valueResult, withDefaults, withRunningShape } from './output-schemas.js';
export type { ResultRules } from './result-rules.js';
export { executeText, failureText, jsonText, valueText } from './result-text.js';
export { pruneSchema } from './schema-prune.js';
export { DYNAMIC_TOOL_RESULT, ResultWriter } from './tool-result.js';
