/**
 * The `notebook` tool: the person's notebook itself, beside the namespace. One tool with an `action` (read, edit,
 * run), published only when the backend has a notebook (a Jupyter server with `--notebook`); see
 * docs/decisions (notebook-tools). What a notebook is and how it is changed is the embedder's
 * ({@link NotebookActions}: the shared document or the contents API); running a cell is an `execute` of its source
 * through this namespace's own tool caller (admission, deadline, interrupt, bounded answer), whose outputs the
 * embedder writes into that cell.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { DocumentTools, ExecuteCell } from '../resources/index.js';
import { failureText } from '../results/index.js';
import { TIMEOUT_ARGUMENT, timeoutProperty } from './call-deadline.js';
import { publishedInputSchema } from './published-tools.js';

/** The tool's name. */
export const NOTEBOOK_TOOL_NAME = 'notebook';

const cellId = z.string().min(1).max(200);
const place = { after: cellId.optional(), at: z.enum(['start', 'end']).optional() };

const editSchema = z
  .object({
    op: z.enum(['insert', 'replace', 'delete', 'move']),
    cell: cellId.optional(),
    type: z.enum(['code', 'markdown']).optional(),
    source: z.string().max(1_000_000).optional(),
    find: z.string().max(1_000_000).optional(),
    ...place,
  })
  .strict();

/** The tool's arguments. */
export const NOTEBOOK_INPUT = z
  .object({
    action: z.enum(['list', 'open', 'read', 'edit', 'run']),
    path: z.string().min(1).max(1000).optional(),
    create: z.boolean().optional(),
    start: z.number().int().min(1).optional(),
    count: z.number().int().min(1).optional(),
    edits: z.array(editSchema).min(1).max(200).optional(),
    cells: z.array(cellId).min(1).max(1000).optional(),
    from: cellId.optional(),
    to: cellId.optional(),
  })
  .strict();

const DESCRIPTION =
  "The person's Jupyter notebook itself. Use execute for your own work in the namespace (it is kept as a new cell " +
  'at the end); use this to read, change or run the notebook\'s cells. read: cells with ids, source, [count], who ' +
  'changed them, short outputs (start, count: a page). edit: `edits` applied as one change: insert {type, source, ' +
  'after|at}, replace {cell, source, find?: text matching once}, delete {cell}, move {cell, after|at}. run: `cells` ' +
  '(ids) or from/to (inclusive; neither: all) in order in the kernel, stopping at an error; outputs land in the ' +
  'cells, answers as execute.';

/** What the tool says first when the model chooses the notebook (list and open). */
const CHOOSE_DESCRIPTION =
  "Notebooks on the person's Jupyter server. list: the notebooks (path, running kernel, which is current). open " +
  '{path, create?: a new one}: makes it the current notebook; execute and this tool then act on it, in its kernel ' +
  '(a new namespace). Until one is open, execute runs in a kernel of its own and read/edit/run answer no_notebook. ';

/** The choosing part of the tool: its actions and fields, left out of the schema where the notebook is fixed. */
const CHOOSE_ACTIONS = ['list', 'open'];
const CHOOSE_FIELDS = ['path', 'create'];

/** One edit as the embedder takes it (the tool checks the fields each op needs). */
export type NotebookToolEdit =
  | { op: 'insert'; type: 'code' | 'markdown'; source: string; after?: string; at?: 'start' | 'end' }
  | { op: 'replace'; cell: string; source: string; find?: string }
  | { op: 'delete'; cell: string }
  | { op: 'move'; cell: string; after?: string; at?: 'start' | 'end' };

/** Which cells to run: listed ids, or a range (both ends inclusive; none: every code cell). */
export type RunSelection = { cells: string[] } | { from?: string | undefined; to?: string | undefined };

/** A cell to run: its id and the source sent to the kernel. */
export interface CellToRun {
  readonly id: string;
  readonly position: number;
  readonly source: string;
}

/** A refusal of the notebook's: nothing was changed. `details.reason` says which (`cell_not_found`, ...). */
export class NotebookToolError extends Error {
  readonly code: 'invalid_arguments' | 'runtime_unavailable';
  readonly details: Record<string, unknown>;

  constructor(code: NotebookToolError['code'], message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'NotebookToolError';
    this.code = code;
    this.details = details;
  }
}

/** What the embedder does with its notebook. Each method throws {@link NotebookToolError} for a refusal. */
export interface NotebookActions {
  /** A page of cells as text (runs nothing). */
  read(page: { start?: number | undefined; count?: number | undefined }): Promise<string>;
  /** Applies the batch as one change, or nothing; answers one line per edit. */
  edit(edits: NotebookToolEdit[]): Promise<string>;
  /** The code cells `selection` names, in notebook order (markdown and raw cells are skipped). */
  cellsToRun(selection: RunSelection): Promise<CellToRun[]>;
  /** The run that called {@link cellsToRun} ended (whether or not that call succeeded). */
  runEnded?(): void;
  /** The next execute of `code` writes into cell `id`; returns the withdrawal (for a run that did not start). */
  claim(id: string, code: string): () => void;
  /** A line the run's answer ends with (e.g. why outputs are not written into the file), if any. */
  runNote?(): string | undefined;
  /** The server's notebooks, as text (given when the model chooses the notebook; absent with a fixed one). */
  list?(): Promise<string>;
  /** Makes the notebook at `path` the current one (`create`: a new notebook there); answers what changed. */
  open?(path: string, create: boolean): Promise<string>;
}

/** Characters of cell answers a run gathers; past them, later cells answer with their first line only. */
const RUN_TEXT_CHARS = 66_000;

function failure(code: string, message: string, details?: Record<string, unknown>): CallToolResult {
  const structured = { error: { code, message, ...(details === undefined ? {} : { details }) } };
  return { isError: true, content: [{ type: 'text', text: failureText(structured) }], structuredContent: structured };
}

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

/** Checks the fields each op needs and drops the rest. */
function checkedEdits(edits: z.infer<typeof editSchema>[]): NotebookToolEdit[] | string {
  const out: NotebookToolEdit[] = [];
  for (const [index, edit] of edits.entries()) {
    const where = { ...(edit.after === undefined ? {} : { after: edit.after }), ...(edit.at === undefined ? {} : { at: edit.at }) };
    const need = (fields: Array<keyof typeof edit>): string | undefined => {
      const missing = fields.filter((field) => edit[field] === undefined);
      return missing.length === 0 ? undefined : `edit ${index + 1} (${edit.op}) needs ${missing.join(' and ')}`;
    };
    const missing = need(edit.op === 'insert' ? ['type', 'source'] : edit.op === 'replace' ? ['cell', 'source'] : ['cell']);
    if (missing !== undefined) return missing;
    if (edit.op === 'insert') out.push({ op: 'insert', type: edit.type!, source: edit.source!, ...where });
    else if (edit.op === 'replace') out.push({ op: 'replace', cell: edit.cell!, source: edit.source!, ...(edit.find === undefined ? {} : { find: edit.find }) });
    else if (edit.op === 'delete') out.push({ op: 'delete', cell: edit.cell! });
    else out.push({ op: 'move', cell: edit.cell!, ...where });
  }
  return out;
}

/** The first text line of an execute answer. */
function firstLine(result: CallToolResult): string {
  const block = result.content.find((each) => each.type === 'text');
  return block?.type === 'text' ? (block.text.split('\n')[0] ?? '') : '';
}

async function runCells(actions: NotebookActions, cells: CellToRun[], execute: ExecuteCell, timeoutSeconds: number | undefined): Promise<CallToolResult> {
  if (cells.length === 0) return text('no code cells to run');
  const content: CallToolResult['content'] = [];
  const lines: string[] = [];
  let used = 0;
  let failed = false;
  let ran = 0;
  for (const cell of cells) {
    const release = actions.claim(cell.id, cell.source);
    let result: CallToolResult;
    try {
      result = await execute(cell.source, timeoutSeconds);
    } finally {
      // A run the kernel never saw (refused, withdrawn at its deadline) must not take a later agent cell.
      release();
    }
    ran += 1;
    const header = `--- cell ${cell.position} · id ${cell.id}`;
    const body = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
    if (used + body.length <= RUN_TEXT_CHARS) {
      lines.push(header, body);
      used += body.length;
      content.push(...result.content.filter((block) => block.type !== 'text'));
    } else {
      lines.push(`${header}: ${firstLine(result)} [answer not shown: over the result budget]`);
    }
    if (result.isError === true) {
      failed = true;
      break;
    }
  }
  if (failed && ran < cells.length) lines.push(`[stopped at the error: ${cells.length - ran} cells not run: ${cells.slice(ran).map((cell) => cell.id).join(', ')}]`);
  const note = actions.runNote?.();
  if (note !== undefined) lines.push(note);
  return { ...(failed ? { isError: true } : {}), content: [{ type: 'text', text: lines.join('\n') }, ...content] };
}

/** The `notebook` tool over `actions`. */
export function notebookTools(actions: NotebookActions): DocumentTools {
  return {
    list: (maxTimeoutSeconds) => {
      const inputSchema = publishedInputSchema(NOTEBOOK_INPUT);
      const choosing = actions.list !== undefined && actions.open !== undefined;
      if (!choosing) {
        const action = inputSchema.properties?.action as { enum?: string[] } | undefined;
        if (action?.enum !== undefined) action.enum = action.enum.filter((each) => !CHOOSE_ACTIONS.includes(each));
        for (const name of CHOOSE_FIELDS) delete inputSchema.properties?.[name];
      }
      // zod writes an integer's safe bound as its maximum; the model needs only the minimum (the server checks both).
      for (const name of ['start', 'count']) delete (inputSchema.properties?.[name] as Record<string, unknown> | undefined)?.maximum;
      inputSchema.properties = { ...inputSchema.properties, [TIMEOUT_ARGUMENT]: timeoutProperty(maxTimeoutSeconds) };
      return [
        {
          name: NOTEBOOK_TOOL_NAME,
          title: 'The notebook',
          description: choosing ? CHOOSE_DESCRIPTION + DESCRIPTION : DESCRIPTION,
          inputSchema,
          annotations: { title: 'The notebook', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
        },
      ];
    },
    call: (name, args, execute) => {
      if (name !== NOTEBOOK_TOOL_NAME) return undefined;
      return callNotebook(actions, args, execute);
    },
  };
}

async function callNotebook(actions: NotebookActions, args: Record<string, unknown>, execute: ExecuteCell): Promise<CallToolResult> {
  const { [TIMEOUT_ARGUMENT]: timeout, ...rest } = args;
  if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout > 0))) return failure('invalid_arguments', `invalid arguments for notebook: ${TIMEOUT_ARGUMENT} must be a positive number`);
  const parsed = NOTEBOOK_INPUT.safeParse(rest);
  if (!parsed.success) return failure('invalid_arguments', `invalid arguments for notebook: ${z.prettifyError(parsed.error).slice(0, 2000)}`);
  const input = parsed.data;
  try {
    switch (input.action) {
      case 'list':
        if (actions.list === undefined) return failure('invalid_arguments', 'invalid arguments for notebook: this server serves one notebook, named at start (--notebook): there is nothing to list', { reason: 'fixed_notebook' });
        return text(await actions.list());
      case 'open':
        if (actions.open === undefined) return failure('invalid_arguments', 'invalid arguments for notebook: this server serves one notebook, named at start (--notebook): another cannot be opened', { reason: 'fixed_notebook' });
        if (input.path === undefined) return failure('invalid_arguments', 'invalid arguments for notebook: action open needs path', { reason: 'missing_field' });
        return text(await actions.open(input.path, input.create === true));
      case 'read':
        return text(await actions.read({ start: input.start, count: input.count }));
      case 'edit': {
        if (input.edits === undefined) return failure('invalid_arguments', 'invalid arguments for notebook: action edit needs edits');
        const edits = checkedEdits(input.edits);
        if (typeof edits === 'string') return failure('invalid_arguments', `invalid arguments for notebook: ${edits}`, { reason: 'missing_field' });
        return text(await actions.edit(edits));
      }
      case 'run': {
        if (input.cells !== undefined && (input.from !== undefined || input.to !== undefined)) {
          return failure('invalid_arguments', 'invalid arguments for notebook: give cells or from/to, not both');
        }
        const selection: RunSelection = input.cells !== undefined ? { cells: input.cells } : { from: input.from, to: input.to };
        try {
          return await runCells(actions, await actions.cellsToRun(selection), execute, timeout as number | undefined);
        } finally {
          actions.runEnded?.();
        }
      }
    }
  } catch (error) {
    if (error instanceof NotebookToolError) return failure(error.code, error.message, error.details);
    throw error;
  }
}
