/**
 * The agent's non-blank `execute` (and Code Mode's `run_code`) sent as the kernel's own cell: an execute_request
 * whose metadata marks it as this ipython-mcp's (docs/jupyter.md, "The wire"). The kernel side answers it on the
 * comm; here the kernel's own reply only ends the notebook mirror's view of it, or fails it if the kernel went away.
 */
import type { Logger } from '@ipython-mcp/worker-supervisor';
import type { JupyterComm } from './jupyter-comm.js';
import type { JupyterKernel } from './jupyter-kernel.js';
import { observerTeller, type KernelCellObserver } from './kernel-cell-observer.js';
import type { KernelToolCalls } from './kernel-stdin.js';
import type { JupyterOutput } from './outputs.js';
import type { Pending } from './pending-request.js';

/** What sending a cell needs of its worker. */
export interface AgentCellContext {
  kernel: JupyterKernel;
  /** This worker's comm: the kernel side answers the cell there, among every ipython-mcp it serves. */
  comm: JupyterComm;
  toolCalls: KernelToolCalls;
  /** Whether the request is still open (Code Mode's calls are answered only while it is). */
  open: () => boolean;
  cells: KernelCellObserver | undefined;
  logger: Logger;
  /** The kernel died, restarted or closed under the cell. */
  ended: (error: Error) => void;
  /** The shell message type the kernel side takes an agent's cell as (its ready's `agent_cell_type`); else execute_request. */
  messageType: string | undefined;
}

export function sendAgentCell(pending: Pending, context: AgentCellContext): void {
  const { kernel, comm, cells } = context;
  const stream = pending.hooks.onEvent !== undefined;
  const codeMode = pending.op === 'run_code';
  const metadata = { ipython_mcp: { id: pending.id, params: pending.params, comm: comm.commId, ...(stream ? { stream: true } : {}), ...(codeMode ? { op: pending.op } : {}) } };
  const onInput = codeMode ? context.toolCalls.handlerFor(pending.id, pending.hooks, context.open) : undefined;
  // The observer never affects the request: whatever it throws is logged and dropped.
  const tell = observerTeller(cells, context.logger);
  tell((observer) => observer.cellSent(pending.id, String(pending.params.code)));
  kernel
    .execute(String(pending.params.code), {
      metadata,
      messageType: context.messageType,
      ...(onInput === undefined ? {} : { onInput }),
      discardOutputs: true,
      onSent: (messageId) => {
        pending.messageId = messageId;
      },
      ...(cells === undefined ? {} : { onOutput: (output: JupyterOutput) => tell((observer) => observer.cellOutput(pending.id, output)) }),
    })
    .then((result) => tell((observer) => observer.cellEnded(pending.id, { executionCount: result.executionCount, status: result.status })))
    .catch((error: unknown) => {
      tell((observer) => observer.cellEnded(pending.id, { executionCount: null, status: 'failed' }));
      context.ended(error as Error);
    });
}
