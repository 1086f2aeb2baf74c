/**
 * The agent's cells in a shared notebook: one code cell per agent `execute`, inserted after the last cell when the
 * request is sent to the kernel, its outputs written as they arrive (bounded per cell, as the session journal bounds
 * a cell), its execution count set when it ends. A cell that has ended is the person's: nothing here touches it
 * again. A cell the person deleted while it ran is let go: its later outputs go nowhere, the agent's answer is
 * unaffected.
 */
import type { YCodeCell, YNotebook } from '@jupyter/ydoc';

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

/** How long outputs gather before they are written: one document update per burst, not one per line printed. */
const FLUSH_MS = 25;

/** Options of {@link AgentCells}. */
export interface AgentCellsOptions {
  readonly maxCellOutputChars?: number | undefined;
}

interface Running {
  readonly cell: YCodeCell;
  readonly outputs: Array<Record<string, unknown>>;
  /** The display id of each output (kept beside it: nbformat has no place for it in a saved output). */
  readonly displayIds: Array<string | undefined>;
  chars: number;
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
    this.#running.set(key, { cell, outputs: [], displayIds: [], chars: 0, cut: false, deleted: false, clearOnNext: false, timer: undefined });
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
    this.#running.set(key, { cell: code, outputs: [], displayIds: [], chars: 0, cut: false, deleted: false, clearOnNext: false, timer: undefined });
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
      for (const [index, each] of running.outputs.entries()) {
        if (output.displayId !== undefined && running.displayIds[index] === output.displayId) {
          running.outputs[index] = { ...each, data: output.data, metadata: output.metadata };
        }
      }
      this.#schedule(running);
      return;
    }
    const converted = toNbformat(output);
    const last = running.outputs.at(-1);
    if (converted.output_type === 'stream' && last?.output_type === 'stream' && last.name === converted.name) {
      const text = String(converted.text);
      if (!this.#fits(running, text.length)) return;
      running.outputs[running.outputs.length - 1] = { ...last, text: String(last.text) + text };
    } else {
      if (!this.#fits(running, JSON.stringify(converted).length)) return;
      running.outputs.push(converted);
      running.displayIds.push(output.type === 'display_data' ? output.displayId : undefined);
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
      running.outputs.push({ output_type: 'stream', name: 'stderr', text: `[ipython-mcp: ${note}]\n` });
    }
    this.#write(running, () => {
      running.cell.execution_count = end.executionCount;
      running.cell.executionState = 'idle';
    });
  }

  /** Ends every running cell (the kernel connection ended). */
  endAll(status: string): void {
    for (const key of [...this.#running.keys()]) this.end(key, { executionCount: null, status });
  }

  #fits(running: Running, chars: number): boolean {
    if (running.cut) return false;
    if (running.chars + chars <= this.#maxChars) {
      running.chars += chars;
      return true;
    }
    running.cut = true;
    running.outputs.push({
      output_type: 'stream',
      name: 'stderr',
      text: `[ipython-mcp: this cell's further output is not shown here (over ${this.#maxChars} characters); the agent's result has its own head and tail]\n`,
    });
    return false;
  }

  #clear(running: Running): void {
    running.outputs.length = 0;
    running.displayIds.length = 0;
    running.chars = 0;
    running.cut = false;
    running.clearOnNext = false;
  }

  #schedule(running: Running): void {
    if (running.timer !== undefined) return;
    running.timer = setTimeout(() => {
      running.timer = undefined;
      this.#write(running, () => undefined);
    }, FLUSH_MS);
  }

  /** Writes the outputs (and `more`) into the cell, if the cell is still in the notebook. */
  #write(running: Running, more: () => void): void {
    if (!this.#present(running)) return;
    this.#notebook.transact(() => {
      running.cell.setOutputs(running.outputs.map((each) => ({ ...each })) as never);
      more();
    });
  }

  /** Whether the cell is still in the notebook (the person may have deleted it while it ran). */
  #present(running: Running): boolean {
    if (running.deleted) return false;
    if (running.cell.isDisposed || !this.#notebook.cells.includes(running.cell)) {
      running.deleted = true;
      this.counts.deletedWhileRunning += 1;
      return false;
    }
    return true;
  }
}

function toNbformat(output: Exclude<AgentOutput, { type: 'clear_output' } | { type: 'update_display_data' }>): Record<string, unknown> {
  switch (output.type) {
    case 'stream':
      return { output_type: 'stream', name: output.name, text: output.text };
    case 'execute_result':
      return { output_type: 'execute_result', execution_count: output.executionCount, data: output.data, metadata: output.metadata };
    case 'display_data':
      return { output_type: 'display_data', data: output.data, metadata: output.metadata };
    case 'error':
      return { output_type: 'error', ename: output.ename, evalue: output.evalue, traceback: [...output.traceback] };
  }
}
