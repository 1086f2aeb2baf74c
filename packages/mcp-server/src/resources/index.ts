// The resources room: kept outputs and the journal, and their MCP resources.
// What other rooms and the package's index use of it: they import the room through this file only.
export type { DocumentResources, DocumentTools, ExecuteCell } from './document-resources.js';
export { openJournal } from './journal-recorder.js';
export type { JournalPolicy, JournalRecorder } from './journal-recorder.js';
export { OutputResources } from './output-resources.js';
export { listResources, readResource, serveResources } from './session-resources.js';
