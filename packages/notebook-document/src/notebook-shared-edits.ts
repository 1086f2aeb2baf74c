/**
 * A checked edit plan written into the live shared document, in one Yjs transaction: the person's page receives the
 * whole batch as one update. The transaction's origin is this client's, never the person's, so JupyterLab's undo (a
 * `Y.UndoManager` per cell and per notebook in the person's browser, tracking only that browser's own origins) keeps
 * only the person's own steps: the agent's edit is not in it, and undoing their own steps still works around it.
 * Source changes are Yjs text operations on the span that changes, so the person's concurrent keystrokes elsewhere
 * in the cell merge rather than being overwritten.
 */
import type { ISharedCell, YNotebook } from '@jupyter/ydoc';
import { Text, type Transaction } from 'yjs';
import { withChangedMark, type EditPlan } from './notebook-edits.js';

/** The origin of the agent's edit transactions (what a reader of the document can tell them by). */
export const AGENT_EDIT_ORIGIN = 'ipython-mcp-agent-edit';

/** Applies `plan` (checked against this document's cells, in the same turn) in one transaction. */
export function applyEditsToShared(notebook: YNotebook, plan: EditPlan, client: string | undefined): void {
  // notebook.cells is updated by an observer that runs after the transaction: the steps keep their own list.
  const cells: ISharedCell[] = [...notebook.cells];
  const changed = new Set(plan.changed);
  notebook.ydoc.transact(() => {
    for (const step of plan.steps) {
      switch (step.kind) {
        case 'insert': {
          const [cell] = notebook.insertCells(step.index, [step.cell as never]);
          cells.splice(step.index, 0, cell!);
          break;
        }
        case 'delete':
          notebook.deleteCellRange(step.index, step.index + 1);
          cells.splice(step.index, 1);
          break;
        case 'move': {
          const [cell] = cells.splice(step.from, 1);
          const json = cell!.toJSON();
          notebook.deleteCellRange(step.from, step.from + 1);
          const [moved] = notebook.insertCells(step.to, [json as never]);
          cells.splice(step.to, 0, moved!);
          break;
        }
        case 'source':
          cells[step.index]!.updateSource(step.start, step.end, step.text);
          break;
      }
    }
    for (const cell of cells) {
      if (changed.has(cell.id)) cell.setMetadata(withChangedMark(cell.getMetadata() as Record<string, unknown>, client) as never);
    }
  }, AGENT_EDIT_ORIGIN);
}

/** How long after the person's last keystroke in a cell a whole replace of it is refused. */
export const TYPING_WINDOW_MS = 5_000;

/**
 * Which cells other clients (the person) changed the source of lately: every remote transaction that touches a
 * cell's source text stamps that cell's id.
 */
export class TypingTracker {
  readonly #notebook: YNotebook;
  readonly #stamps = new Map<string, number>();
  readonly #listener: (transaction: Transaction) => void;

  constructor(notebook: YNotebook) {
    this.#notebook = notebook;
    this.#listener = (transaction) => {
      if (transaction.local) return;
      for (const type of transaction.changed.keys()) {
        if (!(type instanceof Text)) continue;
        const id = (type.parent as { get?: (key: string) => unknown } | null)?.get?.('id');
        if (typeof id === 'string') this.#stamps.set(id, performance.now());
      }
    };
    notebook.ydoc.on('afterTransaction', this.#listener);
  }

  /** Whether the cell's source was changed by another client within {@link TYPING_WINDOW_MS}. */
  typing(id: string): boolean {
    const stamp = this.#stamps.get(id);
    return stamp !== undefined && performance.now() - stamp < TYPING_WINDOW_MS;
  }

  dispose(): void {
    this.#notebook.ydoc.off('afterTransaction', this.#listener);
  }
}

