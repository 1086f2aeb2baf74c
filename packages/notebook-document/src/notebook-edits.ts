/**
 * The agent's edits of a notebook (the `notebook` tool's action `edit`): insert code or markdown cells at a place,
 * replace a cell's source (whole, or one literal find that must match exactly once), delete and move cells. A batch
 * is checked whole against the notebook as it is before anything changes: any bad edit (an unknown cell id, a find
 * that matches 0 or 2 times) refuses the batch with a {@link NotebookEditError} and nothing is changed. The checked
 * batch is a list of steps that {@link applyEditsToShared} writes into the shared document in one Yjs transaction
 * (one update the person's page receives at once) and {@link applyEditsToCells} into nbformat cells (the contents
 * API's file, without collaboration).
 */
import { AGENT_METADATA_KEY, AGENT_TAG } from './agent-cells.js';
import { textOf } from './notebook-view.js';
import type { CellJson } from './notebook-cells-read.js';

/** Where a cell goes: after a cell (by id), or at the start or end of the notebook (the default is the end). */
export interface EditPlace {
  readonly after?: string | undefined;
  readonly at?: 'start' | 'end' | undefined;
}

/** One edit, as the tool takes it. */
export type NotebookEdit =
  | ({ readonly op: 'insert'; readonly type: 'code' | 'markdown'; readonly source: string } & EditPlace)
  | { readonly op: 'replace'; readonly cell: string; readonly source: string; readonly find?: string | undefined }
  | { readonly op: 'delete'; readonly cell: string }
  | ({ readonly op: 'move'; readonly cell: string } & EditPlace);

/** Why a batch was refused (the tool's error `details.reason`). */
export type EditRefusal = 'cell_not_found' | 'find_not_unique' | 'bad_place' | 'cell_being_edited' | 'empty_batch';

/** A refused batch: nothing was changed. */
export class NotebookEditError extends Error {
  readonly reason: EditRefusal;
  readonly details: Record<string, unknown>;

  constructor(reason: EditRefusal, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'NotebookEditError';
    this.reason = reason;
    this.details = { reason, ...details };
  }
}

/** One checked step, positions as they are when the step runs. */
export type EditStep =
  | { readonly kind: 'insert'; readonly index: number; readonly cell: CellJson }
  | { readonly kind: 'delete'; readonly index: number; readonly id: string }
  | { readonly kind: 'move'; readonly from: number; readonly to: number; readonly id: string }
  | { readonly kind: 'source'; readonly index: number; readonly id: string; readonly start: number; readonly end: number; readonly text: string };

/** What a checked batch does, in words for the agent's answer, and the steps. */
export interface EditPlan {
  readonly steps: readonly EditStep[];
  /** One line per edit (`inserted markdown cell 3f2a… after load`). */
  readonly lines: readonly string[];
  /** Ids of the person's cells whose source the batch changes (they get the agent's `changed_by` mark). */
  readonly changed: readonly string[];
}

/** Who makes the edits, and which cells the person is typing in now. */
export interface EditContext {
  /** The MCP client's name, written into the marks. */
  readonly client?: string | undefined;
  /** Whether the person changed this cell's source in the last seconds (whole replaces of it are refused). */
  readonly typing?: ((id: string) => boolean) | undefined;
  /** A new cell id (tests pass their own). */
  readonly newId?: (() => string) | undefined;
}

interface Planned {
  id: string;
  type: string;
  source: string;
}

/** The shortest span of `before` that, replaced, gives `after` (common prefix and suffix kept: concurrent typing elsewhere in the cell merges). */
export function sourceSpan(before: string, after: string): { start: number; end: number; text: string } {
  let start = 0;
  const shortest = Math.min(before.length, after.length);
  while (start < shortest && before[start] === after[start]) start += 1;
  let tail = 0;
  while (tail < shortest - start && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail += 1;
  return { start, end: before.length - tail, text: after.slice(start, after.length - tail) };
}

function occurrences(text: string, find: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(find); at >= 0 && found.length < 3; at = text.indexOf(find, at + 1)) found.push(at);
  return found;
}

/**
 * Checks `edits` against `cells` (the notebook as it is now) and returns the steps that make them, or throws
 * {@link NotebookEditError} for the first bad edit (nothing is changed: the caller applies only a whole plan).
 */
export function planEdits(cells: readonly CellJson[], edits: readonly NotebookEdit[], context: EditContext = {}): EditPlan {
  if (edits.length === 0) throw new NotebookEditError('empty_batch', 'edits is empty: give at least one edit');
  const model: Planned[] = cells.map((cell, index) => ({ id: cell.id ?? `#${index + 1}`, type: cell.cell_type, source: textOf(cell.source) }));
  const steps: EditStep[] = [];
  const lines: string[] = [];
  const changed = new Set<string>();
  const inserted = new Set<string>();
  const newId = context.newId ?? (() => crypto.randomUUID().slice(0, 8));
  const find = (id: string, edit: number): number => {
    const index = model.findIndex((cell) => cell.id === id);
    if (index < 0) throw new NotebookEditError('cell_not_found', `edit ${edit + 1}: no cell with id ${JSON.stringify(id)} in the notebook (read it again for the current ids)`, { edit: edit + 1, cell: id });
    return index;
  };
  const place = (where: EditPlace, edit: number): number => {
    if (where.after !== undefined && where.at !== undefined) throw new NotebookEditError('bad_place', `edit ${edit + 1}: give after or at, not both`, { edit: edit + 1 });
    if (where.after !== undefined) return find(where.after, edit) + 1;
    return where.at === 'start' ? 0 : model.length;
  };
  const placeWords = (index: number): string => (index === 0 ? 'at the start' : `after ${model[index - 1]!.id}`);
  for (const [position, edit] of edits.entries()) {
    switch (edit.op) {
      case 'insert': {
        const index = place(edit, position);
        const id = newId();
        const metadata = { [AGENT_METADATA_KEY]: { agent: true, ...(context.client === undefined ? {} : { client: context.client }) }, tags: [AGENT_TAG] };
        const cell: CellJson =
          edit.type === 'code' ? { id, cell_type: 'code', source: edit.source, metadata, outputs: [], execution_count: null } : { id, cell_type: 'markdown', source: edit.source, metadata };
        lines.push(`inserted ${edit.type} cell ${id} ${placeWords(index)}`);
        steps.push({ kind: 'insert', index, cell });
        model.splice(index, 0, { id, type: edit.type, source: edit.source });
        inserted.add(id);
        break;
      }
      case 'replace': {
        const index = find(edit.cell, position);
        const cell = model[index]!;
        let span: { start: number; end: number; text: string };
        if (edit.find !== undefined) {
          if (edit.find === '') throw new NotebookEditError('find_not_unique', `edit ${position + 1}: find is empty`, { edit: position + 1, cell: cell.id, matches: 0 });
          const found = occurrences(cell.source, edit.find);
          if (found.length !== 1) {
            const count = found.length > 2 ? 'more than 2' : String(found.length);
            throw new NotebookEditError('find_not_unique', `edit ${position + 1}: find matches ${count} times in cell ${cell.id}; it must match exactly once (add surrounding text, or replace the whole source)`, {
              edit: position + 1,
              cell: cell.id,
              matches: found.length,
            });
          }
          span = { start: found[0]!, end: found[0]! + edit.find.length, text: edit.source };
        } else {
          if (!inserted.has(cell.id) && context.typing?.(cell.id) === true) {
            throw new NotebookEditError('cell_being_edited', `edit ${position + 1}: the person is typing in cell ${cell.id}; a whole replace would undo their keystrokes. Use find with the exact text to change (it merges with their typing), or try again later`, {
              edit: position + 1,
              cell: cell.id,
            });
          }
          span = sourceSpan(cell.source, edit.source);
        }
        steps.push({ kind: 'source', index, id: cell.id, ...span });
        cell.source = cell.source.slice(0, span.start) + span.text + cell.source.slice(span.end);
        if (!inserted.has(cell.id)) changed.add(cell.id);
        lines.push(`${edit.find === undefined ? 'replaced the source of' : 'replaced one match in'} cell ${cell.id}`);
        break;
      }
      case 'delete': {
        const index = find(edit.cell, position);
        steps.push({ kind: 'delete', index, id: edit.cell });
        model.splice(index, 1);
        changed.delete(edit.cell);
        lines.push(`deleted cell ${edit.cell}`);
        break;
      }
      case 'move': {
        const from = find(edit.cell, position);
        const [cell] = model.splice(from, 1);
        let to: number;
        try {
          to = place(edit, position);
        } catch (error) {
          model.splice(from, 0, cell!);
          throw error;
        }
        model.splice(to, 0, cell!);
        steps.push({ kind: 'move', from, to, id: edit.cell });
        lines.push(`moved cell ${edit.cell} ${placeWords(to)}`);
        break;
      }
    }
  }
  return { steps, lines, changed: [...changed] };
}

/** The metadata of a cell whose source the agent changed: the person's keys kept, the agent's mark added. */
export function withChangedMark(metadata: Readonly<Record<string, unknown>> | undefined, client: string | undefined): Record<string, unknown> {
  const own = (metadata?.[AGENT_METADATA_KEY] ?? {}) as Record<string, unknown>;
  return { ...metadata, [AGENT_METADATA_KEY]: { ...own, changed_by: client ?? 'unknown client' } };
}

/** Applies a plan to nbformat cells (a copy is returned; `cells` is not changed). */
export function applyEditsToCells(cells: readonly CellJson[], plan: EditPlan, client: string | undefined): CellJson[] {
  const out = cells.map((cell) => ({ ...cell }));
  for (const step of plan.steps) {
    switch (step.kind) {
      case 'insert':
        out.splice(step.index, 0, { ...step.cell });
        break;
      case 'delete':
        out.splice(step.index, 1);
        break;
      case 'move': {
        const [cell] = out.splice(step.from, 1);
        out.splice(step.to, 0, cell!);
        break;
      }
      case 'source': {
        const cell = out[step.index]!;
        const source = textOf(cell.source);
        out[step.index] = { ...cell, source: source.slice(0, step.start) + step.text + source.slice(step.end) };
        break;
      }
    }
  }
  const changed = new Set(plan.changed);
  return out.map((cell) => (cell.id !== undefined && changed.has(cell.id) ? { ...cell, metadata: withChangedMark(cell.metadata, client) } : cell));
}
