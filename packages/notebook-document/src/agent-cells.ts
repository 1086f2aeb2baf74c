/**
 * The agent's cells in a shared notebook: one code cell per agent `execute`, inserted after the last cell when the
 * request is sent to the kernel, its outputs written as they arrive (bounded per cell, as the session journal bounds
 * a cell) as ranged changes a JupyterLab page applies (cell-outputs.ts), its execution count set when it ends; the
 * agent's cursor marks the cell it runs. A cell that has ended is the person's: nothing here touches it again (the
 * one exception: as it ends, it moves above another agent's cell still running, which the kernel ran after it).
 *
 * The person may take a running cell out of the notebook and put it back: delete and undo, cut and paste, move (which
 * JupyterLab does as a delete and an insert of a copy). While it runs, its metadata carries a run record
 * (`ipython_mcp.running`, removed as it ends); a cell that comes into the notebook with the record of a run of this
 * mirror is that run's cell, whatever its id (JupyterLab keeps a cut cell's id for the first paste only, and a move
 * or a paste copies what the cell held then): it shows [*] and the run's outputs, and ends as the run ends. A run
 * that ended while its cell was out (or a second copy of it) is finished when the cell comes back: all its outputs,
 * its count. Otherwise a deleted cell's later outputs go nowhere. The agent's answer is unaffected either way.
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

/**
 * How long a cell may carry the run record of an ipython-mcp that is not in the room (no awareness state names its
 * runs) before another ipython-mcp ends it: long enough for a connection to come back (a Jupyter server restarted,
 * a network blip: the room drops a client's awareness as its connection closes), short enough that a cell whose
 * ipython-mcp was killed does not show [*] for long. y-protocols drops a silent client's awareness after 30 s.
 */
export const STALE_RUN_MS = 30_000;

/** The awareness field naming the run records of one ipython-mcp's cells (the prefix of its records). */
export const RUNS_AWARENESS_FIELD = 'ipython_mcp_runs';

/** How many ended runs are remembered, for a cut cell pasted (or a deleted one brought back) after its run ended. */
const ENDED_RUNS_KEPT = 16;

/** Bound on the characters of the outputs of the ended runs remembered, together. */
const ENDED_RUNS_CHARS = 16 * 1024 * 1024;

/** Options of {@link AgentCells}. */
export interface AgentCellsOptions {
  readonly maxCellOutputChars?: number | undefined;
  /** How long a run record of an ipython-mcp no longer in the room stays before its cell is ended (see {@link STALE_RUN_MS}). */
  readonly staleRunMs?: number | undefined;
}

interface Running {
  /** The cell in the notebook (a new object when the person's undo, paste or move brought it back). */
  cell: YCodeCell;
  /** The cell's id: how the cell is found again after the person's undo. */
  id: string;
  /** The run record in the cell's metadata while it runs: how a pasted or moved copy of the cell is found. */
  readonly run: string;
  readonly outputs: CellOutputs;
  deleted: boolean;
  cut: boolean;
  clearOnNext: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** A run that ended: what a copy of its cell coming into the notebook later is finished with. */
interface Ended {
  readonly outputs: readonly NbOutput[];
  readonly chars: number;
  readonly executionCount: number | null;
  /** Its cell was out of the notebook as it ended (counted in deletedWhileRunning until a copy comes back). */
  deleted: boolean;
}

/** What {@link AgentCells} has done, for runtime_status. */
export interface AgentCellsCounts {
  /** Cells inserted. */
  inserted: number;
  /** Cells the person deleted while they ran and that stayed deleted (a cut then pasted, or an undone delete, is a move). */
  deletedWhileRunning: number;
  /** Cells of another ipython-mcp that left the room mid-run, ended here (see {@link STALE_RUN_MS}). */
  staleEnded: number;
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
  /** Ended runs by run record, oldest first (bounded by {@link ENDED_RUNS_KEPT} and {@link ENDED_RUNS_CHARS}). */
  readonly #ended = new Map<string, Ended>();
  readonly #prefix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  readonly counts: AgentCellsCounts = { inserted: 0, deletedWhileRunning: 0, staleEnded: 0 };
  readonly #staleRunMs: number;
  /** Run records of other ipython-mcp not in the room, with when each was first seen so. */
  readonly #stale = new Map<string, number>();
  #staleTimer: NodeJS.Timeout | undefined;

  constructor(notebook: YNotebook, options: AgentCellsOptions = {}) {
    this.#notebook = notebook;
    this.#maxChars = Math.max(1024, options.maxCellOutputChars ?? DEFAULT_CELL_OUTPUT_CHARS);
    this.#staleRunMs = options.staleRunMs ?? STALE_RUN_MS;
    notebook.changed.connect(this.#onChanged);
    // Other ipython-mcp in the room know this one's cells by this field; a cell whose run record names no one in the
    // room is ended after a while (its ipython-mcp was killed mid-run and nobody else would ever end it).
    notebook.awareness.setLocalStateField(RUNS_AWARENESS_FIELD, this.#prefix);
    notebook.awareness.on('change', this.#onAwareness);
    this.#sweepStale();
  }

  /** Stops watching the notebook (the document is closed). */
  dispose(): void {
    this.#notebook.changed.disconnect(this.#onChanged);
    this.#notebook.awareness.off('change', this.#onAwareness);
    clearTimeout(this.#staleTimer);
    this.#staleTimer = undefined;
  }

  /** Inserts the agent's cell for request `key` after the last cell. */
  start(key: number, code: string, client: string | undefined): void {
    const run = this.#runRecord(key);
    const metadata = { [AGENT_METADATA_KEY]: { agent: true, ...(client === undefined ? {} : { client }), running: run }, tags: [AGENT_TAG] };
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
    this.#running.set(key, { cell, id: cell.id, run, outputs: new CellOutputs(), cut: false, deleted: false, clearOnNext: false, timer: undefined });
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
    const run = this.#runRecord(key);
    this.#notebook.transact(() => {
      code.setOutputs([]);
      code.executionState = 'running';
      const marks = (code.getMetadata(AGENT_METADATA_KEY) ?? {}) as Record<string, unknown>;
      code.setMetadata(AGENT_METADATA_KEY, { ...marks, run_by: client ?? 'unknown client', running: run });
    });
    this.#running.set(key, { cell: code, id: code.id, run, outputs: new CellOutputs(), cut: false, deleted: false, clearOnNext: false, timer: undefined });
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
    const present = this.#present(running);
    this.#remember(running.run, { outputs: [...running.outputs.wanted], chars: running.outputs.chars, executionCount: end.executionCount, deleted: !present });
    // Copies of the cell the person made while it ran (a second paste) end as it does.
    for (const copy of this.#cellsOf(running.run)) if (!present || copy !== running.cell) this.#finish(copy, running.run);
    if (!present) return;
    const cell = running.cell;
    this.#notebook.transact(() => {
      cell.execution_count = end.executionCount;
      cell.executionState = 'idle';
      this.#dropRecord(cell);
    });
    this.#keepRunOrder(cell);
  }

  /** The run record of request `key`: unique to this mirror's document. */
  #runRecord(key: number): string {
    return `${this.#prefix}-${key}`;
  }

  /** The run record a cell carries, if any. */
  #recordOf(cell: { cell_type: string; getMetadata(key: string): unknown }): string | undefined {
    if (cell.cell_type !== 'code') return undefined;
    const running = (cell.getMetadata(AGENT_METADATA_KEY) as { running?: unknown } | undefined)?.running;
    return typeof running === 'string' ? running : undefined;
  }

  /** The notebook's code cells carrying run record `run`. */
  #cellsOf(run: string): YCodeCell[] {
    return this.#notebook.cells.filter((each) => this.#recordOf(each) === run) as YCodeCell[];
  }

  /** Removes the run record from `cell`'s metadata (inside the caller's transaction). */
  #dropRecord(cell: YCodeCell): void {
    const marks = cell.getMetadata(AGENT_METADATA_KEY) as Record<string, unknown> | undefined;
    if (marks === undefined || !('running' in marks)) return;
    const { running: _running, ...rest } = marks;
    cell.setMetadata(AGENT_METADATA_KEY, rest as never);
  }

  /** Keeps what an ended run's copies are finished with; the oldest are forgotten beyond the bounds. */
  #remember(run: string, ended: Ended): void {
    this.#ended.set(run, ended);
    let chars = 0;
    for (const each of this.#ended.values()) chars += each.chars;
    for (const [oldest, each] of this.#ended) {
      if (this.#ended.size <= ENDED_RUNS_KEPT && chars <= ENDED_RUNS_CHARS) break;
      this.#ended.delete(oldest);
      chars -= each.chars;
    }
  }

  /** Writes an ended run's outputs and count into `cell`, a copy of its cell, and ends it. */
  #finish(cell: YCodeCell, run: string): void {
    const ended = this.#ended.get(run);
    if (ended === undefined || cell.isDisposed || !this.#notebook.cells.includes(cell)) return;
    if (ended.deleted) {
      // Its cell comes back after the run ended: moved, not deleted.
      ended.deleted = false;
      this.counts.deletedWhileRunning -= 1;
    }
    const outputs = new CellOutputs();
    outputs.adopt(cell);
    outputs.replace(ended.outputs);
    outputs.write(cell);
    this.#notebook.transact(() => {
      cell.execution_count = ended.executionCount;
      cell.executionState = 'idle';
      this.#dropRecord(cell);
    });
  }

  /**
   * A cell came into the notebook (the person's paste, undo or move, or a page that wrote a cell anew): when it carries
   * the record of one of this mirror's runs, it is that run's cell (running: it shows [*] and gets the outputs; ended:
   * it is finished). Acted on after the change, not inside the document's observer.
   */
  readonly #onChanged = (_notebook: YNotebook, change: { cellsChange?: ReadonlyArray<{ insert?: ReadonlyArray<unknown> }> }): void => {
    const inserted = (change.cellsChange ?? []).flatMap((each) => (each.insert ?? []) as YCodeCell[]);
    const records = inserted.map((cell) => this.#recordOf(cell)).filter((run): run is string => run !== undefined);
    if (records.length === 0) return;
    queueMicrotask(() => {
      if (this.#notebook.isDisposed) return;
      for (const run of new Set(records)) {
        const running = [...this.#running.values()].find((each) => each.run === run);
        if (running !== undefined) {
          if (this.#present(running)) {
            this.#write(running);
            if (running.cell.executionState !== 'running') running.cell.executionState = 'running';
          }
          continue;
        }
        if (this.#ended.has(run)) for (const cell of this.#cellsOf(run)) this.#finish(cell, run);
      }
    });
  };

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

  /** Someone came into the room or left it (a cursor that moved changes no one's runs: not looked at). */
  readonly #onAwareness = (change: { added: readonly number[]; removed: readonly number[] }): void => {
    if (change.added.length > 0 || change.removed.length > 0) this.#sweepStale();
  };

  /**
   * Ends the cells whose run record names an ipython-mcp that has not been in the room for {@link STALE_RUN_MS}: the
   * record goes, [*] ends, and a note says why (the kernel may still be running that code; its output is not shown).
   * Checked as someone comes into the room or leaves it, and again when the oldest such record is due.
   */
  readonly #sweepStale = (): void => {
    if (this.#notebook.isDisposed) return;
    const here = new Set<string>([this.#prefix]);
    for (const state of this.#notebook.awareness.getStates().values()) {
      const runs = (state as Record<string, unknown>)[RUNS_AWARENESS_FIELD];
      if (typeof runs === 'string') here.add(runs);
    }
    const now = Date.now();
    const seen = new Set<string>();
    let due = Number.POSITIVE_INFINITY;
    for (const cell of this.#notebook.cells) {
      const run = this.#recordOf(cell);
      if (run === undefined || here.has(run.slice(0, run.lastIndexOf('-')))) continue;
      seen.add(run);
      const since = this.#stale.get(run) ?? now;
      this.#stale.set(run, since);
      if (now - since >= this.#staleRunMs) this.#endStale(cell as YCodeCell);
      else due = Math.min(due, since + this.#staleRunMs);
    }
    for (const run of [...this.#stale.keys()]) if (!seen.has(run)) this.#stale.delete(run);
    clearTimeout(this.#staleTimer);
    this.#staleTimer = undefined;
    if (Number.isFinite(due)) {
      this.#staleTimer = setTimeout(this.#sweepStale, Math.max(0, due - now));
      this.#staleTimer.unref?.();
    }
  };

  #endStale(cell: YCodeCell): void {
    const outputs = new CellOutputs();
    outputs.takeOver(cell);
    outputs.appendStream('stderr', "[ipython-mcp: the ipython-mcp that ran this cell left before the cell ended; the kernel may still be running it, and its output is not shown here]\n");
    outputs.write(cell);
    this.#notebook.transact(() => {
      cell.executionState = 'idle';
      this.#dropRecord(cell);
    });
    this.counts.staleEnded += 1;
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
   * Whether the cell is in the notebook. The person may have taken it out while it ran (then its outputs wait, and go
   * into it when it comes back: the person's undo, paste or move, a new cell object holding what it held then, found
   * by its id or by the run record in its metadata).
   */
  #present(running: Running): boolean {
    if (!running.cell.isDisposed && this.#notebook.cells.includes(running.cell)) return true;
    const back = (this.#notebook.cells.find((each) => each.id === running.id && each.cell_type === 'code')
      ?? this.#cellsOf(running.run)[0]) as YCodeCell | undefined;
    if (back !== undefined) {
      running.cell = back;
      running.id = back.id;
      running.outputs.adopt(back);
      // Cut then pasted, or deleted then undone: moved, not deleted.
      if (running.deleted) this.counts.deletedWhileRunning -= 1;
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
