// The nbformat 4.5 shapes the journal writes (https://nbformat.readthedocs.io/en/latest/format_description.html),
// only the parts it needs. Everything here is plain data; serialization happens in the writer.

/** A `stream` output: text written to stdout or stderr. */
export interface StreamOutput {
  output_type: 'stream';
  name: 'stdout' | 'stderr';
  text: string;
}

/** A MIME bundle: `text/*` and `image/*` values are strings (base64 for images), JSON types any JSON. */
export type MimeBundle = Record<string, unknown>;

/** A `display_data` output (IPython.display, matplotlib figures). */
export interface DisplayDataOutput {
  output_type: 'display_data';
  data: MimeBundle;
  metadata: Record<string, unknown>;
}

/** An `execute_result` output: the cell's final value. */
export interface ExecuteResultOutput {
  output_type: 'execute_result';
  execution_count: number | null;
  data: MimeBundle;
  metadata: Record<string, unknown>;
}

/** An `error` output: the exception a cell raised. */
export interface ErrorOutput {
  output_type: 'error';
  ename: string;
  evalue: string;
  traceback: string[];
}

/** Any output a journal code cell holds. */
export type JournalOutput = StreamOutput | DisplayDataOutput | ExecuteResultOutput | ErrorOutput;

/** A code cell as the journal records it, before it is given an id. */
export interface CodeCellRecord {
  cell_type: 'code';
  source: string;
  execution_count: number | null;
  outputs: JournalOutput[];
  metadata: Record<string, unknown>;
}

/** A markdown cell: what happened between or instead of code cells. */
export interface MarkdownCellRecord {
  cell_type: 'markdown';
  source: string;
  metadata: Record<string, unknown>;
}

/** One journal cell, before it is given an id. */
export type CellRecord = CodeCellRecord | MarkdownCellRecord;

/** A code cell. */
export function codeCell(source: string, outputs: JournalOutput[], executionCount: number | null, metadata: Record<string, unknown> = {}): CodeCellRecord {
  return { cell_type: 'code', source, execution_count: executionCount, outputs, metadata };
}

/** A markdown cell. */
export function markdownCell(source: string, metadata: Record<string, unknown> = {}): MarkdownCellRecord {
  return { cell_type: 'markdown', source, metadata };
}

/** The notebook-level metadata: a Python 3 kernel, so Jupyter and `nbconvert --execute` can run the journal. */
export function notebookMetadata(createdAt: string): Record<string, unknown> {
  return {
    kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' },
    language_info: { name: 'python' },
    ipython_mcp: { journal: 1, created: createdAt },
  };
}

const JSON_MIME = /^application\/(.*\+)?json$/;

/**
 * A MIME bundle nbformat accepts: JSON types keep any value, every other type must be text (a value that is not
 * is shown as its JSON). Images always get a `text/plain` beside them, as Jupyter writes them.
 */
export function toMimeBundle(data: unknown): MimeBundle {
  const bundle: MimeBundle = {};
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { 'text/plain': String(data) };
  for (const [mime, value] of Object.entries(data as Record<string, unknown>)) {
    if (!/^[a-zA-Z0-9]+\/[a-zA-Z0-9\-+.]+$/.test(mime)) continue;
    if (JSON_MIME.test(mime)) bundle[mime] = value;
    else bundle[mime] = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  }
  if (bundle['text/plain'] === undefined) {
    const first = Object.keys(bundle)[0];
    bundle['text/plain'] = first === undefined ? '' : `<${first}>`;
  }
  return bundle;
}
