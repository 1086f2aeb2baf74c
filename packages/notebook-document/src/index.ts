// Any new export here becomes public API of @ipython-mcp/notebook-document.
export { AGENT_METADATA_KEY, AGENT_TAG, AgentCells, DEFAULT_CELL_OUTPUT_CHARS, agentCellHeader } from './agent-cells.js';
export type { AgentCellEnd, AgentCellsCounts, AgentCellsOptions, AgentOutput, Bundle } from './agent-cells.js';
export { NotebookMirror, agentDisplayName } from './notebook-mirror.js';
export type { CellEvents, NotebookMirrorOptions, NotebookMirrorStatus } from './notebook-mirror.js';
export { NOTEBOOK_OUTPUT_URI_PREFIX, notebookImage, renderNotebook, renderOutput, textOf } from './notebook-view.js';
export { DEFAULT_SYNC_TIMEOUT_MS, SharedNotebookError, agentUser, openSharedNotebook } from './shared-notebook.js';
export type { SharedNotebook, SharedNotebookOptions, SharedNotebookState } from './shared-notebook.js';
export { agentMarks, readCells, renderCellJson } from './notebook-cells-read.js';
export type { AgentMarks, CellJson, CellsPage, ReadCellsOptions } from './notebook-cells-read.js';
export { NotebookEditError, applyEditsToCells, planEdits, sourceSpan, withChangedMark } from './notebook-edits.js';
export type { EditContext, EditPlace, EditPlan, EditRefusal, EditStep, NotebookEdit } from './notebook-edits.js';
export { AGENT_EDIT_ORIGIN, TYPING_WINDOW_MS, TypingTracker, applyEditsToShared } from './notebook-shared-edits.js';
export { CellRunClaims } from './cell-run-claims.js';
export { NotebookFileError, readNotebookFile, writeNotebookFile } from './notebook-contents.js';
export type { NotebookFile, NotebookFileOptions } from './notebook-contents.js';
