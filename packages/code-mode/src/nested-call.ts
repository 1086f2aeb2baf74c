import { toPythonJson } from '@ipython-mcp/protocol';
import type { ToolAnswer } from '@ipython-mcp/worker-supervisor';
import type { ConsentDecision, PolicySubject } from './consent.js';
import { CodeModeError, ToolInputError, ToolResultError } from './errors.js';
import { compileJsonSchema, type CompiledSchema } from './json-schema-compile.js';
import type { JsonValue } from './json-schema.js';
import { KERNEL_IPC_LIMIT_BYTES } from './kernel-ipc-limit.js';
import { NOT_PLAIN, plainJsonCopy } from './plain-json.js';
import type { ToolFunction } from './tool-functions.js';

/** One nested call as the code made it. */
export interface NestedToolCall {
  /** `<run_code call id>:<sequence>`. */
  toolCallId: string;
  toolName: string;
  /** The Python function the code called. */
  functionName: string;
  /** The arguments as the code passed them (before validation). */
  input: Record<string, unknown>;
  /** What the consent gate decided (unset when Code Mode has no gate, or the tool does not exist). */
  decision?: ConsentDecision | undefined;
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
const MAX_VALUE_BYTES = KERNEL_IPC_LIMIT_BYTES - FRAME_OVERHEAD_BYTES;

/**
 * A tool as nested calls serve it: its function, and the check of its input against its JSON Schema, compiled once
 * when Code Mode is made (undefined when the tool validates its input itself).
 */
export interface ServedTool {
  tool: ToolFunction;
  checkInput: CompiledSchema | undefined;
  /** The tool as the consent gate looks it up. */
  subject: PolicySubject;
}

/** Prepares a tool for nested calls: compiles its input schema unless it brings its own `validate`. */
export function serveTool(tool: ToolFunction): ServedTool {
  const { definition } = tool;
  const subject: PolicySubject = { server: definition.group, tool: definition.originalName ?? tool.toolName, functionName: tool.pythonName, annotations: definition.annotations };
  return { tool, checkInput: definition.validate === undefined ? compileJsonSchema(definition.inputSchema) : undefined, subject };
}

/**
 * Serves one nested call: validates the input (the tool's own `validate`, else its JSON Schema), runs the tool,
 * turns its value into JSON the kernel can receive, and records the outcome in `returns`. Never throws: every
 * failure becomes the ToolCallError message the code sees.
 */
export async function runNestedCall(
  served: ServedTool | CodeModeError,
  call: NestedToolCall,
  signal: AbortSignal | undefined,
  context: unknown,
  returns: NestedToolReturn[],
): Promise<NestedCallAnswer> {
  try {
    if (CodeModeError.isInstance(served)) throw served;
    const { tool, checkInput } = served;
    let input: unknown = call.input;
    if (checkInput !== undefined) {
      // The common case, checked without a promise: the compiled schema is synchronous.
      const problems = checkInput(input);
      if (problems.length > 0) throw new ToolInputError(tool.toolName, problems.join('; '));
    } else {
      const validation = await (tool.definition.validate as NonNullable<ToolFunction['definition']['validate']>)(input);
      if (!validation.success) throw new ToolInputError(tool.toolName, validation.message);
      input = validation.value;
    }
    const pending: unknown = tool.definition.execute(input as never, {
      toolCallId: call.toolCallId,
      functionName: tool.pythonName,
      signal,
      context,
    });
    // Awaited only when it is a promise: a plain value needs no extra microtask turn.
    const output: unknown = isPromiseLike(pending) ? await pending : pending;
    const { valueJson, value } = toKernelValue(output, tool.toolName);
    returns.push({ toolCallId: call.toolCallId, toolName: call.toolName, output: value });
    return { ok: true, valueJson };
  } catch (error) {
    const message = errorMessage(error);
    returns.push({ toolCallId: call.toolCallId, toolName: call.toolName, error: message });
    return { ok: false, message };
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * A tool's value for the kernel: `valueJson`, the JSON text Python reads (what `JSON.stringify` keeps — dates
 * become strings, `undefined` becomes None — with every number exact: safe integers arrive as `int`, BigInts as
 * exact ints, NaN and ±Infinity as floats; `toPythonJson`), and `value`, the same as a JSON value for the run's
 * records (there NaN reads `null`, as the AI SDK would send it to a model). Refused when it has no JSON form or
 * would not fit in one IPC message.
 */
export function toKernelValue(value: unknown, toolName: string): { valueJson: string; value: JsonValue } {
  let plain: JsonValue | typeof NOT_PLAIN;
  try {
    plain = plainJsonCopy(value);
  } catch {
    plain = NOT_PLAIN; // a throwing getter or proxy: the general path words the failure
  }
  if (plain !== NOT_PLAIN) {
    // Plain JSON (most values): its JSON.stringify is toPythonJson's text, and the copy is what JSON.parse of that
    // text would give the record.
    const valueJson = JSON.stringify(plain);
    checkSize(valueJson, toolName);
    return { valueJson, value: plain };
  }
  let valueJson: string;
  try {
    valueJson = toPythonJson(value);
  } catch (error) {
    throw new ToolResultError(toolName, `a value with no JSON form (${errorMessage(error).slice(0, 200)})`);
  }
  checkSize(valueJson, toolName);
  let recorded: JsonValue;
  try {
    recorded = JSON.parse(valueJson) as JsonValue;
  } catch {
    // NaN, Infinity or a BigInt: the record keeps what JSON.stringify makes of them.
    recorded = JSON.parse(JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item)) ?? 'null') as JsonValue;
  }
  return { valueJson, value: recorded };
}

/** Refuses JSON text that would not fit in one message to the kernel. */
function checkSize(valueJson: string, toolName: string): void {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: short text needs no count.
  if (valueJson.length * 3 <= MAX_VALUE_BYTES) return;
  const size = Buffer.byteLength(valueJson, 'utf8');
  if (size > MAX_VALUE_BYTES) {
    throw new ToolResultError(toolName, `${size} bytes of JSON, more than one message to the kernel can carry (${KERNEL_IPC_LIMIT_BYTES} bytes)`);
  }
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
