// The tools room: the tool pipeline: definitions, listing, the caller, the dynamic catalog, detached cells and tasks.
// What other rooms and the package's index use of it: they import the room through this file only.
export { withTimeoutProperty } from './call-deadline.js';
export { CellTasks, TASKS_CAPABILITY, runsAsTask, withTaskSupport } from './detached/cell-tasks.js';
export { CellStop, DETACH_ARGUMENT, stoppedBy, takesOwnDetach, withDetachProperty } from './detached/detached-cells.js';
export { RequestJobs } from './detached/request-jobs.js';
export { DynamicCatalog } from './dynamic-catalog.js';
export type { DiscoverResult, Registration } from './dynamic-catalog.js';
export { toMcpTool } from './published-tools.js';
export { RelistGate } from './relist-gate.js';
export { STABLE_TOOLS, STABLE_TOOL_NAMES, findStableTool } from './stable-tools.js';
export type { StableToolName } from './stable-tools.js';
export { RestoreFollowUp, stateFileStatus } from './state-notice.js';
export { ToolCaller } from './tool-caller.js';
export type { CatalogEffect, StableToolDefinition } from './tool-definition.js';
export { NOTEBOOK_TOOL_NAME, NotebookToolError, notebookTools } from './notebook-tool.js';
export type { CellToRun, NotebookActions, NotebookToolEdit, RunSelection } from './notebook-tool.js';
