// Any new export here becomes public API of @ipython-mcp/notebook-document.
export { AGENT_METADATA_KEY, AGENT_TAG, AgentCells, DEFAULT_CELL_OUTPUT_CHARS, agentCellHeader } from './agent-cells.js';
export type { AgentCellEnd, AgentCellsCounts, AgentCellsOptions, AgentOutput, Bundle } from './agent-cells.js';
export { NotebookMirror, agentDisplayName } from './notebook-mirror.js';
export type { CellEvents, NotebookMirrorOptions, NotebookMirrorStatus } from './notebook-mirror.js';
export { NOTEBOOK_OUTPUT_URI_PREFIX, notebookImage, renderNotebook } from './notebook-view.js';
export { DEFAULT_SYNC_TIMEOUT_MS, SharedNotebookError, agentUser, openSharedNotebook } from './shared-notebook.js';
export type { SharedNotebook, SharedNotebookOptions, SharedNotebookState } from './shared-notebook.js';
