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

/** The registry key of a Code Mode error class's marker: the same symbol in every copy of this package. */
function markerOf(className: string): symbol {
  return Symbol.for(`ipython-mcp.code-mode.${className}`);
}

/**
 * The base of every Code Mode error: a stable {@link CodeModeErrorCode} and structured details that never hold
 * code, arguments or values. `retry` says whether the model should be told and may try again (code raised,
 * timed out, or lost its kernel) rather than the run failing.
 *
 * Test for one with the class's static `isInstance`, not `instanceof`: `instanceof` fails when the package is
 * loaded twice (a bundled app beside a dependency's copy), while every instance carries the `Symbol.for` marker of
 * its class and of each class above it, which all copies share.
 */
export abstract class CodeModeError extends Error {
  /** This class's marker; every error class declares its own (a test checks that each exported class does). */
  static readonly marker: symbol = markerOf('CodeModeError');

  /** Whether `value` is an instance of this class (the one `isInstance` is called on), from any copy of the package. */
  static isInstance<T extends CodeModeError>(this: { readonly prototype: T; readonly marker: symbol }, value: unknown): value is T {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[this.marker] === true;
  }

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
    // The markers of the instance's class and of every class above it, up to this one (non-enumerable: they stay out
    // of JSON and of logged fields).
    for (let type: unknown = new.target; typeof type === 'function' && type !== Error; type = Object.getPrototypeOf(type)) {
      if (Object.prototype.hasOwnProperty.call(type, 'marker')) {
        Object.defineProperty(this, (type as unknown as { marker: symbol }).marker, { value: true });
      }
    }
  }
}

/** The code raised. The message holds the printed output and the traceback, for the model. */
export class CodeExecutionError extends CodeModeError {
  static override readonly marker: symbol = markerOf('CodeExecutionError');
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
  static override readonly marker: symbol = markerOf('CodeModeTimeoutError');
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
  static override readonly marker: symbol = markerOf('CodeModeMemoryLimitError');
  override readonly code = 'CODE_MODE_MEMORY_LIMIT' as const;
  override readonly retry = true;
  constructor(message: string, details: { limitMb: number | null; outcome: MemoryLimitOutcome }) {
    super(message, details);
  }
}

/** The kernel process exited while code ran (a crash, `os._exit`): its state is gone. */
export class KernelDiedError extends CodeModeError {
  static override readonly marker: symbol = markerOf('KernelDiedError');
  override readonly code = 'CODE_MODE_KERNEL_DIED' as const;
  override readonly retry = true;
  constructor(message: string, details: { exitCode: number | null; signal: string | null }) {
    super(message, details);
  }
}

/** A kernel could not be started (no interpreter, no IPython, start-up timeout). */
export class KernelStartupError extends CodeModeError {
  static override readonly marker: symbol = markerOf('KernelStartupError');
  override readonly code = 'CODE_MODE_KERNEL_STARTUP' as const;
  constructor(message: string) {
    super(message);
  }
}

/** The kernel was shut down while this work waited for it or ran on it. */
export class KernelClosedError extends CodeModeError {
  static override readonly marker: symbol = markerOf('KernelClosedError');
  override readonly code = 'CODE_MODE_KERNEL_CLOSED' as const;
  constructor(message = 'the kernel was shut down') {
    super(message);
  }
}

/** The kernel answered with a failure that is not the code's own (a result over the message limit, a bug). */
export class KernelOperationError extends CodeModeError {
  static override readonly marker: symbol = markerOf('KernelOperationError');
  override readonly code = 'CODE_MODE_KERNEL_ERROR' as const;
  override readonly retry: boolean;
  constructor(message: string, details: { wireCode: string }, retry = false) {
    super(message, details);
    this.retry = retry;
  }
}

/** The caller's abort signal stopped the code. */
export class CodeModeCancelledError extends CodeModeError {
  static override readonly marker: symbol = markerOf('CodeModeCancelledError');
  override readonly code = 'CODE_MODE_CANCELLED' as const;
  constructor(message = 'run_code was cancelled') {
    super(message);
  }
}

/** run_code failed more often in a row than `maxCodeRetries` allows; the run should end. */
export class MaxRetriesExceededError extends CodeModeError {
  static override readonly marker: symbol = markerOf('MaxRetriesExceededError');
  override readonly code = 'CODE_MODE_MAX_RETRIES' as const;
  constructor(message: string, details: { maxCodeRetries: number; failures: number }, cause: CodeModeError) {
    super(message, details, { cause });
  }
}

/** Options that cannot work (a negative limit, duplicate tool names). */
export class InvalidCodeModeOptionsError extends CodeModeError {
  static override readonly marker: symbol = markerOf('InvalidCodeModeOptionsError');
  override readonly code = 'CODE_MODE_INVALID_OPTIONS' as const;
  constructor(message: string, details: { option: string }) {
    super(message, details);
  }
}

/** run_code's own input is not `{code: string, restart?: boolean}`. */
export class InvalidRunCodeInputError extends CodeModeError {
  static override readonly marker: symbol = markerOf('InvalidRunCodeInputError');
  override readonly code = 'CODE_MODE_INVALID_INPUT' as const;
  override readonly retry = true;
  constructor(message: string) {
    super(message);
  }
}

/** Code called a function whose tool this Code Mode does not have (a function left from another tool set). */
export class ToolNotFoundError extends CodeModeError {
  static override readonly marker: symbol = markerOf('ToolNotFoundError');
  override readonly code = 'CODE_MODE_TOOL_NOT_FOUND' as const;
  constructor(toolName: string) {
    super(`no tool named ${JSON.stringify(toolName.slice(0, 200))} is available to this code`, { toolName: toolName.slice(0, 200) });
  }
}

/** A nested call's arguments failed the tool's input validation. */
export class ToolInputError extends CodeModeError {
  static override readonly marker: symbol = markerOf('ToolInputError');
  override readonly code = 'CODE_MODE_TOOL_INPUT' as const;
  constructor(toolName: string, problems: string) {
    super(`invalid arguments for ${toolName}: ${problems}`, { toolName });
  }
}

/** A nested call needs approval, which calls from code cannot ask for. */
export class ToolApprovalRequiredError extends CodeModeError {
  static override readonly marker: symbol = markerOf('ToolApprovalRequiredError');
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
  static override readonly marker: symbol = markerOf('ToolResultError');
  override readonly code = 'CODE_MODE_TOOL_RESULT' as const;
  constructor(toolName: string, problem: string) {
    super(`${toolName} returned ${problem}`, { toolName });
  }
}

/** Whether `error` is a Code Mode error the model should see as a retry. */
export function isModelRetry(error: unknown): error is CodeModeError {
  return CodeModeError.isInstance(error) && error.retry;
}
