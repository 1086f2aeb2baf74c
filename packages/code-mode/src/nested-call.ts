import { toPythonJson } from '@ipython-mcp/protocol';
import type { ToolAnswer } from '@ipython-mcp/worker-supervisor';
import { CodeModeError, ToolInputError, ToolResultError } from './errors.js';
import { validateJsonSchema, type JsonValue } from './json-schema.js';
import { KERNEL_IPC_LIMIT_BYTES } from './kernel.js';
import type { ToolFunction, ToolInputValidation } from './tool-functions.js';

/** One nested call as the code made it. */
export interface NestedToolCall {
  /** `<run_code call id>:<sequence>`. */
  toolCallId: string;
  toolName: string;
  /** The Python function the code called. */
  functionName: string;
  /** The arguments as the code passed them (before validation). */
  input: Record<string, unknown>;
}

/** One nested call's outcome: the value the code received, or the error it raised as ToolCallError. */
export type NestedToolReturn =
  | { toolCallId: string; toolName: string; output: JsonValue }
  | { toolCallId: string; toolName: string; error: string };

/** What the kernel receives for a nested call: the value as JSON text for Python, or the failure message. */
export type NestedCallAnswer = ToolAnswer;

const MAX_ERROR_CHARS = 10_000;
/** Room left in a frame for the message around a tool's value. */
const FRAME_OVERHEAD_BYTES = 4096;

/**
 * Serves one nested call: validates the input (the tool's own `validate`, else its JSON Schema), runs the tool,
 * turns its value into JSON the kernel can receive, and records the outcome in `returns`. Never throws: every
 * failure becomes the ToolCallError message the code sees.
 */
export async function runNestedCall(
  tool: ToolFunction | CodeModeError,
  call: NestedToolCall,
  signal: AbortSignal | undefined,
  context: unknown,
  returns: NestedToolReturn[],
): Promise<NestedCallAnswer> {
  try {
    if (tool instanceof CodeModeError) throw tool;
    const validation = await validate(tool, call.input);
    if (!validation.success) throw new ToolInputError(tool.toolName, validation.message);
    const output = await tool.definition.execute(validation.value as never, {
      toolCallId: call.toolCallId,
      functionName: tool.pythonName,
      signal,
      context,
    });
    const { valueJson, value } = toKernelValue(output, tool.toolName);
    returns.push({ toolCallId: call.toolCallId, toolName: call.toolName, output: value });
    return { ok: true, valueJson };
  } catch (error) {
    const message = errorMessage(error);
    returns.push({ toolCallId: call.toolCallId, toolName: call.toolName, error: message });
    return { ok: false, message };
  }
}

async function validate(tool: ToolFunction, input: Record<string, unknown>): Promise<ToolInputValidation> {
  if (tool.definition.validate !== undefined) return tool.definition.validate(input);
  const problems = validateJsonSchema(tool.definition.inputSchema, input);
  return problems.length === 0 ? { success: true, value: input } : { success: false, message: problems.join('; ') };
}

/**
 * A tool's value for the kernel: `valueJson`, the JSON text Python reads (what `JSON.stringify` keeps — dates
 * become strings, `undefined` becomes None — with every number exact: safe integers arrive as `int`, BigInts as
 * exact ints, NaN and ±Infinity as floats; `toPythonJson`), and `value`, the same as a JSON value for the run's
 * records (there NaN reads `null`, as the AI SDK would send it to a model). Refused when it has no JSON form or
 * would not fit in one IPC message.
 */
export function toKernelValue(value: unknown, toolName: string): { valueJson: string; value: JsonValue } {
  let valueJson: string;
  try {
    valueJson = toPythonJson(value);
  } catch (error) {
    throw new ToolResultError(toolName, `a value with no JSON form (${errorMessage(error).slice(0, 200)})`);
  }
  const size = Buffer.byteLength(valueJson, 'utf8');
  if (size > KERNEL_IPC_LIMIT_BYTES - FRAME_OVERHEAD_BYTES) {
    throw new ToolResultError(toolName, `${size} bytes of JSON, more than one message to the kernel can carry (${KERNEL_IPC_LIMIT_BYTES} bytes)`);
  }
  let recorded: JsonValue;
  try {
    recorded = JSON.parse(valueJson) as JsonValue;
  } catch {
    // NaN, Infinity or a BigInt: the record keeps what JSON.stringify makes of them.
    recorded = JSON.parse(JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item)) ?? 'null') as JsonValue;
  }
  return { valueJson, value: recorded };
}

function errorMessage(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = error.message || error.name;
  else if (typeof error === 'string') text = error;
  else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      text = String(error);
    }
  }
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}
