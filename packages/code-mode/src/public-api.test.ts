import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/code-mode, pinned: adding or removing one is a deliberate change of public API (update
// this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/code-mode public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'CODE_INPUT_DESCRIPTION',
      'CodeExecutionError',
      'CodeMode',
      'CodeModeCancelledError',
      'CodeModeError',
      'CodeModeMemoryLimitError',
      'CodeModeTimeoutError',
      'ConsentGate',
      'DEFAULT_DESCRIPTION_BUDGET',
      'FINDER_NAME',
      'INTERRUPT_GRACE_MS',
      'IPythonKernel',
      'InvalidCodeModeOptionsError',
      'InvalidRunCodeInputError',
      'KERNEL_IPC_LIMIT_BYTES',
      'KernelClosedError',
      'KernelDiedError',
      'KernelOperationError',
      'KernelStartupError',
      'MAX_OUTPUT_CHARS',
      'MAX_RESULT_BYTES',
      'MAX_RESULT_DEPTH',
      'MaxRetriesExceededError',
      'RESTART_INPUT_DESCRIPTION',
      'SHUTDOWN_WAIT_MS',
      'TOOL_POLICIES',
      'ToolApprovalRequiredError',
      'ToolInputError',
      'ToolNotFoundError',
      'ToolResultError',
      'consentQuestionText',
      'consentSummary',
      'isModelRetry',
      'policyFromAnnotations',
      'renderRunCodeDescription',
      'resolveToolPolicy',
      'toPythonIdentifier',
      'toolLabel',
      'validateJsonSchema',
    ]);
  });
});
