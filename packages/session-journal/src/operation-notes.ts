import { codeCell, markdownCell, type CellRecord } from './notebook-format.js';

/** The control-plane facts of an operation that did not finish normally (no code, no values). */
export interface StoppedOperation {
  /** The error code of the outcome, e.g. `operation_timeout`, `worker_crashed`, `memory_limit`. */
  code: string;
  /** Why it stopped early: `timeout`, `cancelled`, `crash`, `shutdown`, or null. */
  interruption: string | null;
  /** What became of the namespace: `preserved`, `reset`, `unknown`, or null. */
  namespace: string | null;
  /** The runtime epoch after the operation. */
  epoch: number;
  /** Time from dispatch to outcome. */
  durationMs: number;
}

/** Error codes of requests that never ran (nothing to journal). */
const NEVER_RAN = new Set(['runtime_busy', 'queue_timeout', 'runtime_unavailable', 'invalid_arguments', 'tool_not_found', 'stale_registration']);

/** Whether an operation that failed with this outcome ran code in the namespace (and so belongs in the journal). */
export function ranCode(stopped: Pick<StoppedOperation, 'code' | 'interruption'>): boolean {
  if (stopped.interruption !== null) return true;
  if (NEVER_RAN.has(stopped.code)) return false;
  // Cancelled or closed before dispatch: never ran.
  return stopped.code !== 'operation_cancelled' && stopped.code !== 'runtime_closed';
}

function stateText(namespace: string | null, epoch: number): string {
  if (namespace === 'preserved') return 'the namespace state was kept (what ran before the stop is still defined)';
  if (namespace === 'reset') return `the worker was replaced and the namespace reset (epoch ${epoch}): names defined above are gone`;
  return 'the namespace state is unknown';
}

/** A short markdown note saying what happened to the cell just above it, and whether the state was kept. */
export function stoppedNote(stopped: StoppedOperation): string {
  const seconds = `${(stopped.durationMs / 1000).toFixed(1)} s`;
  const state = stateText(stopped.namespace, stopped.epoch);
  if (stopped.code === 'memory_limit') return `**Stopped: memory limit.** The cell above grew past the memory limit after ${seconds}; ${state}.`;
  switch (stopped.interruption) {
    case 'timeout':
      return `**Timed out.** The cell above passed its deadline after ${seconds} and was interrupted; ${state}.`;
    case 'cancelled':
      return `**Cancelled.** The client cancelled the cell above after ${seconds}; it was interrupted and ${state}.`;
    case 'crash':
      return `**Worker crashed.** The worker process ended while the cell above ran; ${state}.`;
    case 'other_client':
      return `**Kernel restarted by another client.** Another client of the kernel (the person's Restart Kernel or Shut Down in Jupyter) ended it while the cell above ran; ${state}.`;
    case 'shutdown':
      return `**Stopped by shutdown.** The server closed while the cell above ran; ${state}.`;
    default:
      return `**No result.** The cell above ran but its result could not be returned (\`${stopped.code.slice(0, 64)}\`).`;
  }
}

/** The note for a worker replaced between cells (it died while idle). */
export function replacedNote(reason: string, epoch: number): string {
  return `**Worker replaced** (${reason.slice(0, 32)}) between cells: the namespace was reset (epoch ${epoch}); names defined above are gone.`;
}

/**
 * A failed operation as the runtime reports it (structurally, worker-supervisor's `OperationOutcome` when not ok:
 * this package imports nothing of ours).
 */
export interface FailedOperation {
  error: { code: string };
  meta: { interruption: string | null; namespace: string | null; epoch: number; durationMs: number };
}

/**
 * The cells for `source` whose operation stopped without a result: the code cell (no outputs) and the note saying
 * what happened, or none when the operation never ran. Both recorders (the server's and Code Mode's) write these.
 * The epoch is the outcome's own (`meta.epoch`, taken when the outcome was made, after any replacement the stop
 * caused), not the runtime's epoch read later, which may already count a later replacement.
 */
export function stoppedCells(source: string, failed: FailedOperation): CellRecord[] {
  const stopped: StoppedOperation = {
    code: String(failed.error.code),
    interruption: failed.meta.interruption,
    namespace: failed.meta.namespace,
    epoch: failed.meta.epoch,
    durationMs: failed.meta.durationMs,
  };
  if (!ranCode(stopped)) return [];
  return [codeCell(source, [], null), markdownCell(stoppedNote(stopped))];
}
