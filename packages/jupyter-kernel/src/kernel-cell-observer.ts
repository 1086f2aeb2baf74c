/** What the notebook mirror is told of the agent's cells, and the guard that keeps it from affecting a request. */
import type { Logger } from '@ipython-mcp/worker-supervisor';
import type { JupyterOutput } from './outputs.js';

/**
 * Sees the agent's cells as they go to the kernel: each non-blank `execute` when it is sent, its IOPub outputs as
 * they arrive, and its end (the execute_reply's status and count, or `failed` when the kernel ended under it). What
 * a notebook mirror needs; it must not throw and never affects the request.
 */
export interface KernelCellObserver {
  cellSent(id: number, code: string): void;
  cellOutput(id: number, output: JupyterOutput): void;
  cellEnded(id: number, end: { executionCount: number | null; status: string }): void;
}

/** Tells `cells` (if any) of an event: whatever the observer throws is logged and dropped. */
export function observerTeller(cells: KernelCellObserver | undefined, logger: Logger): (event: (observer: KernelCellObserver) => void) => void {
  return (event) => {
    if (cells === undefined) return;
    try {
      event(cells);
    } catch (error) {
      logger.warn('kernel.cell_observer_failed', { reason: (error as Error).message.slice(0, 200) });
    }
  };
}
