import {
  ToolApprovalRequiredError,
  type JsonSchema,
  type NestedCallContext,
  type ToolDefinition,
  type ToolInputValidation,
} from '@ipython-mcp/code-mode';
import { asSchema, type Tool, type ToolExecutionOptions, type ToolSet } from 'ai';
import type { ApproveToolCall } from './consent.js';
import { isMcpResult, mcpResultValue } from './mcp-tools.js';

/** The host's approval callback and the tools it allowed for the rest of the session. */
export interface ToolApprover {
  approve: ApproveToolCall;
  allowedForSession: Set<string>;
}

/** A nested call the host's approval callback refused: the code sees ToolCallError with this message. */
export class ToolApprovalRefusedError extends Error {
  constructor(toolName: string) {
    super(`${toolName} was refused by the host's approval callback when asked; nothing ran`);
    this.name = 'ToolApprovalRefusedError';
  }
}

/** Which tools become kernel functions: all eligible ones, the named ones, or those a predicate accepts. */
export type ToolSelector = 'all' | readonly string[] | ((name: string, tool: Tool) => boolean);

/** How a tool set splits: functions for the kernel, and tools the model keeps calling directly. */
export interface SplitTools {
  /** Tools defined in the kernel, adapted to Code Mode. */
  definitions: ToolDefinition[];
  /** Tools that stay visible to the model as regular tool calls. */
  native: ToolSet;
}

/**
 * Splits an AI SDK tool set by `selector`. Only tools Code Mode can run are eligible: tools with an `execute`
 * that the provider does not run itself. A selected tool with `needsApproval` stays native too, so the model can
 * still call it with approval; `needsApproval: true` tools are not selected by `'all'` at all, since every call
 * from code would be refused.
 */
export async function splitTools(tools: ToolSet, selector: ToolSelector, approver?: ToolApprover): Promise<SplitTools> {
  const definitions: ToolDefinition[] = [];
  const native: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) {
    const eligible = typeof tool.execute === 'function' && tool.type !== 'provider';
    const selected =
      eligible &&
      (selector === 'all' ? tool.needsApproval !== true : typeof selector === 'function' ? selector(name, tool) : selector.includes(name));
    if (selected) definitions.push(await toToolDefinition(name, tool, approver));
    if (!selected || tool.needsApproval !== undefined) native[name] = tool;
  }
  return { definitions, native };
}

/**
 * An AI SDK tool as a Code Mode tool definition. Nested calls run like a direct call would: the input is checked
 * with the tool's own schema (`asSchema(...).validate`; a JSON-Schema-only tool falls back to Code Mode's JSON
 * Schema check), `needsApproval` is honoured by asking the host's approval callback (`approver`) or, without one,
 * refusing calls that need approval, and `execute` gets call options
 * derived from the run_code call's own. A streaming `execute` resolves to its last value; an MCP tool's result is
 * unwrapped like {@link mcpResultValue}.
 */
export async function toToolDefinition(name: string, tool: Tool, approver?: ToolApprover): Promise<ToolDefinition> {
  const schema = asSchema(tool.inputSchema);
  const inputSchema = (await schema.jsonSchema) as JsonSchema;
  const outputSchema = tool.outputSchema === undefined ? undefined : ((await asSchema(tool.outputSchema).jsonSchema) as JsonSchema);
  const schemaValidate = schema.validate;
  const validate =
    schemaValidate === undefined
      ? undefined
      : async (input: unknown): Promise<ToolInputValidation> => {
          const result = await schemaValidate(input);
          return result.success ? { success: true, value: result.value } : { success: false, message: validationMessage(result.error) };
        };
  return {
    name,
    description: tool.description,
    inputSchema,
    outputSchema,
    ...(validate === undefined ? {} : { validate }),
    execute: async (input: unknown, context: NestedCallContext) => {
      const options = executionOptions(context);
      if (!approver?.allowedForSession.has(name) && (await needsApproval(tool, input, options))) {
        if (approver === undefined) throw new ToolApprovalRequiredError(name);
        const reason = 'its needsApproval says this call needs approval';
        const answer = await approver.approve({ server: undefined, toolName: name, functionName: context.functionName, input: input as Record<string, unknown>, reason, toolCallId: context.toolCallId });
        if (answer === 'session') approver.allowedForSession.add(name);
        else if (answer !== true) throw new ToolApprovalRefusedError(name);
      }
      const execute = tool.execute as (input: unknown, options: ToolExecutionOptions) => unknown;
      const output = await lastValue(execute(input, options));
      return tool.type === 'dynamic' && isMcpResult(output) ? mcpResultValue(output) : output;
    },
  };
}

function executionOptions(context: NestedCallContext): ToolExecutionOptions {
  const outer = isExecutionOptions(context.context) ? context.context : undefined;
  return {
    toolCallId: context.toolCallId,
    messages: outer?.messages ?? [],
    ...(context.signal === undefined ? {} : { abortSignal: context.signal }),
    ...(outer?.experimental_context === undefined ? {} : { experimental_context: outer.experimental_context }),
  };
}

async function needsApproval(tool: Tool, input: unknown, options: ToolExecutionOptions): Promise<boolean> {
  const rule = tool.needsApproval;
  if (rule === undefined || rule === false) return false;
  if (rule === true) return true;
  const decide = rule as (input: unknown, options: Pick<ToolExecutionOptions, 'toolCallId' | 'messages' | 'experimental_context'>) => boolean | PromiseLike<boolean>;
  return (await decide(input, { toolCallId: options.toolCallId, messages: options.messages, experimental_context: options.experimental_context })) === true;
}

async function lastValue(output: unknown): Promise<unknown> {
  const awaited = await output;
  if (typeof awaited !== 'object' || awaited === null || !(Symbol.asyncIterator in awaited)) return awaited;
  let last: unknown;
  for await (const value of awaited as AsyncIterable<unknown>) last = value;
  return last;
}

function isExecutionOptions(value: unknown): value is ToolExecutionOptions {
  return typeof value === 'object' && value !== null && typeof (value as { toolCallId?: unknown }).toolCallId === 'string';
}

function validationMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // TypeValidationError wraps the schema library's error; its cause has the readable issues.
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error && Array.isArray((cause as { issues?: unknown }).issues)) {
    const issues = (cause as unknown as { issues: Array<{ path?: unknown[]; message?: string }> }).issues;
    return issues
      .slice(0, 5)
      .map((issue) => `${issue.path && issue.path.length > 0 ? issue.path.join('.') : '(input)'}: ${issue.message ?? 'invalid'}`)
      .join('; ');
  }
  return error.message;
}
