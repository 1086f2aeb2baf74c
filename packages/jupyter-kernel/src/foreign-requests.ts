/**
 * The requests of other clients a kernel is busy with (IOPub `status: busy` seen, `idle` not yet), and whose: another
 * ipython-mcp's (its session id starts with AGENT_SESSION_PREFIX) or a person's client's (any other). A kernel worker
 * holds its own requests in Node while there is one.
 */
import { AGENT_SESSION_PREFIX } from './kernel-types.js';

export type Whose = 'person' | 'agent';

/** How often a request waiting on another client's request asks the server whether the kernel is still busy. */
const BUSY_CHECK_MS = 3_000;

/** What a busy check needs of its worker. */
export interface BusyCheck {
  /** Whether requests still wait (and the worker is alive). */
  needed(): boolean;
  /** The kernel's execution state as the server tells it, or undefined without a kernel. */
  executionState(): Promise<string | undefined> | undefined;
  /** After the check: send what may go now. */
  then(): void;
}

export class ForeignRequests {
  readonly #busy = new Map<string, Whose>();
  #check: NodeJS.Timeout | undefined;

  get size(): number {
    return this.#busy.size;
  }

  /** Another client's request `parentId` (of session `parentSession`) began. */
  began(parentId: string, parentSession: string): void {
    this.#busy.set(parentId, parentSession.startsWith(AGENT_SESSION_PREFIX) ? 'agent' : 'person');
  }

  /** Another client's request ended: whether it was one being waited on. */
  ended(parentId: string): boolean {
    return this.#busy.delete(parentId);
  }

  /** The kernel (re)started or died: nobody's request runs. */
  clear(): void {
    this.#busy.clear();
  }

  /** Whose request the kernel is busy with for another client: the latest one seen to begin. */
  behindNow(): Whose | null {
    let last: Whose | null = null;
    for (const whose of this.#busy.values()) last = whose;
    return last;
  }

  /**
   * While requests wait on another client's request, asks the server now and then whether the kernel is idle: an
   * IOPub `idle` lost on the way (a WebSocket that dropped and came back) must not hold them forever.
   */
  scheduleCheck(check: BusyCheck): void {
    if (this.#check !== undefined) return;
    this.#check = setTimeout(() => {
      this.#check = undefined;
      if (!check.needed() || this.#busy.size === 0) return;
      const seen = new Set(this.#busy.keys());
      void check
        .executionState()
        ?.then((state) => {
          // Idle now, and still only the requests seen before asking: the missing idles are not coming.
          if (state === 'idle' && [...this.#busy.keys()].every((id) => seen.has(id))) this.#busy.clear();
        })
        .catch(() => undefined)
        .finally(() => check.then());
    }, BUSY_CHECK_MS);
    this.#check.unref();
  }

  stopChecking(): void {
    clearTimeout(this.#check);
  }
}
