import {
  CODE_INPUT_DESCRIPTION,
  CodeMode,
  InvalidCodeModeOptionsError,
  MaxRetriesExceededError,
  RESTART_INPUT_DESCRIPTION,
  type AskConsent,
  type CodeModeOptions,
  type CodeModeReturn,
  type RunCodeInput,
  type RunCodeResult,
} from '@ipython-mcp/code-mode';
import { jsonSchema, tool, type StopCondition, type Tool, type ToolSet } from 'ai';
import { splitTools, type ToolSelector } from './ai-sdk-tools.js';
import { askThroughApproval, capabilityConsentGate, type CodeModeConsentOptions } from './consent.js';
import { reportNestedCalls, withActiveContext, type NestedCallReporting } from './nested-call-telemetry.js';

/** The name of the tool that runs code. */
export const RUN_CODE_TOOL_NAME = 'run_code';

/**
 * The options {@link ipythonCodeMode} hands to the package's {@link CodeMode} as they are: their meaning and
 * defaults are documented once, on `CodeModeOptions` in @ipython-mcp/code-mode.
 */
export type CodeModeEngineOptions = Pick<
  CodeModeOptions,
  'kernel' | 'kernelOptions' | 'maxCodeRetries' | 'maxRetries' | 'maxToolCalls' | 'timeout' | 'descriptionBudget' | 'groups'
>;

/**
 * Options of {@link ipythonCodeMode}: the agent's AI SDK tools and how to split them, plus the engine's options
 * ({@link CodeModeEngineOptions}). With `maxCodeRetries` failures in a row used up, `generateText`/`streamText`
 * rejects with {@link MaxRetriesExceededError}, with no `stopWhen` needed.
 */
export interface IPythonCodeModeOptions extends NestedCallReporting, CodeModeEngineOptions {
  /** The agent's AI SDK tools. Selected ones become kernel functions; the rest stay regular tools. */
  tools?: ToolSet | undefined;
  /** Plain tools (name, description, JSON Schema, execute), always defined in the kernel. */
  definitions?: CodeModeOptions['tools'];
  /** Which of `tools` become kernel functions (default `'all'`). */
  select?: ToolSelector | undefined;
  /**
   * Consent for nested calls, on the same rule as `ipython-mcp code-mode`: an MCP tool (from
   * {@link mcpToolDefinitions}) runs from code only when it declares itself read-only and closed-world, or the
   * policies say "run", or `approve` says yes; an AI SDK tool runs unless its `needsApproval` says so, and then only
   * with `approve`'s yes. Without `approve`, calls that need a yes are refused, and the code sees ToolCallError.
   */
  consent?: CodeModeConsentOptions | undefined;
}

/** The output of the run_code tool: what the model sees plus the nested-call metadata. */
export type RunCodeOutput = RunCodeResult;

/** IPython Code Mode for one agent run of the Vercel AI SDK. */
export interface IPythonCodeMode extends AsyncDisposable {
  /** Pass these to `generateText`/`streamText`: run_code plus the tools that stay native. */
  readonly tools: ToolSet;
  /** The run_code tool alone. */
  readonly runCode: Tool<RunCodeInput, RunCodeOutput>;
  /** The engine: functions, description, retry count, kernel. */
  readonly codeMode: CodeMode;
  /**
   * @deprecated Not needed: the run already ends when run_code fails more often in a row than `maxCodeRetries`
   * allows. Kept so `stopWhen` lists that name it still type-check; it is true only after that failure.
   */
  readonly retriesExhausted: StopCondition<ToolSet>;
  /**
   * Stops the run's own kernel now (a shared kernel is left to its owner). Forgetting it does not hang the
   * program: an idle kernel does not hold Node's event loop, and its process exits with the program.
   */
  close(): Promise<void>;
}

/**
 * Gives the model one `run_code` tool that runs Python in a persistent IPython kernel, with the selected tools
 * defined in it as synchronous Python functions. Create one per agent run; pass a shared `kernel` to keep state
 * across runs.
 *
 * Not a sandbox: the code runs with your user's permissions. Use it for local agents you trust.
 *
 * @example
 * ```ts
 * await using codeMode = await ipythonCodeMode({ tools: { getSales } });
 * const result = await generateText({ model, tools: codeMode.tools, stopWhen: stepCountIs(10), prompt });
 * ```
 */
export async function ipythonCodeMode(options: IPythonCodeModeOptions = {}): Promise<IPythonCodeMode> {
  const approve = options.consent?.approve;
  const approver = approve === undefined ? undefined : { approve, allowedForSession: new Set<string>() };
  const { definitions, native } = await splitTools(options.tools ?? {}, options.select ?? 'all', approver);
  if (RUN_CODE_TOOL_NAME in native) {
    throw new InvalidCodeModeOptionsError(`a tool that stays native is already named ${RUN_CODE_TOOL_NAME}`, { option: 'tools' });
  }
  const codeMode = new CodeMode({
    tools: [...definitions, ...(options.definitions ?? [])].map((definition) => reportNestedCalls(definition, options)),
    kernel: options.kernel,
    kernelOptions: options.kernelOptions,
    maxCodeRetries: options.maxCodeRetries,
    maxRetries: options.maxRetries,
    maxToolCalls: options.maxToolCalls,
    timeout: options.timeout,
    descriptionBudget: options.descriptionBudget,
    groups: options.groups,
    consent: capabilityConsentGate(options.consent),
  });
  const runCode = runCodeTool(codeMode, approve === undefined ? undefined : askThroughApproval(approve));
  const close = (): Promise<void> => codeMode.close();
  return {
    tools: { ...native, [RUN_CODE_TOOL_NAME]: runCode },
    runCode,
    codeMode,
    retriesExhausted: () => codeMode.retriesExhausted,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * What run_code's `execute` resolves with for the failure that exhausted `maxCodeRetries`: a tool error would let
 * the run go on (the AI SDK hands tool errors to the model), so the error is carried to `toModelOutput`, which
 * throws it and so ends `generateText`/`streamText` with it, as Pydantic AI ends a run whose tool ran out of
 * retries. Serialized (telemetry, callbacks) as `{error}`.
 */
class RetriesExhausted {
  constructor(readonly error: MaxRetriesExceededError) {}
  toJSON(): { error: string } {
    return { error: this.error.message };
  }
}

/**
 * The run_code tool over a {@link CodeMode} engine. Failures the model should see are thrown (a tool error). `ask`
 * answers the engine's consent questions (calls whose policy is "ask"); unset, they are refused.
 */
export function runCodeTool(codeMode: CodeMode, ask?: AskConsent): Tool<RunCodeInput, RunCodeOutput> {
  return tool<RunCodeInput, RunCodeOutput>({
    description: codeMode.description,
    inputSchema: jsonSchema<RunCodeInput>(
      {
        type: 'object',
        properties: {
          code: { type: 'string', description: CODE_INPUT_DESCRIPTION },
          restart: { type: 'boolean', description: RESTART_INPUT_DESCRIPTION },
          timeout_seconds: codeMode.timeoutSecondsSchema,
        },
        required: ['code'],
        additionalProperties: false,
      },
      { validate: validateRunCodeInput },
    ),
    execute: async (input, options) => {
      try {
        return await codeMode.runCode(input, { signal: options.abortSignal, context: withActiveContext(options), toolCallId: options.toolCallId, ask });
      } catch (error) {
        if (MaxRetriesExceededError.isInstance(error)) return new RetriesExhausted(error) as unknown as RunCodeOutput;
        throw error;
      }
    },
    toModelOutput: ({ output }) => {
      if ((output as unknown) instanceof RetriesExhausted) throw (output as unknown as RetriesExhausted).error;
      return modelOutput(output.return);
    },
  });
}

/** What the model sees of a run_code return: JSON for values, a content list (text and images) otherwise. */
export function modelOutput(value: CodeModeReturn): ModelOutput {
  if (value.kind === 'value') return { type: 'json', value: value.value };
  return {
    type: 'content',
    value: value.parts.map((part) =>
      part.type === 'text' ? { type: 'text' as const, text: part.text } : { type: 'image-data' as const, data: part.data, mediaType: part.mediaType },
    ),
  };
}

/** The tool-result output type of the AI SDK. */
export type ModelOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;

function validateRunCodeInput(value: unknown): { success: true; value: RunCodeInput } | { success: false; error: Error } {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { code, restart, timeout_seconds: timeoutSeconds, ...rest } = value as Record<string, unknown>;
    const unknown = Object.keys(rest);
    // timeout_seconds is checked against its bound by runCode (an error the model reads).
    if (typeof code === 'string' && (restart === undefined || typeof restart === 'boolean') && unknown.length === 0) {
      const input: Record<string, unknown> = restart === undefined ? { code } : { code, restart };
      if (timeoutSeconds !== undefined) input.timeout_seconds = timeoutSeconds;
      return { success: true, value: input as unknown as RunCodeInput };
    }
    if (unknown.length > 0) return { success: false, error: new Error(`run_code takes only code, restart and timeout_seconds, not ${unknown.join(', ')}`) };
  }
  return { success: false, error: new Error('run_code needs {"code": "<python>", "restart"?: true|false}') };
}
