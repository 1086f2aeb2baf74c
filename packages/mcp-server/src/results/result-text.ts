import { codePointIndex } from '@ipython-mcp/session-journal';
import { pythonRepr } from './python-repr.js';

/**
 * The text block of a tool result, written for a model: Claude Code forwards it for every error, and a client that
 * does not read structured content forwards only this block (Codex 0.171 forwards a success's structured content).
 * It states every fact of the compact structured content, in the form a Python user reads: stdout as printed, the
 * value as `Out[n]: repr`, a traceback without IPython's banner; a bracketed note for each flag (truncation, omitted
 * counts, escaped text, exact-value places) and for runtime metadata.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An empty map, shared: no flags set, no encoded places. */
const NO_FLAGS: Readonly<Record<string, never>> = Object.freeze({});

function trimEnd(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

function count(value: unknown): string {
  return typeof value === 'number' ? value.toLocaleString('en-US') : String(value);
}

/** `[runtime: request_id 7, epoch 2, ...]`, or nothing. */
function runtimeNote(runtime: unknown): string[] {
  if (!isObject(runtime)) return [];
  const parts = Object.entries(runtime).map(([key, value]) => `${key} ${value === null ? 'none' : String(value)}`);
  const lines = [`[runtime: ${parts.join(', ')}]`];
  if (runtime.epoch_reason === 'other_client' || runtime.interruption === 'other_client') {
    lines.push(
      runtime.kernel_action === 'shutdown'
        ? "[the kernel was shut down from Jupyter (the person's Shut Down, another client's delete, or the Jupyter server stopping its kernels); names defined before are gone]"
        : "[another client of the kernel restarted the kernel (the person's Restart Kernel in Jupyter, or a REST restart); names defined before are gone]",
    );
  }
  if (runtime.stopped_by === 'other_client') {
    lines.push("[another client of the kernel stopped this cell (the person's stop button in Jupyter); ipython-mcp sent no interrupt]");
  }
  return lines;
}

/** Appends the notes for the value-contract fields of a result (or of its `result` object). */
function pushContractNotes(notes: string[], object: Json, what: string): void {
  if (isObject(object.encoded)) {
    const places = Object.entries(object.encoded).map(([path, kind]) => `${path} ${String(kind)}`);
    notes.push(`[${what} written exactly above; in structured content as strings: ${places.join(', ')}]`);
  }
  if (typeof object.encoded_omitted === 'number') notes.push(`[${count(object.encoded_omitted)} more such places not listed]`);
  pushEscapedNote(notes, object.escaped);
}

function pushEscapedNote(notes: string[], escaped: unknown): void {
  if (Array.isArray(escaped)) notes.push(`[escaped text (lone surrogates as \\udcXX) in: ${escaped.join(', ')}]`);
}

/**
 * Appends a stream's text and its truncation note (`<stream>_omitted_chars`). A head-and-tail stream
 * (`<stream>_omitted_at`) gets the note where its characters were cut out, and a line naming its spill file.
 */
function pushStream(lines: string[], stream: 'stdout' | 'stderr', structured: Json, truncated: Json): void {
  const text = structured[stream];
  const omitted = structured[`${stream}_omitted_chars`];
  const at = structured[`${stream}_omitted_at`];
  const label = stream === 'stdout' ? '' : '[stderr]\n';
  const truncation = truncated[stream] === true || typeof omitted === 'number';
  const note = `[${stream} truncated: ${count(omitted ?? 0)} characters omitted${typeof at === 'number' ? ' here' : ''}]`;
  const cut = typeof text === 'string' && typeof at === 'number' ? codePointIndex(text, at) : undefined;
  if (typeof text === 'string' && cut !== undefined && cut < text.length) {
    lines.push(`${label}${trimEnd(text.slice(0, cut))}`, note, trimEnd(text.slice(cut)));
  } else {
    if (typeof text === 'string' && text.length > 0) lines.push(`${label}${trimEnd(text)}`);
    if (truncation) lines.push(note);
  }
  const spill = structured[`${stream}_spill`];
  if (typeof spill === 'string') {
    const short = structured[`${stream}_spill_omitted_chars`];
    const cut = structured[`${stream}_spill_cut`];
    const why = typeof cut === 'string' ? `the kernel's file was not all fetched: ${cut}` : 'spill cap';
    const what = typeof short === 'number' ? `start of ${stream} (all but its last ${count(short)} characters: ${why})` : `whole ${stream}`;
    lines.push(`[${what} in ${spill}; read it with execute, e.g. open(path).read()[-5000:]]`);
  }
}

function displayLines(structured: Json, truncated: Json): string[] {
  const lines: string[] = [];
  const displays = Array.isArray(structured.displays) ? structured.displays : [];
  displays.forEach((display: unknown, index) => {
    if (!isObject(display) || !isObject(display.data)) return;
    const from = typeof display.text_from === 'string' ? `, ${display.text_from} as text` : '';
    const omitted = Array.isArray(display.omitted) ? `; left out: ${display.omitted.join(', ')}` : '';
    const label = `[display ${index + 1}${display.truncated === true ? ', truncated' : ''}${from}${omitted}]`;
    const entries = Object.entries(display.data);
    const plain = display.data['text/plain'];
    const rest = entries.filter(([mime]) => mime !== 'text/plain').map(([mime, data]) => `${mime}: ${typeof data === 'string' ? data : JSON.stringify(data)}`);
    lines.push([label, ...(typeof plain === 'string' ? [trimEnd(plain)] : []), ...rest].join('\n'));
    if (isObject(display.metadata)) lines.push(`[display ${index + 1} metadata: ${JSON.stringify(display.metadata)}]`);
  });
  if (typeof structured.displays_omitted === 'number') lines.push(`[${count(structured.displays_omitted)} more displays omitted]`);
  else if (truncated.displays === true && displays.every((display) => !isObject(display) || display.truncated !== true)) lines.push('[displays truncated]');
  return lines;
}

/** Appends the `Out[n]: ` line of the cell's value (`result`, an object) and its notes. */
function pushValue(lines: string[], result: Json, executionCount: unknown, truncated: Json): void {
  const prompt = `Out[${String(executionCount)}]: `;
  if (result.kind === 'repr' && typeof result.repr === 'string') {
    lines.push(prompt + result.repr);
    if (isObject(result.images)) for (const [mime, data] of Object.entries(result.images)) lines.push(`[value as ${mime}: ${String(data)}]`);
  } else {
    lines.push(prompt + pythonRepr(result.value, isObject(result.encoded) ? (result.encoded as Record<string, string>) : NO_FLAGS));
    pushContractNotes(lines, result, 'value');
  }
  if (truncated.result === true) lines.push('[value truncated]');
}

const ERROR_VERBS: Readonly<Record<string, string>> = { syntax: 'did not compile', interrupted: 'was interrupted', exception: 'raised' };

function errorLines(structured: Json): string[] {
  const error = structured.error;
  if (!isObject(error)) return [];
  const kind = typeof error.kind === 'string' ? error.kind : 'exception';
  const verb = ERROR_VERBS[kind] ?? kind;
  const type = String(error.type);
  const lines = [`In [${String(structured.execution_count)}] ${kind === 'exception' ? `${verb} ${type}` : `${verb} (${type})`}`];
  const traceback = typeof error.traceback === 'string' ? trimEnd(error.traceback) : '';
  if (error.traceback_truncated === true) lines.push('[traceback truncated: its start was cut]');
  if (traceback.length > 0) lines.push(traceback);
  const last = `${String(error.type)}: ${String(error.message)}`;
  if (!traceback.endsWith(String(error.message)) && !traceback.endsWith(last)) lines.push(last);
  if (error.message_truncated === true) lines.push('[error message truncated]');
  if (typeof error.filename === 'string' && error.filename.length > 0) {
    lines.push(`[in ${error.filename}${error.filename_truncated === true ? ' (name truncated)' : ''}, line ${String(error.lineno)}]`);
  }
  return lines;
}

/** The text of an execute result (a failed cell included). */
export function executeText(structured: Json): string {
  const truncated = isObject(structured.truncated) ? structured.truncated : NO_FLAGS;
  // Every execute writes this: the parts that are usually absent (displays, an error, notes) are looked at only
  // when their field is there, and every part appends to one list.
  const lines: string[] = [];
  pushStream(lines, 'stdout', structured, truncated);
  pushStream(lines, 'stderr', structured, truncated);
  if (structured.displays !== undefined || structured.displays_omitted !== undefined || truncated.displays === true) lines.push(...displayLines(structured, truncated));
  const result = structured.result;
  const hasValue = isObject(result);
  if (hasValue) pushValue(lines, result, structured.execution_count, truncated);
  const hasError = isObject(structured.error);
  if (hasError) lines.push(...errorLines(structured));
  if (!hasValue && !hasError) lines.push(`In [${String(structured.execution_count)}]: ok`);
  pushEscapedNote(lines, structured.escaped);
  if (structured.runtime !== undefined) lines.push(...runtimeNote(structured.runtime));
  return lines.join('\n');
}

/** The text of a call_function or dynamic tool result: the value as Python writes it. */
export function valueText(structured: Json): string {
  const encoded = isObject(structured.encoded) ? (structured.encoded as Record<string, string>) : NO_FLAGS;
  const lines = [pythonRepr(structured.value, encoded)];
  pushContractNotes(lines, structured, 'value');
  if (structured.truncated === true) lines.push('[value truncated]');
  lines.push(...runtimeNote(structured.runtime));
  return lines.join('\n');
}

/** The text of a failure: code, message, retry advice, details and runtime metadata, one fact per line. */
export function failureText(structured: Json): string {
  // An execute failure's `status: "error"` is what the first line already says.
  const { error, runtime, status, ...rest } = structured;
  if (status !== undefined && status !== 'error') rest.status = status;
  if (!isObject(error)) return JSON.stringify(structured);
  const lines = [`error ${String(error.code)}: ${String(error.message)}`];
  if (error.retryable !== undefined) {
    const after = error.retry_after_ms !== undefined ? `, after ${String(error.retry_after_ms)} ms` : '';
    lines.push(error.retryable === true ? `[retryable${after}]` : '[not retryable]');
  }
  if (error.details !== undefined) lines.push(`[details: ${JSON.stringify(error.details)}]`);
  if (Object.keys(rest).length > 0) lines.push(JSON.stringify(rest));
  lines.push(...runtimeNote(runtime));
  return lines.join('\n');
}

/** The text of a result that is a listing or a report (list, search, inspect, ...): its compact JSON. */
export function jsonText(structured: Json): string {
  return JSON.stringify(structured);
}
