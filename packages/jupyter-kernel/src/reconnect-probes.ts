/**
 * After the channels dropped and came back, a request sent but not yet seen to begin may have been lost with the
 * old connection. A probe follows it through the kernel's queue: the kernel side handles it after every request
 * sent before it, and answers with the ids of the requests it began.
 */
import type { JupyterComm } from './jupyter-comm.js';

export class ReconnectProbes {
  /** Probes sent, by token: the requests that were on their way when the channels dropped. */
  readonly #probes = new Map<number, number[]>();
  #next = 1;

  /** Sends a probe for `suspects` on `comm`. */
  send(comm: JupyterComm, suspects: number[]): void {
    const token = this.#next++;
    this.#probes.set(token, suspects);
    try {
      comm.send({ type: 'probe', token });
    } catch {
      this.#probes.delete(token);
    }
  }

  /** A probe's answer: the suspects the kernel side never began (lost on the way), or [] for an unknown probe. */
  lost(message: Record<string, unknown>): number[] {
    const token = typeof message.token === 'number' ? message.token : -1;
    const suspects = this.#probes.get(token);
    if (suspects === undefined) return [];
    this.#probes.delete(token);
    const seen = new Set(Array.isArray(message.seen) ? message.seen : []);
    return suspects.filter((id) => !seen.has(id));
  }

  clear(): void {
    this.#probes.clear();
  }
}
