/**
 * The notebook's cells for the agent's `notebook` tool (action `read`): each cell with its 1-based position, stable
 * id, type, who wrote or last changed it (the agent's marks in the cell's metadata), its source, its execution count
 * and its outputs in the short forms of the notebook resource, a page at a time. Works on nbformat cells, so the live
 * shared document (`YNotebook.toJSON()`) and a file read through the contents API read alike. Runs nothing.
 */
import { AGENT_METADATA_KEY } from './agent-cells.js';
import { NOTEBOOK_OUTPUT_URI_PREFIX, renderOutput, textOf } from './notebook-view.js';

/** One cell as nbformat stores it (what `YNotebook.toJSON()` and the contents API give). */
export interface CellJson {
  readonly id?: string | undefined;
  readonly cell_type: string;
  readonly source: string | readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
  readonly execution_count?: number | null | undefined;
  readonly outputs?: ReadonlyArray<Record<string, unknown>> | undefined;
}

/** Which cells to read and within how many characters. */
export interface ReadCellsOptions {
  /** The notebook's path (named in the first line). */
  readonly path: string;
  /** Where the cells come from, for the first line: `live` (the shared document) or `saved` (the file). */
  readonly origin: 'live' | 'saved';
  /** First cell to show, 1-based; default 1. */
  readonly start?: number | undefined;
  /** At most this many cells; default all that fit. */
  readonly count?: number | undefined;
  /** Budget of the whole text, in characters. */
  readonly maxChars: number;
}

/** What a read gives: the text the model reads, and where the next page starts (when cells were left out). */
export interface CellsPage {
  readonly text: string;
  /** Cells in the notebook. */
  readonly total: number;
  /** The 1-based positions shown, first and last (0 and 0 when none). */
  readonly first: number;
  readonly last: number;
  /** The `start` of the next page, when cells after `last` were not shown. */
  readonly next?: number | undefined;
}

/** The marks the agent leaves in a cell's metadata (`ipython_mcp`): who wrote it, who changed it last. */
export interface AgentMarks {
  /** The agent wrote the cell (an `execute`, or an insert). */
  readonly agent?: boolean | undefined;
  /** The MCP client of the agent that wrote it. */
  readonly client?: string | undefined;
  /** The agent (this client) changed the cell's source last. */
  readonly changed_by?: string | undefined;
  /** The agent (this client) ran the cell last. */
  readonly run_by?: string | undefined;
}

/** The agent's marks of a cell, read from its metadata. */
export function agentMarks(metadata: Readonly<Record<string, unknown>> | undefined): AgentMarks {
  const marks = metadata?.[AGENT_METADATA_KEY];
  return marks !== null && typeof marks === 'object' ? (marks as AgentMarks) : {};
}

/** Who wrote the cell and who changed or ran it last, in a few words. */
function authorship(metadata: Readonly<Record<string, unknown>> | undefined): string {
  const marks = agentMarks(metadata);
  const words: string[] = [];
  if (marks.agent === true) words.push(`by the agent${marks.client === undefined ? '' : ` (${marks.client})`}`);
  if (marks.changed_by !== undefined) words.push(`edited by the agent (${marks.changed_by})`);
  if (marks.run_by !== undefined) words.push(`run by the agent (${marks.run_by})`);
  return words.length === 0 ? '' : ` · ${words.join(', ')}`;
}

/** One cell as text: a header line (position, type, count, authorship, id), the source, then its outputs. */
export function renderCellJson(cell: CellJson, position: number, maxOutput: number): string {
  const source = textOf(cell.source);
  const id = cell.id ?? `#${position}`;
  if (cell.cell_type !== 'code') return `--- cell ${position} · ${cell.cell_type}${authorship(cell.metadata)} · id ${id}\n${source}`;
  const count = cell.execution_count === null || cell.execution_count === undefined ? ' ' : String(cell.execution_count);
  const lines = [`--- cell ${position} · code [${count}]${authorship(cell.metadata)} · id ${id}`, source];
  for (const [index, output] of (cell.outputs ?? []).entries()) {
    lines.push(`→ ${renderOutput(output, `${NOTEBOOK_OUTPUT_URI_PREFIX}${id}/${index}`, maxOutput)}`);
  }
  return lines.join('\n');
}

/** One text output's share of the budget at most. */
const OUTPUT_SHARE = 0.1;

/**
 * A page of `cells` as text within `options.maxChars`: from `start`, as many cells as `count` allows and the budget
 * holds (always at least one, cut if it alone is over the budget), then a line naming the next page's `start`.
 */
export function readCells(cells: readonly CellJson[], options: ReadCellsOptions): CellsPage {
  const total = cells.length;
  const start = Math.max(1, Math.floor(options.start ?? 1));
  const end = options.count === undefined ? total : Math.min(total, start - 1 + Math.max(1, Math.floor(options.count)));
  const maxOutput = Math.max(200, Math.floor(options.maxChars * OUTPUT_SHARE));
  const from = options.origin === 'live' ? 'the live shared document (unsaved edits included)' : 'the saved file (this server has no real-time collaboration)';
  const header = `notebook ${options.path}: ${total} cells, read from ${from}`;
  if (start > total) {
    return { text: `${header}\n[no cell ${start}: the notebook has ${total} cells]`, total, first: 0, last: 0 };
  }
  const parts = [header];
  let used = header.length;
  let last = start - 1;
  for (let position = start; position <= end; position += 1) {
    let text = renderCellJson(cells[position - 1]!, position, maxOutput);
    const room = options.maxChars - used - 1;
    if (text.length > room) {
      if (position !== start) break;
      text = `${text.slice(0, Math.max(0, room - 80))}… [cell cut: ${text.length} characters]`;
    }
    parts.push(text);
    used += text.length + 1;
    last = position;
  }
  const next = last < total ? last + 1 : undefined;
  if (next !== undefined) {
    const why = last < end ? 'over the result budget' : 'past count';
    parts.push(`[cells ${next}–${total} not shown (${why}): read with start=${next}]`);
  }
  return { text: parts.join('\n'), total, first: start, last, ...(next === undefined ? {} : { next }) };
}
