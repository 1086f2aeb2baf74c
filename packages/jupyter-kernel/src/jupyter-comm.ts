/**
 * A comm: Jupyter's own two-way channel between a client and code in the kernel, carried on the kernel's shell and
 * IOPub channels. Code that needs more than cells (a request/response protocol with a kernel-side agent) opens one
 * to a target the kernel-side code registered.
 */
import type { Kernel, KernelMessage } from '@jupyterlab/services';

/** A JSON value as comms carry it. */
export type CommData = Readonly<Record<string, unknown>>;

/** One open comm. Messages from the kernel arrive on {@link JupyterComm.onMessage}'s handlers, in order. */
export class JupyterComm {
  readonly #comm: Kernel.IComm;
  readonly #handlers = new Set<(data: CommData) => void>();
  readonly #closeHandlers = new Set<() => void>();
  #closed = false;

  /** @internal Use `JupyterKernel.openComm`. */
  constructor(comm: Kernel.IComm) {
    this.#comm = comm;
    comm.onMsg = (message: KernelMessage.ICommMsgMsg) => {
      const data = (message.content.data ?? {}) as CommData;
      for (const handler of [...this.#handlers]) handler(data);
    };
    comm.onClose = () => {
      this.#markClosed();
    };
  }

  /** The comm's id (shared with the kernel side). */
  get commId(): string {
    return this.#comm.commId;
  }

  /** Whether either side closed the comm (or the kernel connection closed). */
  get closed(): boolean {
    return this.#closed;
  }

  /** @internal Sends the `comm_open`; resolves once the kernel has handled it. */
  async open(data: CommData): Promise<void> {
    await this.#comm.open(data as never).done;
  }

  /**
   * Sends one message to the kernel side. The kernel handles it on its shell channel, so behind a running cell.
   *
   * @param data - a JSON object
   * @returns the `comm_msg`'s message id: the kernel's IOPub `status` messages name it as their parent while the
   *   kernel handles it
   */
  send(data: CommData): string {
    if (this.#closed) throw new Error('the comm is closed');
    return this.#comm.send(data as never).msg.header.msg_id;
  }

  /**
   * Adds a handler for messages from the kernel side.
   *
   * @returns a function that removes the handler
   */
  onMessage(handler: (data: CommData) => void): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /** Adds a handler called once when the comm closes, from either side. */
  onClose(handler: () => void): void {
    if (this.#closed) handler();
    else this.#closeHandlers.add(handler);
  }

  /** Closes the comm (idempotent). */
  close(): void {
    if (this.#closed) return;
    try {
      this.#comm.close();
    } catch {
      // the kernel connection is already gone; the comm is closed either way
    }
    this.#markClosed();
  }

  /** @internal Called when the kernel connection goes away. */
  markClosed(): void {
    this.#markClosed();
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const handler of [...this.#closeHandlers]) handler();
    this.#closeHandlers.clear();
  }
}
