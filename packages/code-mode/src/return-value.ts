import { IMAGE_MIME_TYPES } from '@ipython-mcp/protocol';
import { KernelOperationError } from './errors.js';
import type { JsonValue } from './json-schema.js';
import { describeResultCut, parseResultCut, type ResultCut } from './result-cut.js';

/** Printed output kept per run_code call: 10 MiB of characters (the worker's `max_text_chars`). */
export const MAX_OUTPUT_CHARS = 10 * 1024 * 1024;


/** An image the model can see. */
export interface ImagePart {
  type: 'image';
  /** `image/png` or `image/jpeg`. */
  mediaType: string;
  /** Base64 data. */
  data: string;
}

/** Text in a content list. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** One item of a content-list return. */
export type ContentPart = TextPart | ImagePart;

/**
 * What run_code returns, following the seed's table: a `value` (the result; `{}`; `{output}`;
 * `{output, result}`) or, when images are involved, a `content` list (printed text, images, then the result).
 */
export type CodeModeReturn = { kind: 'value'; value: JsonValue } | { kind: 'content'; parts: ContentPart[] };

/** The last expression's value as the worker rendered it. */
export type CellResult =
  | { kind: 'json'; value: JsonValue }
  | { kind: 'repr'; repr: string; images: ImagePart[] };

/** The parts of a `run_code` reply that Code Mode uses (docs/protocol.md). */
export interface RunCodeReply {
  status: 'ok' | 'error';
  executionCount: number;
  output: string;
  outputOmittedChars: number;
  result: CellResult | null;
  resultTruncated: boolean;
  /** What bounding the result dropped, with exact counts; null when nothing was (or no report came). */
  resultCut: ResultCut | null;
  images: ImagePart[];
  imagesOmitted: number;
  error: { kind: string; type: string; message: string; traceback: string } | null;
  toolCallsMade: number;
}

/** Reads a `run_code` reply, trusting nothing: a malformed one is a {@link KernelOperationError}. */
export function parseRunCodeReply(raw: Record<string, unknown>): RunCodeReply {
  const fail = (what: string): never => {
    throw new KernelOperationError(`the kernel sent a malformed run_code reply (${what})`, { wireCode: 'protocol_error' });
  };
  const status = raw.status === 'ok' || raw.status === 'error' ? raw.status : fail('status');
  const output = typeof raw.output === 'string' ? raw.output : fail('output');
  const truncated = isRecord(raw.truncated) ? raw.truncated : {};
  const images: ImagePart[] = [];
  const displays = Array.isArray(raw.displays) ? raw.displays : [];
  for (const display of displays) {
    const image = isRecord(display) ? pickImage(display.data) : undefined;
    if (image !== undefined) images.push(image);
  }
  return {
    status,
    executionCount: count(raw.execution_count),
    output,
    outputOmittedChars: count(raw.output_omitted_chars),
    result: parseResult(raw.result),
    resultTruncated: truncated.result === true,
    resultCut: parseResultCut(raw.result_cut),
    images,
    imagesOmitted: count(raw.displays_omitted) + (displays.length - images.length),
    error: parseError(raw.error),
    toolCallsMade: count(raw.tool_calls_made),
  };
}

function parseResult(raw: unknown): CellResult | null {
  if (!isRecord(raw)) return null;
  if (raw.kind === 'json') return { kind: 'json', value: (raw.value ?? null) as JsonValue };
  if (raw.kind === 'repr' && typeof raw.repr === 'string') {
    const image = pickImage(raw.images);
    return { kind: 'repr', repr: raw.repr, images: image === undefined ? [] : [image] };
  }
  return null;
}

function parseError(raw: unknown): RunCodeReply['error'] {
  if (!isRecord(raw)) return null;
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  return { kind: text(raw.kind), type: text(raw.type) || 'Exception', message: text(raw.message), traceback: text(raw.traceback) };
}

function pickImage(bundle: unknown): ImagePart | undefined {
  if (!isRecord(bundle)) return undefined;
  for (const mediaType of IMAGE_MIME_TYPES) {
    const data = bundle[mediaType];
    if (typeof data === 'string' && data.length > 0) return { type: 'image', mediaType, data: data.replace(/\s+/g, '') };
  }
  return undefined;
}

/**
 * The printed output as the model sees it: the kept text and, when the cap cut it, a note of exactly how many
 * characters were dropped.
 */
export function printedOutput(reply: RunCodeReply): string {
  if (reply.outputOmittedChars === 0) return reply.output;
  const separator = reply.output.endsWith('\n') || reply.output === '' ? '' : '\n';
  return (
    `${reply.output}${separator}[output truncated: ${reply.outputOmittedChars.toLocaleString('en-US')} more characters were ` +
    `dropped; run_code keeps the first ${MAX_OUTPUT_CHARS.toLocaleString('en-US')} characters (10 MiB) of printed output]\n`
  );
}

/**
 * Shapes a successful reply into the run_code return:
 *
 * | situation | return |
 * | --- | --- |
 * | a result, nothing printed | the result |
 * | nothing | `{}` |
 * | printed output only | `{output}` |
 * | printed output and a result | `{output, result}` |
 * | displayed images | `[text?, ...images, result?]` |
 * | an image result | `[text?, image]` |
 *
 * A result with a JSON form is data; any other is its repr.
 */
export function shapeReturn(reply: RunCodeReply): CodeModeReturn {
  let output = printedOutput(reply);
  const notes: string[] = [];
  if (reply.resultTruncated) notes.push(describeResultCut(reply.resultCut) ?? '[the result was cut to the kernel limits on size and depth]');
  if (reply.imagesOmitted > 0) notes.push(`[${reply.imagesOmitted} displayed item(s) were too large or too many to return]`);
  if (notes.length > 0) output += `${output === '' || output.endsWith('\n') ? '' : '\n'}${notes.join('\n')}\n`;
  const result = reply.result;
  const resultImages = result?.kind === 'repr' ? result.images : [];
  if (reply.images.length > 0 || resultImages.length > 0) {
    const parts: ContentPart[] = [];
    if (output !== '') parts.push({ type: 'text', text: output });
    parts.push(...reply.images);
    if (resultImages.length > 0) parts.push(...resultImages);
    else if (result !== null) parts.push({ type: 'text', text: resultText(result) });
    return { kind: 'content', parts };
  }
  const value = result === null ? undefined : result.kind === 'json' ? result.value : result.repr;
  if (output === '') return { kind: 'value', value: value === undefined ? {} : value };
  return { kind: 'value', value: value === undefined ? { output } : { output, result: value } };
}

function resultText(result: CellResult): string {
  return result.kind === 'json' ? JSON.stringify(result.value) : result.repr;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
