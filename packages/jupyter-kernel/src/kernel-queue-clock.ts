/**
 * How long a request sat in the kernel's own queue, measured from the kernel's word rather than inferred: the kernel
 * stamps its IOPub `busy` for a request (header `date`, the kernel's clock) when it takes the request up, and that
 * `busy` repeats the request's own stamp (parent header `date`, this client's clock). Their difference is the time
 * from making the request to the kernel beginning it: the transit (a millisecond or so) plus any wait behind other
 * clients' requests, plus the skew between the two clocks when the kernel runs on another machine.
 *
 * The transit and the skew are the same for every request of one connection, so the smallest difference seen (the
 * boot cell's and the handshake's included, which never wait) is taken as the connection's floor, and a request's
 * queue time is what it took beyond that floor. It is also never more than the time this side saw pass between
 * sending the request and hearing its `busy` (an upper bound whatever the clocks say).
 */
import type { KernelActivity } from './kernel-types.js';

export class KernelQueueClock {
  /** The smallest `busy` date minus request date seen on this connection (ms), or undefined before the first. */
  #floorMs: number | undefined;

  /**
   * Takes in one of this connection's own `busy` messages (every request's, the ones nobody waits for included),
   * and returns how long that request waited in the kernel's queue (ms), bounded by `elapsedMs`: the time between
   * sending it and hearing this `busy`. Without the two dates it returns `elapsedMs`.
   */
  queuedMs(activity: Pick<KernelActivity, 'date' | 'parentDate'>, elapsedMs: number): number {
    const elapsed = Math.max(0, elapsedMs);
    const began = Date.parse(activity.date);
    const made = Date.parse(activity.parentDate);
    if (!Number.isFinite(began) || !Number.isFinite(made)) return elapsed;
    const gap = began - made;
    if (this.#floorMs === undefined || gap < this.#floorMs) this.#floorMs = gap;
    return Math.min(elapsed, gap - this.#floorMs);
  }
}
