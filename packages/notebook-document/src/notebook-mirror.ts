/**
 * The mirror of one attached notebook: opens its shared document on the first agent cell (or the first read), keeps
 * it open while ipython-mcp runs, writes each agent cell into it through {@link AgentCells}, and reports what it does
 * for runtime_status. A failure here never reaches the agent's call: the call has its own answer from the kernel; a
 * cell that could not be mirrored is counted and the reason kept for runtime_status and doctor.
 */
import { AgentCells, type AgentCellEnd, type AgentOutput } from './agent-cells.js';
import { CellRunClaims } from './cell-run-claims.js';
import { TypingTracker } from './notebook-shared-edits.js';
import { notebookImage, renderNotebook } from './notebook-view.js';
import { watchPersonEdits } from './person-marks.js';
import { openSharedNotebook, SharedNotebookError, type SharedNotebook } from './shared-notebook.js';

/** Options of {@link NotebookMirror}. */
export interface NotebookMirrorOptions {
  readonly url: string;
  readonly token: string;
  readonly path: string;
  /** Write the agent's cells into the notebook (`--notebook-cells on`); reading it as a resource works either way. */
  readonly cells: boolean;
  /** The collaborator's name shown in JupyterLab; default `CLIENT (agent)` (the MCP client's name), else `ipython-mcp agent`. */
  readonly displayName?: string | undefined;
  readonly maxCellOutputChars?: number | undefined;
  readonly timeoutMs?: number | undefined;
  /** Where problems are reported (never with the token). */
  readonly warn?: ((event: string, fields: Record<string, unknown>) => void) | undefined;
}

/** What runtime_status says about the mirror. */
export interface NotebookMirrorStatus {
  /** Whether the agent's cells are written into the notebook now. */
  mirrored: boolean;
  /** `on`, `off` (the setting), `unavailable` (the server cannot, with `reason` and `fix`), `pending` (not opened yet). */
  state: 'on' | 'off' | 'unavailable' | 'pending' | 'reconnecting';
  reason?: string | undefined;
  fix?: string | undefined;
  cells_inserted?: number | undefined;
  cells_deleted_while_running?: number | undefined;
  /** Cells another ipython-mcp left running (it was killed mid-run), ended by this one. */
  cells_left_running_ended?: number | undefined;
}

/** Observes one worker's agent cells (the shape `@ipython-mcp/jupyter-kernel` calls). */
export interface CellEvents {
  cellSent(id: number, code: string): void;
  cellOutput(id: number, output: AgentOutput): void;
  cellEnded(id: number, end: AgentCellEnd): void;
}

/** The agent's name among the notebook's collaborators: its MCP client's (`claude-code (agent)`). */
export function agentDisplayName(client: string | undefined): string {
  return client === undefined ? 'ipython-mcp agent' : `${client.replace(/[\r\n]/g, ' ')} (agent)`;
}

const INSTALL_FIX = 'install jupyter-collaboration in the Jupyter server\'s environment (pip install jupyter-collaboration) and restart the server';

/** One attached notebook's shared document, for the agent's cells and the notebook resource. */
export class NotebookMirror {
  readonly #options: NotebookMirrorOptions;
  #shared: SharedNotebook | undefined;
  #cells: AgentCells | undefined;
  #unwatch: (() => void) | undefined;
  #opening: Promise<SharedNotebook | undefined> | undefined;
  #failure: SharedNotebookError | undefined;
  /** Why the room closed, while the document is opened again after it did. */
  #reopening: string | undefined;
  #client: string | undefined;
  #nextKey = 1;
  #closed = false;
  #typing: TypingTracker | undefined;
  /** Runs of the notebook's own cells (the `notebook` tool's `run`): their outputs go into those cells. */
  readonly runs = new CellRunClaims();

  constructor(options: NotebookMirrorOptions) {
    this.#options = options;
  }

  /** The MCP client's name (its `clientInfo.name`), written into each later agent cell's metadata. */
  set client(name: string | undefined) {
    this.#client = name === undefined || name.trim() === '' ? undefined : name.trim().slice(0, 64);
    if (this.#options.displayName === undefined) this.#shared?.rename(agentDisplayName(this.#client));
  }

  /** The MCP client's name as the marks write it. */
  get client(): string | undefined {
    return this.#client;
  }

  /**
   * Opens the shared document if it is not open (at most one attempt at a time). A notebook that was deleted or a
   * room that closed for good is opened afresh by the next call.
   */
  open(): Promise<SharedNotebook | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    if (this.#shared !== undefined && this.#shared.state() !== 'closed') return Promise.resolve(this.#shared);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #open(): Promise<SharedNotebook | undefined> {
    const previous = this.#shared;
    if (previous !== undefined) {
      this.#reopening = previous.closedReason() ?? 'closed';
      this.#options.warn?.('notebook.room_closed', { reason: this.#reopening });
      this.#cells?.endAll('failed');
      this.#cells?.dispose();
      this.#unwatch?.();
      previous.close();
      this.#shared = undefined;
      this.#cells = undefined;
    }
    try {
      const shared = await openSharedNotebook({
        url: this.#options.url,
        token: this.#options.token,
        path: this.#options.path,
        displayName: this.#options.displayName ?? agentDisplayName(this.#client),
        timeoutMs: this.#options.timeoutMs,
      });
      if (this.#closed) {
        shared.close();
        return undefined;
      }
      this.#failure = undefined;
      this.#reopening = undefined;
      this.#shared = shared;
      this.#cells = new AgentCells(shared.notebook, { maxCellOutputChars: this.#options.maxCellOutputChars });
      this.#unwatch = watchPersonEdits(shared.notebook);
      this.#typing?.dispose();
      this.#typing = new TypingTracker(shared.notebook);
      return shared;
    } catch (error) {
      this.#reopening = undefined;
      this.#failure = error instanceof SharedNotebookError ? error : new SharedNotebookError('refused', (error as Error).message);
      this.#options.warn?.('notebook.open_failed', { reason: this.#failure.reason, message: this.#failure.message.slice(0, 300) });
      return undefined;
    }
  }

  /**
   * The events of one worker: its request ids are its own, so each worker gets a fresh map onto the mirror's keys.
   * Each cell waits for the document to open before it is inserted; its outputs and end follow in order.
   */
  events(): CellEvents {
    const keys = new Map<number, number>();
    const chain = new Map<number, Promise<AgentCells | undefined>>();
    const after = (id: number, action: (cells: AgentCells, key: number) => void): void => {
      const key = keys.get(id);
      const ready = chain.get(id);
      if (key === undefined || ready === undefined) return;
      const next = ready.then((cells) => {
        if (cells !== undefined) action(cells, key);
        return cells;
      });
      chain.set(id, next);
    };
    return {
      cellSent: (id, code) => {
        // A run of one of the notebook's own cells goes into that cell, whatever --notebook-cells says.
        const claimed = this.runs.take(code);
        if ((claimed === undefined && !this.#options.cells) || this.#closed) return;
        const key = this.#nextKey++;
        keys.set(id, key);
        const client = this.#client;
        const begin = (into: AgentCells): void => (claimed === undefined ? into.start(key, code, client) : into.resume(key, claimed, client));
        const cells = this.#cells;
        if (cells !== undefined && this.#shared?.state() !== 'closed') {
          // The document is open: insert at once (the common case, and what the latency bench measures).
          begin(cells);
          chain.set(id, Promise.resolve(cells));
          return;
        }
        chain.set(
          id,
          this.open().then(() => {
            const opened = this.#cells;
            if (opened !== undefined) begin(opened);
            return opened;
          }),
        );
      },
      cellOutput: (id, output) => after(id, (cells, key) => cells.output(key, output)),
      cellEnded: (id, end) => {
        after(id, (cells, key) => cells.end(key, end));
        keys.delete(id);
        chain.delete(id);
      },
    };
  }

  /** The notebook as text within `maxChars` (resource read); opens the document when it is not open. */
  async read(maxChars: number): Promise<string> {
    const shared = await this.open();
    if (shared === undefined) throw new Error(this.#failure?.message ?? 'the notebook\'s shared document is not available');
    return renderNotebook(shared.notebook, this.#options.path, maxChars);
  }

  /** Whether the person changed cell `id`'s source in the last seconds (see {@link TypingTracker}). */
  typing(id: string): boolean {
    return this.#typing?.typing(id) ?? false;
  }

  /** Why the shared document cannot be opened, once an attempt failed (`no_collaboration`: use the contents API). */
  get failure(): SharedNotebookError | undefined {
    return this.#failure;
  }

  /** An image output of the notebook, or undefined. */
  async image(cellId: string, position: number): Promise<{ mimeType: string; base64: string } | undefined> {
    const shared = await this.open();
    return shared === undefined ? undefined : notebookImage(shared.notebook, cellId, position);
  }

  status(): NotebookMirrorStatus {
    const counts = this.#cells?.counts;
    const tallies = counts === undefined ? {} : { cells_inserted: counts.inserted, cells_deleted_while_running: counts.deletedWhileRunning, cells_left_running_ended: counts.staleEnded };
    if (!this.#options.cells) return { mirrored: false, state: 'off', reason: 'turned off by --notebook-cells off (IPYTHON_MCP_NOTEBOOK_CELLS)' };
    if (this.#failure !== undefined && this.#shared === undefined) {
      return {
        mirrored: false,
        state: 'unavailable',
        reason: this.#failure.message,
        ...(this.#failure.reason === 'no_collaboration' ? { fix: INSTALL_FIX } : {}),
      };
    }
    if (this.#shared === undefined && this.#reopening !== undefined) {
      return { mirrored: false, state: 'reconnecting', reason: `the notebook's room closed (${this.#reopening}); opening it again`, ...tallies };
    }
    if (this.#shared === undefined && this.#opening !== undefined) return { mirrored: false, state: 'pending', reason: 'the notebook\'s shared document is being opened', ...tallies };
    if (this.#shared === undefined) return { mirrored: false, state: 'pending', reason: 'the notebook\'s shared document opens with the first agent cell' };
    const state = this.#shared.state();
    if (state === 'connected') return { mirrored: true, state: 'on', ...tallies };
    return { mirrored: true, state: 'reconnecting', reason: state === 'closed' ? (this.#shared.closedReason() ?? 'closed') : 'the collaboration room is reconnecting', ...tallies };
  }

  /** Leaves the room (idempotent). */
  close(): void {
    this.#closed = true;
    this.#cells?.endAll('failed');
    this.#cells?.dispose();
    this.#unwatch?.();
    this.#typing?.dispose();
    this.#shared?.close();
    this.#shared = undefined;
  }
}
