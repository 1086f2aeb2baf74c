/**
 * Who touched an agent cell after the agent wrote it. When the person edits an agent cell's source or runs it, the
 * cell is theirs too: its `ipython_mcp` metadata gains `edited_by_person` / `run_by_person`, which the notebook
 * resource reads back ("the agent's, edited by the person"). A change is the person's when a writer of it is not an
 * ipython-mcp: each Yjs update names the document clients that wrote it, and each client's awareness state names its
 * user (every ipython-mcp's username starts with `ipython-mcp-`), so another agent's edit is not taken for the
 * person's.
 */
import type { YCodeCell, YNotebook } from '@jupyter/ydoc';
import type { Transaction } from 'yjs';
import { AGENT_METADATA_KEY } from './agent-cells.js';

/** The awareness username prefix every ipython-mcp's connection has (shared-notebook.ts's agentUser). */
const AGENT_USERNAME_PREFIX = 'ipython-mcp-';

/** The clients that wrote in `transaction` and are not an ipython-mcp (by their awareness state). */
function personWriters(notebook: YNotebook, transaction: Transaction): number[] {
  const states = notebook.awareness.getStates();
  const writers: number[] = [];
  for (const [client, clock] of transaction.afterState) {
    if ((transaction.beforeState.get(client) ?? 0) === clock) continue;
    const username = (states.get(client) as { user?: { username?: unknown } } | undefined)?.user?.username;
    if (typeof username === 'string' && username.startsWith(AGENT_USERNAME_PREFIX)) continue;
    writers.push(client);
  }
  return writers;
}

/** Marks agent cells the person edited or ran; returns the function that stops watching. */
export function watchPersonEdits(notebook: YNotebook): () => void {
  const onTransaction = (transaction: Transaction): void => {
    if (transaction.local || transaction.changed.size === 0) return;
    const changed = transaction.changed as Map<unknown, Set<string | null>>;
    let writers: number[] | undefined;
    for (const cell of notebook.cells) {
      if (cell.cell_type !== 'code') continue;
      const mark = cell.getMetadata(AGENT_METADATA_KEY) as Record<string, unknown> | undefined;
      if (mark?.agent !== true) continue;
      const code = cell as YCodeCell;
      const edited = changed.has(code.ysource) && mark.edited_by_person !== true;
      const keys = changed.get(code.ymodel);
      const ran = keys !== undefined && (keys.has('execution_count') || keys.has('execution_state')) && code.executionState === 'running' && mark.run_by_person !== true;
      if (!edited && !ran) continue;
      writers ??= personWriters(notebook, transaction);
      if (writers.length === 0) continue;
      // Written after this transaction (a change inside an observer would join the person's own), onto the marks as
      // they are then (the agent's end may have changed them meanwhile).
      queueMicrotask(() => {
        if (cell.isDisposed || !notebook.cells.includes(cell)) return;
        const now = (cell.getMetadata(AGENT_METADATA_KEY) ?? {}) as Record<string, unknown>;
        cell.setMetadata(AGENT_METADATA_KEY, { ...now, ...(edited ? { edited_by_person: true } : {}), ...(ran ? { run_by_person: true } : {}) });
      });
    }
  };
  notebook.ydoc.on('afterTransaction', onTransaction);
  return () => notebook.ydoc.off('afterTransaction', onTransaction);
}
