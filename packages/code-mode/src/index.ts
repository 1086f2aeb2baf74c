// Any new export here becomes public API of @ipython-mcp/code-mode.
export { ConsentGate, TOOL_POLICIES, consentQuestionText, consentSummary, policyFromAnnotations, resolveToolPolicy, toolLabel } from './consent.js';
export type {
  AskConsent,
  ConsentAnswer,
  ConsentDecision,
  ConsentGateOptions,
  ConsentQuestion,
  GateOutcome,
  PolicyLayer,
  PolicySettingPath,
  PolicySettings,
  PolicySource,
  PolicySubject,
  ResolvedPolicy,
  ServerPolicySettings,
  ToolAnnotations,
  ToolPolicy,
} from './consent.js';
export { CODE_INPUT_DESCRIPTION, RESTART_INPUT_DESCRIPTION, renderRunCodeDescription } from './description.js';
export type { DescriptionLayout, DescriptionLimits } from './description.js';
export {
  CodeExecutionError,
  CodeModeCancelledError,
  CodeModeError,
  CodeModeMemoryLimitError,
  CodeModeTimeoutError,
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
} from './errors.js';
export type { CodeModeErrorCode, MemoryLimitOutcome, TimeoutOutcome } from './errors.js';
export { validateJsonSchema } from './json-schema.js';
export type { JsonSchema, JsonValue } from './json-schema.js';
export { INTERRUPT_GRACE_MS, IPythonKernel, SHUTDOWN_WAIT_MS } from './kernel.js';
export { KERNEL_IPC_LIMIT_BYTES } from './kernel-ipc-limit.js';
export type { IPythonKernelOptions, KernelSession } from './kernel.js';
export type { NestedToolCall, NestedToolReturn } from './nested-call.js';
export type { KernelJournalOption } from './run-code-journal.js';
export { toPythonIdentifier } from './python-names.js';
export { MAX_RESULT_BYTES, MAX_RESULT_DEPTH } from './result-cut.js';
export type { ResultCut } from './result-cut.js';
export { MAX_OUTPUT_CHARS } from './return-value.js';
export type { CellResult, CodeModeReturn, ContentPart, ImagePart, RunCodeReply, TextPart } from './return-value.js';
export { CodeMode, DEFAULT_DESCRIPTION_BUDGET } from './run-code.js';
export type { CodeModeOptions, RunCodeInput, RunCodeOptions, RunCodeResult } from './run-code.js';
export { FINDER_NAME } from './tool-finder.js';
export type { FunctionGroup } from './tool-listing.js';
export type { NestedCallContext, ToolDefinition, ToolFunction, ToolInputValidation, ToolParameter } from './tool-functions.js';
