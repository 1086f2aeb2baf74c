/** The shapes a caller of a kernel connection (jupyter-kernel.ts) passes and hears. */
import type { JupyterOutput } from './outputs.js';

/**
 * The start of every ipython-mcp connection's client session id. The kernel echoes the session of a request in the
 * parent header of each IOPub message about it (its `busy` and `idle` included), to every client: so any client
 * can tell another ipython-mcp's request from a person's (JupyterLab's and jupyter_client's sessions are bare UUIDs).
 */
export const AGENT_SESSION_PREFIX = 'ipython-mcp-';

/** Options of JupyterKernel.execute. */
export interface JupyterExecuteOptions {
  /** Record the cell in `In`/`Out` and history and advance the counter, as a notebook cell does; default `true`. */
  readonly storeHistory?: boolean | undefined;
  /** Run without publishing outputs or advancing the counter; default `false`. */
  readonly silent?: boolean | undefined;
  /** Abort requests queued behind this one if it fails; default `false`, so a human's queued cells still run. */
  readonly stopOnError?: boolean | undefined;
  /** Receives each output as it arrives, before the result resolves. */
  readonly onOutput?: ((output: JupyterOutput) => void) | undefined;
  /** The execute_request's message metadata (kernel-side code reads it, e.g. in a `pre_run_cell` hook). */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
  /** Keep no outputs in the result (a cell whose output only others watch, or that may print without bound). */
  readonly discardOutputs?: boolean | undefined;
  /**
   * The shell message type to send the request as, in place of `execute_request`: one the kernel side registered
   * (its `agent_cell_type`), which a kernel without that side does not take, so it runs nothing.
   */
  readonly messageType?: string | undefined;
  /** Called with the execute_request's message id as it is sent (IOPub `status` messages name it as their parent). */
  readonly onSent?: ((messageId: string) => void) | undefined;
  /**
   * Answers the cell's input requests (`input()` and the like): with it the request goes with `allow_stdin` true,
   * and each `input_request` of the cell is handed here with the function that sends its `input_reply`.
   */
  readonly onInput?: ((prompt: string, reply: (value: string) => void) => void) | undefined;
}

/** One IOPub `status` message: what the kernel is doing, and for which request of which client. */
export interface KernelActivity {
  /** `busy`, `idle`, `starting`, `restarting`, ... */
  readonly state: string;
  /** The message id of the request the kernel is busy or idle for (empty when it has none). */
  readonly parentId: string;
  /** The client session that sent that request: JupyterKernel.clientId for this connection's own. */
  readonly parentSession: string;
  /** The request's message type (`execute_request`, `comm_msg`, ...). */
  readonly parentType: string;
  /** When the kernel sent this status (its header's ISO date, the kernel's clock); empty when it had none. */
  readonly date: string;
  /** When the request's client made it (the parent header's ISO date, that client's clock); empty when none. */
  readonly parentDate: string;
}
