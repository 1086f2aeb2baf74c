/** Every Code Mode failure, one stable code each. */
export type CodeModeErrorCode =
  | 'CODE_MODE_EXECUTION_ERROR'
  | 'CODE_MODE_TIMEOUT'
  | 'CODE_MODE_MEMORY_LIMIT'
  | 'CODE_MODE_KERNEL_DIED'
  | 'CODE_MODE_KERNEL_STARTUP'
  | 'CODE_MODE_KERNEL_CLOSED'
  | 'CODE_MODE_KERNEL_ERROR'
  | 'CODE_MODE_CANCELLED'
  | 'CODE_MODE_MAX_RETRIES'
  | 'CODE_MODE_INVALID_OPTIONS'
  | 'CODE_MODE_INVALID_INPUT'
  | 'CODE_MODE_TOOL_NOT_FOUND'
  | 'CODE_MODE_TOOL_INPUT'
  | 'CODE_MODE_TOOL_APPROVAL_REQUIRED'
  | 'CODE_MODE_TOOL_RESULT';

/**
 * The base of every Code Mode error: a stable {@link CodeModeErrorCode} and structured details that never hold
 * code, arguments or values. `retry` says whether the model should be told and may try again (code raised,
 * timed out, or lost its kernel) rather than the run failing.
 */
export abstract class CodeModeError extends Error {
  /** The stable code. */
  abstract readonly code: CodeModeErrorCode;
  /** Whether this is a failure to report to the model as a retry. */
  readonly retry: boolean = false;
  /** Structured, value-free metadata. */
  readonly details: Readonly<Record<string, unknown>>;

  protected constructor(message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.details = details;
  }
}

/** The code raised. The message holds the printed output and the traceback, for the model. */
export class CodeExecutionError extends CodeModeError {
  override readonly code = 'CODE_MODE_EXECUTION_ERROR' as const;
  override readonly retry = true;
  constructor(message: string, details: { errorType: string; executionCount: number }) {
    super(message, details);
  }
}

/** What became of the kernel after a timeout. */
export type TimeoutOutcome = 'interrupted' | 'restarted';

/** The code ran past its timeout (tool-call time excluded): interrupted, or its kernel replaced. */
export class CodeModeTimeoutError extends CodeModeError {
  override readonly code = 'CODE_MODE_TIMEOUT' as const;
  override readonly retry = true;
  constructor(message: string, details: { timeoutMs: number; outcome: TimeoutOutcome }) {
    super(message, details);
  }
}

/** What became of the kernel after a memory stop: its state kept, or the kernel restarted. */
export type MemoryLimitOutcome = 'interrupted' | 'restarted';

/** The code used more memory than the kernel's limit and was stopped; the kernel kept its state or was restarted. */
export class CodeModeMemoryLimitError extends CodeModeError {
  override readonly code = 'CODE_MODE_MEMORY_LIMIT' as const;
  override readonly retry = true;
  constructor(message: string, details: { limitMb: number | null; outcome: MemoryLimitOutcome }) {
    super(message, details);
  }
}

/** The kernel process exited while code ran (a crash, `os._exit`): its state is gone. */
export class KernelDiedError extends CodeModeError {
  override readonly code = 'CODE_MODE_KERNEL_DIED' as const;
  override readonly retry = true;
  constructor(message: string, details: { exitCode: number | null; signal: string | null }) {
    super(message, details);
  }
}

/** A kernel could not be started (no interpreter, no IPython, start-up timeout). */
export class KernelStartupError extends CodeModeError {
  override readonly code = 'CODE_MODE_KERNEL_STARTUP' as const;
  constructor(message: string) {
    super(message);
  }
}

/** The kernel was shut down while this work waited for it or ran on it. */
export class KernelClosedError extends CodeModeError {
  override readonly code = 'CODE_MODE_KERNEL_CLOSED' as const;
  constructor(message = 'the kernel was shut down') {
    super(message);
  }
}

/** The kernel answered with a failure that is not the code's own (a result over the message limit, a bug). */
export class KernelOperationError extends CodeModeError {
  override readonly code = 'CODE_MODE_KERNEL_ERROR' as const;
  override readonly retry: boolean;
  constructor(message: string, details: { wireCode: string }, retry = false) {
    super(message, details);
    this.retry = retry;
  }
}

/** The caller's abort signal stopped the code. */
export class CodeModeCancelledError extends CodeModeError {
  override readonly code = 'CODE_MODE_CANCELLED' as const;
  constructor(message = 'run_code was cancelled') {
    super(message);
  }
}

/** run_code failed more often in a row than `maxCodeRetries` allows; the run should end. */
export class MaxRetriesExceededError extends CodeModeError {
  override readonly code = 'CODE_MODE_MAX_RETRIES' as const;
  constructor(message: string, details: { maxCodeRetries: number; failures: number }, cause: CodeModeError) {
    super(message, details, { cause });
  }
}

/** Options that cannot work (a negative limit, duplicate tool names). */
export class InvalidCodeModeOptionsError extends CodeModeError {
  override readonly code = 'CODE_MODE_INVALID_OPTIONS' as const;
  constructor(message: string, details: { option: string }) {
    super(message, details);
  }
}

/** run_code's own input is not `{code: string, restart?: boolean}`. */
export class InvalidRunCodeInputError extends CodeModeError {
  override readonly code = 'CODE_MODE_INVALID_INPUT' as const;
  override readonly retry = true;
  constructor(message: string) {
    super(message);
  }
}

/** Code called a function whose tool this Code Mode does not have (a function left from another tool set). */
export class ToolNotFoundError extends CodeModeError {
  override readonly code = 'CODE_MODE_TOOL_NOT_FOUND' as const;
  constructor(toolName: string) {
    super(`no tool named ${JSON.stringify(toolName.slice(0, 200))} is available to this code`, { toolName: toolName.slice(0, 200) });
  }
}

/** A nested call's arguments failed the tool's input validation. */
export class ToolInputError extends CodeModeError {
  override readonly code = 'CODE_MODE_TOOL_INPUT' as const;
  constructor(toolName: string, problems: string) {
    super(`invalid arguments for ${toolName}: ${problems}`, { toolName });
  }
}

/** A nested call needs approval, which calls from code cannot ask for. */
export class ToolApprovalRequiredError extends CodeModeError {
  override readonly code = 'CODE_MODE_TOOL_APPROVAL_REQUIRED' as const;
  constructor(toolName: string) {
    super(
      `${toolName} needs approval before it runs, and calls from code cannot ask for it; call ${toolName} as a regular tool instead`,
      { toolName },
    );
  }
}

/** A tool returned something the kernel cannot receive (no JSON form, or over the message limit). */
export class ToolResultError extends CodeModeError {
  override readonly code = 'CODE_MODE_TOOL_RESULT' as const;
  constructor(toolName: string, problem: string) {
    super(`${toolName} returned ${problem}`, { toolName });
  }
}

/** Whether `error` is a Code Mode error the model should see as a retry. */
export function isModelRetry(error: unknown): error is CodeModeError {
  return error instanceof CodeModeError && error.retry;
}
