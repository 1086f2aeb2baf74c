/**
 * The agent's cells in a shared notebook: one code cell per agent `execute`, inserted after the last cell when the
 * request is sent to the kernel, its outputs written as they arrive (bounded per cell, as the session journal bounds
 * a cell) as ranged changes a JupyterLab page applies (cell-outputs.ts), its execution count set when it ends; the
 * agent's cursor marks the cell it runs. A cell that has ended is the person's: nothing here touches it again (the
 * one exception: as it ends, it moves above another agent's cell still running, which the kernel ran after it). A cell
 * the person deleted while it ran waits: the person's undo brings it back (the same id) and its outputs and end go
 * there; otherwise its later outputs go nowhere. The agent's answer is unaffected either way.
 */
import type { YCodeCell, YNotebook } from '@jupyter/ydoc';
import { createRelativePositionFromTypeIndex } from 'yjs';
import { CellOutputs, type NbOutput } from './cell-outputs.js';

/** A MIME bundle as Jupyter sends it. */
export type Bundle = Readonly<Record<string, unknown>>;

/** One output of the agent's cell, as the kernel published it (the shape of the Jupyter client's outputs). */
export type AgentOutput =
  | { readonly type: 'stream'; readonly name: 'stdout' | 'stderr'; readonly text: string }
  | { readonly type: 'execute_result'; readonly executionCount: number | null; readonly data: Bundle; readonly metadata: Bundle }
  | { readonly type: 'display_data'; readonly data: Bundle; readonly metadata: Bundle; readonly displayId: string | undefined }
  | { readonly type: 'update_display_data'; readonly data: Bundle; readonly metadata: Bundle; readonly displayId: string | undefined }
  | { readonly type: 'error'; readonly ename: string; readonly evalue: string; readonly traceback: readonly string[] }
  | { readonly type: 'clear_output'; readonly wait: boolean };

/** How an agent cell ended. */
export interface AgentCellEnd {
  readonly executionCount: number | null;
  /** `ok`, `error`, `aborted`, or `interrupted`/`failed` when the agent's call ended without a reply. */
  readonly status: string;
}

/** The metadata key that marks a cell as the agent's (`{"ipython_mcp": {"agent": true, "client": NAME}}`). */
export const AGENT_METADATA_KEY = 'ipython_mcp';

/** The tag an agent cell carries (JupyterLab's property inspector lists tags; nbconvert and papermill read them). */
export const AGENT_TAG = 'agent';

/** Default bound on one cell's outputs, in characters of their JSON (the journal's default per-cell bound). */
export const DEFAULT_CELL_OUTPUT_CHARS = 4 * 1024 * 1024;

/** How long an ended cell waits before it checks the order of agent cells above it (see `#keepRunOrder`). */
export const ORDER_GRACE_MS = 500;

/** How long outputs gather before they are written: one document update per burst, not one per line printed. */
const FLUSH_MS = 25;

/** Options of {@link AgentCells}. */
export interface AgentCellsOptions {
  readonly maxCellOutputChars?: number | undefined;
}

interface Running {
  /** The cell in the notebook (a new object when the person's undo brought it back). */
  cell: YCodeCell;
  /** The cell's id: how the cell is found again after the person's undo. */
  readonly id: string;
  readonly outputs: CellOutputs;
  deleted: boolean;
  cut: boolean;
  clearOnNext: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** What {@link AgentCells} has done, for runtime_status. */
export interface AgentCellsCounts {
  /** Cells inserted. */
  inserted: number;
  /** Cells the person deleted while they ran. */
  deletedWhileRunning: number;
}

/** The header line of an agent cell's source: what the person sees first in the cell. */
export function agentCellHeader(client: string | undefined): string {
  return `# agent${client === undefined ? '' : ` (${client.replace(/[\r\n]/g, ' ').slice(0, 64)})`}, via ipython-mcp`;
}

/** Writes the agent's cells into one shared notebook. */
export class AgentCells {
  readonly #notebook: YNotebook;
  readonly #maxChars: number;
  readonly #running = new Map<number, Running>();
  readonly counts: AgentCellsCounts = { inserted: 0, deletedWhileRunning: 0 };

  constructor(notebook: YNotebook, options: AgentCellsOptions = {}) {
    this.#notebook = notebook;
    this.#maxChars = Math.max(1024, options.maxCellOutputChars ?? DEFAULT_CELL_OUTPUT_CHARS);
  }

  /** Inserts the agent's cell for request `key` after the last cell. */
  start(key: number, code: string, client: string | undefined): void {
    const metadata = { [AGENT_METADATA_KEY]: { agent: true, ...(client === undefined ? {} : { client }) }, tags: [AGENT_TAG] };
    const index = this.#notebook.cells.length;
    const cell = this.#notebook.insertCell(index, {
      cell_type: 'code',
      source: `${agentCellHeader(client)}\n${code}`,
      metadata,
      outputs: [],
      execution_count: null,
    }) as YCodeCell;
    cell.executionState = 'running';
    this.counts.inserted += 1;
    this.#pointAt(cell, agentCellHeader(client).length);
    this.#running.set(key, { cell, id: cell.id, outputs: new CellOutputs(), cut: false, deleted: false, clearOnNext: false, timer: undefined });
  }

  /**
   * Runs request `key` into the existing code cell `cellId` (the agent runs a cell of the notebook): its outputs are
   * cleared and replaced by the run's, its count set when it ends, and its metadata marks it run by the agent. A cell
   * that is not there (deleted meanwhile) is let go: the outputs go nowhere, the agent's answer is unaffected.
   */
  resume(key: number, cellId: string, client: string | undefined): void {
    const cell = this.#notebook.cells.find((each) => each.id === cellId);
    if (cell === undefined || cell.cell_type !== 'code') return;
    const code = cell as YCodeCell;
    this.#notebook.transact(() => {
      code.setOutputs([]);
      code.executionState = 'running';
      const marks = (code.getMetadata(AGENT_METADATA_KEY) ?? {}) as Record<string, unknown>;
      code.setMetadata(AGENT_METADATA_KEY, { ...marks, run_by: client ?? 'unknown client' });
    });
    this.#running.set(key, { cell: code, id: code.id, outputs: new CellOutputs(), cut: false, deleted: false, clearOnNext: false, timer: undefined });
  }

  /** Adds one output to request `key`'s cell (written within {@link FLUSH_MS}). */
  output(key: number, output: AgentOutput): void {
    const running = this.#running.get(key);
    if (running === undefined) return;
    if (output.type === 'clear_output') {
      if (output.wait) running.clearOnNext = true;
      else this.#clear(running);
      this.#schedule(running);
      return;
    }
    if (running.clearOnNext) this.#clear(running);
    if (output.type === 'update_display_data') {
      if (output.displayId !== undefined) running.outputs.updateDisplay(output.displayId, output.data, output.metadata);
      this.#schedule(running);
      return;
    }
    if (output.type === 'stream') {
      if (this.#fits(running, output.text.length)) running.outputs.appendStream(output.name, output.text);
    } else {
      const converted = toNbformat(output);
      if (this.#fits(running, JSON.stringify(converted).length)) running.outputs.add(converted, output.type === 'display_data' ? output.displayId : undefined);
    }
    this.#schedule(running);
  }

  /** Ends request `key`'s cell: its count and final outputs are written; from now on the cell is the person's. */
  end(key: number, end: AgentCellEnd): void {
    const running = this.#running.get(key);
    if (running === undefined) return;
    this.#running.delete(key);
    clearTimeout(running.timer);
    if (end.status === 'interrupted' || end.status === 'failed') {
      const note = end.status === 'interrupted' ? 'the agent\'s cell was interrupted; the namespace is kept' : 'the agent\'s call ended without a reply from the kernel';
      running.outputs.appendStream('stderr', `[ipython-mcp: ${note}]\n`);
    }
    this.#write(running);
    if (!this.#present(running)) return;
    const cell = running.cell;
    this.#notebook.transact(() => {
      cell.execution_count = end.executionCount;
      cell.executionState = 'idle';
    });
    this.#keepRunOrder(cell);
  }

  /**
   * Keeps agent cells in the order the kernel ran them. Two ipython-mcp inserting at the end at once can land in
   * either order (the document orders concurrent inserts by client, not by time); the kernel runs one cell at a time,
   * so another mirror's agent cell above this one that is still running a moment after this one ended ran after it:
   * this cell moves above every such cell. The moment ({@link ORDER_GRACE_MS}) lets the other mirror write the end
   * of a cell that ran before this one (its reply reaches it over another connection). This mirror's own cells are
   * never passed: it inserts them in the order it sends them, which is the kernel's. Only a cell's own mirror moves
   * it, once.
   */
  #keepRunOrder(cell: YCodeCell): void {
    const above = (): number => {
      const cells = this.#notebook.cells;
      const index = cells.indexOf(cell);
      let target = index;
      while (target > 0) {
        const each = cells[target - 1]! as YCodeCell;
        const agent = (each.getMetadata(AGENT_METADATA_KEY) as { agent?: unknown } | undefined)?.agent === true;
        if (each.cell_type !== 'code' || !agent || each.executionState !== 'running' || this.#ownRunning(each)) break;
        target -= 1;
      }
      return index - target;
    };
    if (above() === 0) return;
    const timer = setTimeout(() => {
      if (this.#notebook.isDisposed || cell.isDisposed || cell.executionState !== 'idle') return;
      const count = above();
      if (count === 0) return;
      const index = this.#notebook.cells.indexOf(cell);
      this.#notebook.moveCell(index, index - count);
      const moved = this.#notebook.cells[index - count] as YCodeCell;
      const source = moved.getSource();
      this.#pointAt(moved, source.includes('\n') ? source.indexOf('\n') : source.length);
    }, ORDER_GRACE_MS);
    timer.unref?.();
  }

  /** Whether `cell` is one of this mirror's running cells. */
  #ownRunning(cell: YCodeCell): boolean {
    for (const running of this.#running.values()) if (running.cell === cell || running.id === cell.id) return true;
    return false;
  }

  /**
   * Puts the agent's cursor at `index` of `cell`'s source: JupyterLab draws it in the agent's colour with its name
   * above it, as it draws a collaborator's, so the cell the agent works in is marked on the page.
   */
  #pointAt(cell: YCodeCell, index: number): void {
    const position = createRelativePositionFromTypeIndex(cell.ysource, index);
    this.#notebook.awareness.setLocalStateField('cursors', [{ anchor: position, head: position, primary: true, empty: true }]);
  }

  /** Ends every running cell (the kernel connection ended). */
  endAll(status: string): void {
    for (const key of [...this.#running.keys()]) this.end(key, { executionCount: null, status });
  }

  #fits(running: Running, chars: number): boolean {
    if (running.cut) return false;
    if (running.outputs.chars + chars <= this.#maxChars) {
      running.outputs.chars += chars;
      return true;
    }
    running.cut = true;
    running.outputs.appendStream(
      'stderr', `[ipython-mcp: this cell's further output is not shown here (over ${this.#maxChars} characters); the agent's result has its own head and tail]\n`,
    );
    return false;
  }

  #clear(running: Running): void {
    running.outputs.clear();
    running.cut = false;
    running.clearOnNext = false;
  }

  #schedule(running: Running): void {
    if (running.timer !== undefined) return;
    running.timer = setTimeout(() => {
      running.timer = undefined;
      this.#write(running);
    }, FLUSH_MS);
  }

  /** Writes what changed of the outputs into the cell, if the cell is in the notebook. */
  #write(running: Running): void {
    if (!this.#present(running)) return;
    running.outputs.write(running.cell);
  }

  /**
   * Whether the cell is in the notebook. The person may have deleted it while it ran (then its outputs wait, and go
   * into it if the person's undo brings it back: the same id, a new cell object holding what was written).
   */
  #present(running: Running): boolean {
    if (!running.cell.isDisposed && this.#notebook.cells.includes(running.cell)) return true;
    const back = this.#notebook.cells.find((each) => each.id === running.id && each.cell_type === 'code') as YCodeCell | undefined;
    if (back !== undefined) {
      running.cell = back;
      running.outputs.adopt(back);
      running.deleted = false;
      return true;
    }
    if (!running.deleted) {
      running.deleted = true;
      this.counts.deletedWhileRunning += 1;
    }
    return false;
  }
}

function toNbformat(output: Exclude<AgentOutput, { type: 'clear_output' } | { type: 'update_display_data' } | { type: 'stream' }>): NbOutput {
  switch (output.type) {
    case 'execute_result':
      return { output_type: 'execute_result', execution_count: output.executionCount, data: output.data, metadata: output.metadata };
    case 'display_data':
      return { output_type: 'display_data', data: output.data, metadata: output.metadata };
    case 'error':
      return { output_type: 'error', ename: output.ename, evalue: output.evalue, traceback: [...output.traceback] };
  }
}
