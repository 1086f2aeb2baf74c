/**
 * The live shared notebook as compact text for the agent: its cells in order (markdown and code, and raw), each code
 * cell's execution count and its outputs in short form (text cut to a share of the budget, images as links), the
 * whole within a character budget. Read from the shared document, so it holds what the person typed and has not
 * saved.
 */
import type { ISharedCell, YNotebook } from '@jupyter/ydoc';
import { AGENT_METADATA_KEY } from './agent-cells.js';

/** The URI prefix of an image output of the attached notebook (`…/CELL_ID/INDEX`). */
export const NOTEBOOK_OUTPUT_URI_PREFIX = 'ipython-mcp://notebook/output/';

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml'];

/** One text output's share of the budget at most; the rest of the output is summarised. */
const OUTPUT_SHARE = 0.1;

/** A cell's or output's text, whether nbformat stored it as one string or a list of lines. */
export function textOf(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join('') : typeof value === 'string' ? value : JSON.stringify(value ?? '');
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/** One output in short form: stream text and errors cut to `max` characters, images as `link`. */
export function renderOutput(output: Record<string, unknown>, link: string, max: number): string {
  switch (output.output_type) {
    case 'stream':
      return `${String(output.name)}: ${cut(textOf(output.text), max)}`;
    case 'error':
      return `error: ${String(output.ename)}: ${cut(String(output.evalue), max)}`;
    case 'execute_result':
    case 'display_data': {
      const data = (output.data ?? {}) as Record<string, unknown>;
      const image = IMAGE_TYPES.find((type) => data[type] !== undefined);
      const kind = output.output_type === 'execute_result' ? 'result' : 'display';
      if (image !== undefined) return `${kind}: ${image} image → ${link}`;
      const plain = data['text/markdown'] ?? data['text/plain'];
      if (plain !== undefined) return `${kind}: ${cut(textOf(plain), max)}`;
      return `${kind}: [${Object.keys(data).join(', ') || 'empty'}]`;
    }
    default:
      return `[${String(output.output_type)}]`;
  }
}

function renderCell(cell: ISharedCell, index: number, maxOutput: number): string {
  const json = cell.toJSON() as unknown as Record<string, unknown>;
  const source = textOf(json.source);
  const mark = cell.getMetadata(AGENT_METADATA_KEY) as { agent?: unknown; edited_by_person?: unknown; run_by_person?: unknown } | undefined;
  const agent = mark?.agent === true;
  const person = [mark?.edited_by_person === true ? 'edited' : '', mark?.run_by_person === true ? 'run' : ''].filter((each) => each !== '').join(' and ');
  if (cell.cell_type !== 'code') return `--- cell ${index + 1} · ${cell.cell_type} · id ${cell.id}\n${source}`;
  const count = json.execution_count === null || json.execution_count === undefined ? ' ' : String(json.execution_count);
  const lines = [`--- cell ${index + 1} · code [${count}]${agent ? ` · the agent's${person === '' ? '' : `, ${person} by the person`}` : ''} · id ${cell.id}`, source];
  const outputs = (json.outputs ?? []) as Array<Record<string, unknown>>;
  outputs.forEach((output, position) => lines.push(`→ ${renderOutput(output, `${NOTEBOOK_OUTPUT_URI_PREFIX}${cell.id}/${position}`, maxOutput)}`));
  return lines.join('\n');
}

/**
 * The notebook as text within `maxChars` characters: every cell while they fit, then a line saying how many more
 * cells there are.
 */
export function renderNotebook(notebook: YNotebook, path: string, maxChars: number): string {
  const cells = notebook.cells;
  const maxOutput = Math.max(200, Math.floor(maxChars * OUTPUT_SHARE));
  const header = `notebook ${path}: ${cells.length} cells, read from the live shared document (unsaved edits included)`;
  const parts = [header];
  let used = header.length;
  for (const [index, cell] of cells.entries()) {
    const text = renderCell(cell, index, maxOutput);
    if (used + text.length + 1 > maxChars) {
      parts.push(`[… ${cells.length - index} more cells not shown: over the result budget]`);
      break;
    }
    parts.push(text);
    used += text.length + 1;
  }
  return parts.join('\n');
}

/** The image of output `position` of cell `cellId`, as base64 and MIME type, or undefined. */
export function notebookImage(notebook: YNotebook, cellId: string, position: number): { mimeType: string; base64: string } | undefined {
  const cell = notebook.cells.find((each) => each.id === cellId);
  if (cell === undefined || cell.cell_type !== 'code') return undefined;
  const output = ((cell.toJSON() as unknown as { outputs?: Array<Record<string, unknown>> }).outputs ?? [])[position];
  const data = (output?.data ?? {}) as Record<string, unknown>;
  const mimeType = IMAGE_TYPES.find((type) => data[type] !== undefined && type !== 'image/svg+xml');
  if (mimeType === undefined) return undefined;
  return { mimeType, base64: textOf(data[mimeType]).replace(/\s+/g, '') };
}
