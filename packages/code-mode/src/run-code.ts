import type { ToolCall } from '@ipython-mcp/protocol';
import type { OperationOutcome } from '@ipython-mcp/worker-supervisor';
import { renderRunCodeDescription, type DescriptionLayout } from './description.js';
import {
  CodeExecutionError,
  CodeModeCancelledError,
  CodeModeMemoryLimitError,
  CodeModeTimeoutError,
  InvalidCodeModeOptionsError,
  InvalidRunCodeInputError,
  KernelClosedError,
  KernelDiedError,
  KernelOperationError,
  KernelStartupError,
  MaxRetriesExceededError,
  ToolNotFoundError,
  isModelRetry,
  type CodeModeError,
} from './errors.js';
import type { AskConsent, ConsentGate, GateOutcome } from './consent.js';
import { runNestedCall, serveTool, type NestedCallAnswer, type ServedTool, type NestedToolCall, type NestedToolReturn } from './nested-call.js';
import { INTERRUPT_GRACE_MS, IPythonKernel, KERNEL_RETRY_NOTE, kernelJournal, type IPythonKernelOptions, type KernelSession } from './kernel.js';
import { MAX_RESULT_BYTES } from './result-cut.js';
import { parseRunCodeReply, printedOutput, shapeReturn, type CodeModeReturn, type RunCodeReply } from './return-value.js';
import { finderDefinition, finderName } from './tool-finder.js';
import { buildToolFunctions, toolFunctionSpec, type ToolDefinition, type ToolFunction } from './tool-functions.js';
import type { FunctionGroup } from './tool-listing.js';

/** Options of a {@link CodeMode}. */
export interface CodeModeOptions {
  /** The tools to define as Python functions in the kernel. */
  tools?: readonly ToolDefinition[] | undefined;
  /**
   * A kernel to share across runs, with its state; you own it and shut it down. Unset, this Code Mode starts its
   * own kernel on the first run_code call and stops it in {@link CodeMode.close}.
   */
  kernel?: IPythonKernel | undefined;
  /** Options of the kernel this Code Mode starts itself (ignored with `kernel`). */
  kernelOptions?: IPythonKernelOptions | undefined;
  /**
   * Failures of run_code in a row (code that raised, timed out or crashed its kernel) that are reported back to the
   * model to retry; the next one ends the run with {@link MaxRetriesExceededError}. A success starts the count
   * again, as Pydantic AI counts a tool's retries. Default 3.
   */
  maxCodeRetries?: number | undefined;
  /**
   * @deprecated Use {@link CodeModeOptions.maxCodeRetries}; the AI SDK's own `maxRetries` (provider retries) has
   * the same name and another meaning.
   */
  maxRetries?: number | undefined;
  /** Tool calls one run_code call may make; calls past it raise ToolCallError. Default 100. */
  maxToolCalls?: number | undefined;
  /** Milliseconds one run_code call may run, not counting time in tool calls; `null` for no limit. Default 60 000. */
  timeout?: number | null | undefined;
  /**
   * Characters run_code's description may take with every function's stub (signature and first sentence). Past
   * it, the description lists function names only and the kernel gets `find_tools(query=...)`, which returns the
   * stubs of the matching functions. `null`: always stubs. Default {@link DEFAULT_DESCRIPTION_BUDGET}.
   */
  descriptionBudget?: number | null | undefined;
  /** The groups the description lists functions under (see {@link ToolDefinition.group}), with status lines. */
  groups?: readonly FunctionGroup[] | undefined;
  /** A paragraph placed before the function listing: where the functions come from, how their results look. */
  descriptionNote?: string | undefined;
  /**
   * The consent gate every nested call passes first: each tool's policy (run, ask, refuse) and what the person
   * allowed for the session. Unset, every call runs (the tools are the host's own). Share one gate across the Code
   * Modes of a session so "yes for the rest of the session" lasts.
   */
  consent?: ConsentGate | undefined;
}

/**
 * The default {@link CodeModeOptions.descriptionBudget}: 8,000 characters, about 2,000 tokens that every model
 * request carries. Around 40 tools of typical MCP servers fit with their stubs; past that, a lookup call costs the
 * model less than reading every signature on every turn.
 */
export const DEFAULT_DESCRIPTION_BUDGET = 8000;

/** run_code's input. */
export interface RunCodeInput {
  /** Python source, run as one IPython cell. */
  code: string;
  /** Start a fresh kernel first. */
  restart?: boolean | undefined;
  /** This call's deadline in seconds, instead of `timeout` (above 0, at most `timeout`; see {@link CodeMode.timeoutSecondsSchema}). */
  timeout_seconds?: number | undefined;
}

/** Longest deadline a Node timer can hold, in seconds: the bound of `timeout_seconds` when `timeout` is `null`. */
const MAX_TIMER_SECONDS = 2_147_483;

/** Per-call options of {@link CodeMode.runCode}. */
export interface RunCodeOptions {
  /** Cancels the call: a running cell is interrupted. */
  signal?: AbortSignal | undefined;
  /** Handed to every nested call's `execute` as `context.context` (the framework's call options). */
  context?: unknown;
  /** The run_code call's own id; nested call ids extend it. */
  toolCallId?: string | undefined;
  /** How to ask the person about a call whose policy is "ask"; unset, such calls are refused (see `consent`). */
  ask?: AskConsent | undefined;
  /**
   * Filled with every nested call as the code makes it, with its consent decision: also when run_code then fails
   * (the code raised), so the caller can still say what ran in the person's name.
   */
  nestedCalls?: NestedToolCall[] | undefined;
}

/** What a successful run_code call produced. */
export interface RunCodeResult {
  /** The value or content list the model gets. */
  return: CodeModeReturn;
  /** Every nested call and its outcome, in call order. */
  metadata: { toolCalls: NestedToolCall[]; toolReturns: NestedToolReturn[] };
  /** IPython's execution count of the cell. */
  executionCount: number;
}

const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_MAX_TOOL_CALLS = 100;
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFINE_TOOLS_TIMEOUT_MS = 30_000;

/** Which tool set each kernel state has defined, so kernels shared by several Code Modes stay right. */
const definedTools = new WeakMap<IPythonKernel, { stateId: string; key: string }>();

/**
 * The framework-neutral Code Mode engine for one agent run: one `run_code` operation over a persistent IPython
 * kernel in which the tools are synchronous Python functions. Adapters turn {@link CodeMode.runCode} into their
 * framework's tool; a failure the model should see is thrown as a {@link CodeModeError} with `retry: true`.
 */
export class CodeMode implements AsyncDisposable {
  /** The tools as Python functions, in the order given. */
  readonly functions: readonly ToolFunction[];
  /** run_code's description for the model. */
  readonly description: string;
  /** The lookup function (`find_tools`), defined when the description lists names only; undefined otherwise. */
  readonly finder: ToolFunction | undefined;
  /** See {@link CodeModeOptions.maxCodeRetries}. */
  readonly maxCodeRetries: number;
  /** See {@link CodeModeOptions.maxToolCalls}. */
  readonly maxToolCalls: number;
  /** See {@link CodeModeOptions.timeout}. */
  readonly timeoutMs: number | null;

  private readonly sharedKernel: IPythonKernel | undefined;
  private readonly kernelOptions: IPythonKernelOptions;
  private ownKernel: IPythonKernel | undefined;
  private readonly byToolName: Map<string, ServedTool>;
  private readonly specs: ReturnType<typeof toolFunctionSpec>[];
  private readonly toolsKey: string;
  private readonly consent: ConsentGate | undefined;
  private failureCount = 0;
  private runCount = 0;

  constructor(options: CodeModeOptions = {}) {
    if (options.maxCodeRetries !== undefined && options.maxRetries !== undefined && options.maxCodeRetries !== options.maxRetries) {
      throw new InvalidCodeModeOptionsError('maxRetries is the old name of maxCodeRetries: give one of them', { option: 'maxRetries' });
    }
    this.maxCodeRetries = count(options.maxCodeRetries ?? options.maxRetries ?? DEFAULT_MAX_RETRIES, 'maxCodeRetries');
    this.maxToolCalls = count(options.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS, 'maxToolCalls');
    const timeout = options.timeout === undefined ? DEFAULT_TIMEOUT_MS : options.timeout;
    if (timeout !== null && !(Number.isFinite(timeout) && timeout > 0)) {
      throw new InvalidCodeModeOptionsError('timeout must be a positive number of milliseconds, or null for none', { option: 'timeout' });
    }
    this.timeoutMs = timeout;
    const budget = options.descriptionBudget === undefined ? DEFAULT_DESCRIPTION_BUDGET : options.descriptionBudget;
    if (budget !== null) count(budget, 'descriptionBudget');
    this.functions = buildToolFunctions(options.tools ?? []);
    const limits = { maxToolCalls: this.maxToolCalls, timeoutMs: this.timeoutMs };
    const layout: DescriptionLayout = { groups: options.groups, note: options.descriptionNote };
    let description = renderRunCodeDescription(this.functions, limits, layout);
    if (budget !== null && description.length > budget && this.functions.length > 0) {
      this.finder = buildToolFunctions([finderDefinition(finderName(this.functions), this.functions)])[0];
      description = renderRunCodeDescription(this.functions, limits, { ...layout, finder: this.finder?.pythonName });
    }
    this.description = description;
    const served = this.finder === undefined ? this.functions : [...this.functions, this.finder];
    this.byToolName = new Map(served.map((tool) => [tool.toolName, serveTool(tool)]));
    this.specs = served.map(toolFunctionSpec);
    this.toolsKey = JSON.stringify(this.specs);
    this.sharedKernel = options.kernel;
    this.kernelOptions = options.kernelOptions ?? {};
    this.consent = options.consent;
  }

  /** run_code failures in a row so far (a success resets it), counted against `maxCodeRetries`. */
  get failures(): number {
    return this.failureCount;
  }

  /** Whether the last run_code failure was one more than `maxCodeRetries` allows (it threw MaxRetriesExceededError). */
  get retriesExhausted(): boolean {
    return this.failureCount > this.maxCodeRetries;
  }

  /** The kernel run_code uses: the shared one, or this Code Mode's own once started. */
  get kernel(): IPythonKernel | undefined {
    return this.sharedKernel ?? this.ownKernel;
  }

  /**
   * Runs one run_code call. Resolves with the shaped return and the nested-call metadata; throws a
   * {@link CodeModeError}: with `retry: true` for what the model should be told (the code raised, timed out or
   * lost its kernel), {@link MaxRetriesExceededError} once such failures in a row pass `maxCodeRetries`, and
   * others for failures of the kernel itself (which neither count nor reset the count).
   */
  async runCode(input: unknown, options: RunCodeOptions = {}): Promise<RunCodeResult> {
    try {
      const { code, restart, timeoutSeconds } = parseInput(input, this.maxTimeoutSeconds);
      const result = await this.run(code, restart, options, timeoutSeconds === undefined ? this.timeoutMs : timeoutSeconds * 1000);
      this.failureCount = 0;
      return result;
    } catch (error) {
      if (!isModelRetry(error)) throw error;
      this.failureCount += 1;
      if (this.failureCount > this.maxCodeRetries) {
        throw new MaxRetriesExceededError(
          `run_code failed ${this.failureCount} times in a row, more than maxCodeRetries (${this.maxCodeRetries}) allows; ` +
            `giving up. The last failure: ${error.message.slice(0, 4000)}`,
          { maxCodeRetries: this.maxCodeRetries, failures: this.failureCount },
          error,
        );
      }
      throw error;
    }
  }

  /** Stops the kernel this Code Mode started itself; a shared kernel is left to its owner. */
  async close(): Promise<void> {
    const own = this.ownKernel;
    this.ownKernel = undefined;
    await own?.shutdown();
  }

  /** Same as {@link CodeMode.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The bound of run_code's `timeout_seconds`: the `timeout` option, in seconds (a Node timer's longest if none). */
  get maxTimeoutSeconds(): number {
    return this.timeoutMs === null ? MAX_TIMER_SECONDS : this.timeoutMs / 1000;
  }

  /** The JSON Schema of run_code's optional `timeout_seconds` argument, with its bound. */
  get timeoutSecondsSchema(): Record<string, unknown> {
    return { type: 'number', exclusiveMinimum: 0, maximum: this.maxTimeoutSeconds };
  }

  private async run(code: string, restart: boolean, options: RunCodeOptions, timeoutMs: number | null): Promise<RunCodeResult> {
    const kernel = this.sharedKernel ?? (this.ownKernel ??= new IPythonKernel(this.kernelOptions));
    this.runCount += 1;
    const runId = options.toolCallId ?? `run_code_${this.runCount}`;
    const calls: NestedToolCall[] = options.nestedCalls ?? [];
    const returns: NestedToolReturn[] = [];
    const journal = kernelJournal(kernel);
    return kernel.exclusive(async (session) => {
      if (restart) {
        await session.restart();
        journal?.restarted();
      }
      await this.defineTools(kernel, session);
      const outcome = await session.run(
        'run_code',
        { code, max_tool_calls: this.maxToolCalls, max_result_bytes: MAX_RESULT_BYTES },
        {
          timeoutMs,
          graceMs: INTERRUPT_GRACE_MS,
          signal: options.signal,
          onToolCall: (call: ToolCall) => this.nestedCall(call, runId, calls, returns, options),
        },
      );
      journal?.runCode(code, outcome, calls, returns);
      const reply = this.replyOf(outcome, timeoutMs);
      if (reply.status === 'error') throw executionError(reply);
      return { return: shapeReturn(reply), metadata: { toolCalls: calls, toolReturns: returns }, executionCount: reply.executionCount };
    }, options.signal);
  }

  private nestedCall(
    call: ToolCall,
    runId: string,
    calls: NestedToolCall[],
    returns: NestedToolReturn[],
    options: RunCodeOptions,
  ): Promise<NestedCallAnswer> {
    const served = this.byToolName.get(call.name);
    const record: NestedToolCall = {
      toolCallId: `${runId}:${calls.length + 1}`,
      toolName: call.name,
      functionName: served?.tool.pythonName ?? call.name,
      input: call.arguments,
    };
    calls.push(record);
    const consent = this.consent;
    // find_tools is Code Mode's own lookup: it reads the listing and reaches nothing, so it needs no one's yes.
    if (served === undefined || consent === undefined || served.tool === this.finder) {
      return runNestedCall(served ?? new ToolNotFoundError(call.name), record, options.signal, options.context, returns);
    }
    const gate = consent.decide(served.subject, served.tool.pythonName, call.arguments, options.ask, options.signal);
    // A call the policy allows is decided without a promise: the gate costs a map lookup.
    if (!(gate instanceof Promise)) return this.afterGate(gate, served, record, returns, options);
    return gate.then(
      (outcome) => this.afterGate(outcome, served, record, returns, options),
      (error: unknown) => this.afterGate(askFailed(error), served, record, returns, options),
    );
  }

  private afterGate(outcome: GateOutcome, served: ServedTool, record: NestedToolCall, returns: NestedToolReturn[], options: RunCodeOptions): Promise<NestedCallAnswer> {
    record.decision = outcome.decision;
    if (outcome.allowed) return runNestedCall(served, record, options.signal, options.context, returns);
    returns.push({ toolCallId: record.toolCallId, toolName: record.toolName, error: outcome.message });
    return Promise.resolve({ ok: false, message: outcome.message });
  }

  private async defineTools(kernel: IPythonKernel, session: KernelSession): Promise<void> {
    const defined = definedTools.get(kernel);
    if (defined !== undefined && defined.stateId === session.stateId && defined.key === this.toolsKey) return;
    const outcome = await session.run('define_tools', { tools: this.specs, max_tool_calls: this.maxToolCalls }, { timeoutMs: DEFINE_TOOLS_TIMEOUT_MS });
    if (!outcome.ok) throw this.failureOf(outcome.error, outcome.meta.namespace);
    definedTools.set(kernel, { stateId: session.stateId, key: this.toolsKey });
  }

  private replyOf(outcome: OperationOutcome, timeoutMs: number | null): RunCodeReply {
    if (outcome.ok) return parseRunCodeReply(outcome.result);
    throw this.failureOf(outcome.error, outcome.meta.namespace, timeoutMs);
  }

  private failureOf(
    error: { code: string; message: string; details?: Record<string, unknown> | undefined },
    namespace: string | null,
    timeoutMs: number | null = this.timeoutMs,
  ): CodeModeError {
    switch (error.code) {
      case 'operation_timeout':
        return timeoutError(timeoutMs ?? 0, namespace === 'preserved');
      case 'memory_limit':
        return memoryLimitError(typeof error.details?.limit_mb === 'number' ? error.details.limit_mb : null, namespace === 'preserved');
      case 'worker_crashed': {
        const exitCode = typeof error.details?.exitCode === 'number' ? error.details.exitCode : null;
        const signal = typeof error.details?.signal === 'string' ? error.details.signal : null;
        const how = signal !== null ? `signal ${signal}` : `exit code ${exitCode ?? 'unknown'}`;
        return new KernelDiedError(
          `The kernel process exited while running the code (${how}). All its state - variables, imports, loaded data - ` +
            'is lost; the next run_code call starts a fresh kernel.',
          { exitCode, signal },
        );
      }
      case 'operation_cancelled':
        return new CodeModeCancelledError();
      case 'runtime_closed':
        return new KernelClosedError('the kernel was shut down while the code ran');
      case 'runtime_unavailable':
        return new KernelStartupError(`the IPython kernel is not available (${unavailableReason(error.message)}). ${KERNEL_RETRY_NOTE}`);
      case 'message_too_large':
        return new KernelOperationError(
          `The code's result is too large to return (${error.message}). Return or print less, for example a summary or a slice.`,
          { wireCode: error.code },
          true,
        );
      default:
        return new KernelOperationError(`the kernel failed: ${error.message}`, { wireCode: error.code });
    }
  }
}

/** A question that could not be put (the client went away, the call was cancelled): a refusal, nothing ran. */
function askFailed(error: unknown): GateOutcome {
  const why = error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300);
  return { allowed: false, decision: 'refused: cannot ask', message: `the question to the person could not be answered (${why}); nothing ran` };
}

/** The supervisor's reason without its server wording ("until the server restarts"), which is not true here. */
function unavailableReason(message: string): string {
  return message.replace(/^the runtime is unavailable until the server restarts: /, '');
}

function timeoutError(timeoutMs: number, preserved: boolean): CodeModeTimeoutError {
  const limit = `${timeoutMs / 1000} s`;
  if (preserved) {
    return new CodeModeTimeoutError(
      `The code was still running after the ${limit} timeout (time spent in tool calls does not count) and was ` +
        'interrupted with KeyboardInterrupt. The kernel kept its state: what ran before the interrupt is still defined. ' +
        'Make the code faster or split the work into smaller steps.',
      { timeoutMs, outcome: 'interrupted' },
    );
  }
  return new CodeModeTimeoutError(
    `The code was still running after the ${limit} timeout and did not stop within 5 s of KeyboardInterrupt, so its ` +
      'kernel was shut down. All its state - variables, imports, loaded data - is lost; the next run_code call starts ' +
      'a fresh kernel.',
    { timeoutMs, outcome: 'restarted' },
  );
}

function memoryLimitError(limitMb: number | null, preserved: boolean): CodeModeMemoryLimitError {
  const limit = limitMb === null ? "the kernel's memory limit" : `the kernel's ${limitMb} MB memory limit`;
  const advice = 'Work on less data at a time: read it in chunks, use a sample, stream it, or keep only what you need.';
  if (preserved) {
    return new CodeModeMemoryLimitError(
      `The code used more memory than ${limit} and was stopped. The kernel kept its state: what ran before is still ` +
        `defined, and the memory the stopped code held was freed. ${advice}`,
      { limitMb, outcome: 'interrupted' },
    );
  }
  return new CodeModeMemoryLimitError(
    `The code used more memory than ${limit} and was stopped; the memory stayed in use, so the kernel was restarted. ` +
      `All its state - variables, imports, loaded data - is lost; the next run_code call starts a fresh kernel. ${advice}`,
    { limitMb, outcome: 'restarted' },
  );
}

function executionError(reply: RunCodeReply): CodeExecutionError {
  const error = reply.error ?? { kind: 'exception', type: 'Exception', message: '', traceback: '' };
  const output = printedOutput(reply);
  const sections = [`The code raised ${error.type}${error.message ? `: ${error.message}` : ''}`];
  if (output !== '') sections.push(`Printed output:\n${output.trimEnd()}`);
  if (error.traceback !== '') sections.push(error.traceback.trimEnd());
  sections.push('The kernel kept its state: what ran before the error is still defined.');
  return new CodeExecutionError(sections.join('\n\n'), { errorType: error.type, executionCount: reply.executionCount });
}

function parseInput(input: unknown, maxTimeoutSeconds: number): { code: string; restart: boolean; timeoutSeconds: number | undefined } {
  if (typeof input !== 'object' || input === null) throw new InvalidRunCodeInputError('run_code needs an object {code, restart?}');
  const { code, restart, timeout_seconds: timeoutSeconds } = input as { code?: unknown; restart?: unknown; timeout_seconds?: unknown };
  if (typeof code !== 'string') throw new InvalidRunCodeInputError('run_code needs `code`: a string of Python');
  if (restart !== undefined && restart !== null && typeof restart !== 'boolean') {
    throw new InvalidRunCodeInputError('`restart` must be true or false');
  }
  if (timeoutSeconds !== undefined && (typeof timeoutSeconds !== 'number' || !Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0 || timeoutSeconds > maxTimeoutSeconds)) {
    throw new InvalidRunCodeInputError(`\`timeout_seconds\` must be a number of seconds above 0 and at most ${maxTimeoutSeconds} (the timeout option)`);
  }
  return { code, restart: restart === true, timeoutSeconds };
}

function count(value: number, option: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidCodeModeOptionsError(`${option} must be a non-negative integer`, { option });
  }
  return value;
}
