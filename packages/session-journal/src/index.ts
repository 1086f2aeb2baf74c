// Any new export here becomes public API of @ipython-mcp/session-journal.
export { codePointIndex } from './code-points.js';
export { outputsOfExecuteResult } from './execute-outputs.js';
export type { CellOutputs } from './execute-outputs.js';
export { codeCell, markdownCell, notebookMetadata, toMimeBundle } from './notebook-format.js';
export type {
  CellRecord,
  CodeCellRecord,
  DisplayDataOutput,
  ErrorOutput,
  ExecuteResultOutput,
  JournalOutput,
  MarkdownCellRecord,
  MimeBundle,
  StreamOutput,
} from './notebook-format.js';
export { ranCode, replacedNote, stoppedCells, stoppedNote } from './operation-notes.js';
export type { FailedOperation, StoppedOperation } from './operation-notes.js';
export { pythonCall, pythonLiteral, pythonString } from './python-source.js';
export { DEFAULT_JOURNAL_MAX_BYTES, SessionJournal } from './session-journal.js';
export type { JournalLogger, JournalStatus, SessionJournalOptions } from './session-journal.js';
