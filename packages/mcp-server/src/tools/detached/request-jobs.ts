import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { CellStop } from './detached-cells.js';

/**
 * The detached cells of one client connection (a stdio connection, an HTTP session) by the id of the request that
 * started them, so that the client's `notifications/cancelled` of that request stops its cell whenever it comes.
 *
 * The SDKs (v1 and v2 alike) abort a request's signal only while its handler runs or its response waits to be
 * written, and then drop the response. A call that detached has handed its cell to {@link DetachedCells}; a cancel
 * that lands as the handle is being answered, or after it went out, would leave the cell running with nobody
 * holding its handle. The connection's transport shows every message from the client to {@link observe} before the
 * SDK sees it; a cancel naming a held request stops that cell (an interrupt: the namespace is kept), and its result
 * says who stopped it ({@link CellStop}).
 *
 * An entry is made when a call detaches (or a task starts) and goes when its cell ends, so the map holds at most the
 * connection's running detached cells. A cancel of a request that holds nothing (unknown, never detached, ended)
 * does nothing here; a request that reuses a held id ends the old one's entry (the client no longer means it).
 */
export class RequestJobs {
  /** Each held request's cell, by the controller that stops it. */
  private readonly held = new Map<RequestId, AbortController>();

  /** Requests whose detached cell is still running. */
  get size(): number {
    return this.held.size;
  }

  /** Holds the cell that request `requestId` started until the cell ends (`done` settles). */
  hold(requestId: RequestId, job: { readonly stop: AbortController; readonly done: Promise<unknown> }): void {
    const { stop } = job;
    if (stop.signal.aborted) return;
    this.held.set(requestId, stop);
    const forget = (): void => {
      if (this.held.get(requestId) === stop) this.held.delete(requestId);
    };
    job.done.then(forget, forget);
  }

  /**
   * A message from the client, before the SDK handles it: a `notifications/cancelled` naming a held request stops
   * its cell; a request reusing a held id forgets the old one. Anything else costs one size check while nothing is
   * held.
   */
  observe(message: JSONRPCMessage): void {
    if (this.held.size === 0 || !('method' in message)) return;
    if ('id' in message) {
      this.held.delete(message.id);
      return;
    }
    if (message.method !== 'notifications/cancelled') return;
    const params = message.params as { requestId?: unknown; reason?: unknown } | undefined;
    const requestId = params?.requestId;
    if (typeof requestId === 'string' || typeof requestId === 'number') this.cancel(requestId, params?.reason);
  }

  /** Stops the cell request `requestId` started, if one is held; whether one was. */
  cancel(requestId: RequestId, reason?: unknown): boolean {
    const stop = this.held.get(requestId);
    if (stop === undefined) return false;
    this.held.delete(requestId);
    stop.abort(CellStop.byClient(requestId, reason));
    return true;
  }
}
