// Any new export here becomes public API of ipython-code-mode.
export { ToolApprovalRefusedError, splitTools, toToolDefinition } from './ai-sdk-tools.js';
export type { SplitTools, ToolApprover, ToolSelector } from './ai-sdk-tools.js';
export { askThroughApproval, capabilityConsentGate } from './consent.js';
export type { ApprovalAnswer, ApprovalRequest, ApproveToolCall, CodeModeConsentOptions } from './consent.js';
export { RUN_CODE_TOOL_NAME, ipythonCodeMode, modelOutput, runCodeTool } from './ipython-code-mode.js';
export type { IPythonCodeMode, IPythonCodeModeOptions, ModelOutput, RunCodeOutput } from './ipython-code-mode.js';
export { ACTIVE_CONTEXT, RUN_CODE_CALL_ID_ATTRIBUTE, reportNestedCalls, withActiveContext } from './nested-call-telemetry.js';
export type { NestedCallReporting } from './nested-call-telemetry.js';
export { McpToolError, isMcpResult, mcpResultValue, mcpToolDefinitions } from './mcp-tools.js';
export type { McpClientLike, McpToolInfo, McpToolOptions } from './mcp-tools.js';
// The engine's kernel, errors and plain tool types, so users need only this package.
// Every public error class of the engine is re-exported (error-exports.test.ts compares the two lists).
export {
  CodeExecutionError,
  CodeMode,
  CodeModeCancelledError,
  CodeModeError,
  CodeModeMemoryLimitError,
  CodeModeTimeoutError,
  ConsentGate,
  DEFAULT_DESCRIPTION_BUDGET,
  IPythonKernel,
  InvalidCodeModeOptionsError,
  InvalidRunCodeInputError,
  KernelClosedError,
  KernelDiedError,
  KernelOperationError,
  KernelStartupError,
  MaxRetriesExceededError,
  ToolApprovalRequiredError,
  ToolInputError,
  ToolNotFoundError,
  ToolResultError,
  isModelRetry,
} from '@ipython-mcp/code-mode';
export type {
  CodeModeErrorCode,
  ConsentDecision,
  PolicySettings,
  ToolAnnotations,
  ToolPolicy,
  MemoryLimitOutcome,
  TimeoutOutcome,
  CodeModeReturn,
  ContentPart,
  FunctionGroup,
  IPythonKernelOptions,
  JsonSchema,
  NestedCallContext,
  NestedToolCall,
  NestedToolReturn,
  RunCodeInput,
  ToolDefinition,
} from '@ipython-mcp/code-mode';
