import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { IMAGE_MIME_TYPES, MAX_IMAGE_BASE64_CHARS } from '@ipython-mcp/protocol';
import type { OperationFailure, OperationMeta } from '@ipython-mcp/worker-supervisor';
import { OPERATIONS } from '@ipython-mcp/protocol';
import { compactValue, runtimeMeta, shownRuntime } from './compact-result.js';
import { DISPLAYS_META_KEY, modelDisplay } from './display-choice.js';
import { linkOutputs } from './output-links.js';
import type { OutputResources } from '../resources/index.js';
import { compactOutputSchema, valueResult, withRunningShape } from './output-schemas.js';
import { ResultCheck, checksResultsByDefault } from './result-check.js';
import { failureText, valueText } from './result-text.js';
import type { ResultRules } from './result-rules.js';

export { runtimeMeta } from './compact-result.js';

/** The `_meta` key under which a failed cell's result carries its whole traceback when library frames were folded. */
export const TRACEBACK_META_KEY = 'ipython-mcp/traceback';

/** The `_meta` key under which every namespace result carries its full runtime metadata (clients do not show it to a model). */
export const RUNTIME_META_KEY = 'ipython-mcp/runtime';

type Json = Record<string, unknown>;

/**
 * `structured` as plain JSON. The worker never sends a value JSON cannot hold (docs/protocol.md, "Value
 * contract"); should a BigInt still arrive, it is written as its digits rather than failing the whole response
 * (`JSON.stringify` throws on BigInt).
 */
export function plainJson(structured: Json): Json {
  // A walk rather than a trial JSON.stringify: the check runs on every result, and the walk builds no string
  // (6–7 µs for an execute("1+1") result stringified, well under 1 µs walked).
  if (!holdsBigInt(structured, 0)) return structured;
  const text = JSON.stringify(structured, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  return JSON.parse(text) as Json;
}

/** Deeper than this, the walk gives up and lets JSON.stringify decide (it copies then). */
const MAX_WALK_DEPTH = 256;

function holdsBigInt(value: unknown, depth: number): boolean {
  if (typeof value === 'bigint') return true;
  if (value === null || typeof value !== 'object') return false;
  if (depth > MAX_WALK_DEPTH) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (holdsBigInt(item, depth + 1)) return true;
    return false;
  }
  for (const key in value) {
    if (holdsBigInt((value as Json)[key], depth + 1)) return true;
  }
  return false;
}

type ImageItem = { type: 'image'; data: string; mimeType: string };

/**
 * Each display bundle and the value's `images` bundle contributes its first PNG or JPEG as MCP `image` content; in
 * the structured content (and so in the text) that base64 is replaced by a short reference, so a model never reads
 * an image as text and the payload is not doubled. `structured` is the writer's own fresh compact object: its
 * `displays` and `result` are replaced in place by copies (the worker's objects are never changed).
 */
function takeImages(structured: Json): ImageItem[] {
  const images: ImageItem[] = [];
  const take = (bundle: unknown): unknown => {
    if (bundle === null || typeof bundle !== 'object' || Array.isArray(bundle)) return bundle;
    const copy: Json = { ...(bundle as Json) };
    for (const mimeType of IMAGE_MIME_TYPES) {
      const data = copy[mimeType];
      if (typeof data !== 'string' || data.length > MAX_IMAGE_BASE64_CHARS) continue;
      images.push({ type: 'image', data: data.replace(/\s+/g, ''), mimeType });
      copy[mimeType] = `[image ${images.length}: ${mimeType}, ${data.length} base64 characters, returned as MCP image content]`;
      break;
    }
    return copy;
  };
  if (Array.isArray(structured.displays)) {
    structured.displays = structured.displays.map((display: unknown) =>
      display !== null && typeof display === 'object' && 'data' in display ? { ...(display as Json), data: take((display as { data: unknown }).data) } : display,
    );
  }
  const value = structured.result;
  if (value !== null && typeof value === 'object' && 'images' in value) {
    structured.result = { ...(value as Json), images: take((value as { images: unknown }).images) };
  }
  return images;
}

const NO_IMAGES: readonly ImageItem[] = [];

function isDisplay(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** How a dynamic tool's results are written: its value as Python writes it (dynamic tools publish no output schema; the
 * check holds them to the compact call_tool result all the same). */
export const DYNAMIC_TOOL_RESULT: ResultRules = {
  name: 'call_tool',
  compact: compactValue,
  text: valueText,
  outputSchema: withRunningShape(compactOutputSchema(valueResult(OPERATIONS.call_tool.result))),
};

/** One check for the whole process: each output schema is compiled once, whichever session writes first. */
let sharedCheck: ResultCheck | undefined;

/** Options of a {@link ResultWriter}. */
export interface ResultWriterOptions {
  /**
   * Check every result against its tool's output schema (a failing one throws, a server bug). Default: in
   * development and test builds only (see {@link checksResultsByDefault}); production keeps the fast path.
   */
  checkResults?: boolean | undefined;
  /**
   * The namespace's outputs as resources: each image and spill file gets a `resource_link`, and a result is held
   * within a client's tool-result cap (output-links.ts). Without it, results carry no links.
   */
  outputs?: OutputResources | undefined;
}

/**
 * Writes tool results for one server: compact structured content (compact-result.ts), a text block for a model
 * (result-text.ts) and the full runtime metadata in `_meta`. It remembers the last epoch it reported, so that a
 * result shows `runtime.epoch` exactly when the epoch changed since the previous one.
 */
export class ResultWriter {
  private reportedEpoch = 1;

  private readonly check: ResultCheck | undefined;

  private readonly outputs: OutputResources | undefined;

  constructor(options: ResultWriterOptions = {}) {
    this.check = (options.checkResults ?? checksResultsByDefault()) ? (sharedCheck ??= new ResultCheck()) : undefined;
    this.outputs = options.outputs;
  }

  /** Notes an epoch the client has seen (runtime_status shows it); true when it differs from the last one. */
  private noteEpoch(epoch: number): boolean {
    const changed = epoch !== this.reportedEpoch;
    this.reportedEpoch = epoch;
    return changed;
  }

  /**
   * A successful result of `tool` from the worker's full result `full`, written by the tool's rules (its
   * definition). For execute, a failed cell is still this kind of result, with `isError`.
   */
  success(tool: ResultRules, full: Json, meta?: OperationMeta): CallToolResult {
    // compact builds a new object: the writer owns it and fills it in place (images, runtime).
    const structured = tool.compact(plainJson(full));
    const cell = tool.cellContent === true;
    const images = cell ? takeImages(structured) : NO_IMAGES;
    // One representation per display for the model; the whole bundles (images as their references) for programs.
    const bundles = cell && Array.isArray(structured.displays) ? structured.displays : undefined;
    if (bundles !== undefined) structured.displays = bundles.map((display: unknown) => (isDisplay(display) ? modelDisplay(display) : display));
    const fullTraceback = cell ? this.takeFullTraceback(structured) : undefined;
    if (tool.reportsEpoch === true && typeof full.epoch === 'number') this.noteEpoch(full.epoch);
    if (meta) {
      const runtime = shownRuntime(meta, this.noteEpoch(meta.epoch));
      if (runtime) structured.runtime = runtime;
    }
    const text = tool.text(structured);
    const result: CallToolResult = { content: images.length === 0 ? [{ type: 'text', text }] : [{ type: 'text', text }, ...images], structuredContent: structured };
    if (this.outputs) linkOutputs(result, structured, tool.text, this.outputs, bundles);
    this.check?.check(tool, structured);
    if (meta) result._meta = { [RUNTIME_META_KEY]: runtimeMeta(meta) };
    if (bundles !== undefined) result._meta = { ...result._meta, [DISPLAYS_META_KEY]: bundles };
    if (fullTraceback !== undefined) result._meta = { ...result._meta, [TRACEBACK_META_KEY]: fullTraceback };
    if (tool.isError?.(full) === true) result.isError = true;
    return result;
  }

  /**
   * Takes a failed cell's whole traceback out of its error (the worker folded library frames, failure.py, and sent
   * the unfolded one beside only when folding changed something): programs read it in `_meta`, the model does not.
   */
  private takeFullTraceback(structured: Json): string | undefined {
    const error = structured.error;
    if (error === null || typeof error !== 'object' || typeof (error as Json).full_traceback !== 'string') return undefined;
    const whole = (error as Json).full_traceback as string;
    // compactResult made this error object for this result: changing it changes no one else's.
    delete (error as Json).full_traceback;
    return whole;
  }

  /**
   * A structured failure of `tool`: `isError`, the error object, the fields every failure of the tool states
   * (`failureFields`) and the runtime metadata that says something, never user values.
   */
  failure(tool: ResultRules, error: OperationFailure, meta?: OperationMeta): CallToolResult {
    const structured: Json = {
      ...tool.failureFields,
      error: {
        code: error.code,
        message: error.message,
        ...(error.retryable !== undefined ? { retryable: error.retryable } : {}),
        ...(error.retryAfterMs !== undefined ? { retry_after_ms: error.retryAfterMs } : {}),
        ...(error.details !== undefined ? { details: error.details } : {}),
      },
    };
    if (meta) {
      const runtime = shownRuntime(meta, this.noteEpoch(meta.epoch), error.code);
      if (runtime) structured.runtime = runtime;
    }
    const shown = plainJson(structured);
    this.check?.check(tool, shown);
    const result: CallToolResult = { isError: true, content: [{ type: 'text', text: failureText(shown) }], structuredContent: shown };
    if (meta) result._meta = { [RUNTIME_META_KEY]: runtimeMeta(meta) };
    return result;
  }
}
