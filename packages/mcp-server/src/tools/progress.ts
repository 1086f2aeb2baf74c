import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { WorkerEvent } from '@ipython-mcp/protocol';

/** Output is coalesced and sent at most this often. */
const FLUSH_MS = 200;
/** A heartbeat goes out when nothing was sent for this long. */
const HEARTBEAT_MS = 2000;
/** The response waits until this long after the last notification (see {@link ProgressReporter.settle}). */
const QUIET_MS = 150;
const MAX_MESSAGE_CHARS = 4096;

/**
 * Streams output and a heartbeat as notifications/progress while an operation runs. Each message holds whole lines,
 * `[stdout] ` or `[stderr] ` before each run of lines from one stream; a line still being written waits for its
 * newline (one longer than a message is sent in pieces).
 */
export interface ProgressReporter {
  onEvent: (event: WorkerEvent) => void;
  /**
   * Stops reporting (output not yet sent is dropped: the result carries it) and resolves once the last
   * notification is at least QUIET_MS old. A progress notification read in the same chunk as the response makes
   * some clients (the TypeScript SDK, typescript-sdk#2580) report "unknown token" or even close the transport,
   * so the response is held back briefly rather than sent right behind a notification.
   */
  settle: () => Promise<void>;
}

/**
 * A reporter for a request that carried a progress token, or undefined when it did not (then nothing is sent).
 * The worker coalesces output (at most one chunk per stream per 100 ms); this coalesces again to one
 * notification per FLUSH_MS, each message bounded, and sends a heartbeat after HEARTBEAT_MS without one.
 */
export function progressReporter(
  token: string | number | undefined,
  send: (notification: ServerNotification) => Promise<void>,
): ProgressReporter | undefined {
  if (token === undefined) return undefined;
  let progress = 0;
  let stopped = false;
  let lastSentAt = Number.NEGATIVE_INFINITY;
  let pending = '';
  const startedAt = performance.now();
  const emit = (message: string): void => {
    progress += 1;
    lastSentAt = performance.now();
    send({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(() => undefined);
  };
  const ticker = setInterval(() => {
    if (stopped) return;
    if (pending.length > 0) {
      const message = pending;
      pending = '';
      emit(message);
    } else if (performance.now() - lastSentAt >= HEARTBEAT_MS && performance.now() - startedAt >= HEARTBEAT_MS) {
      emit(`running for ${Math.round((performance.now() - startedAt) / 1000)} s`);
    }
  }, FLUSH_MS);
  ticker.unref();
  // Output reaches the worker's sinks in arbitrary chunks; a notification carries whole lines only, so the tail of
  // a chunk waits here for its newline (or until it alone fills a message).
  const partial = new Map<string, string>();
  let pendingKind = '';
  const append = (kind: string, lines: string): void => {
    if (pending.length >= MAX_MESSAGE_CHARS) return;
    const label = pending.length > 0 && kind === pendingKind ? '' : `[${kind}] `;
    pendingKind = kind;
    const joined = `${pending}${pending.length > 0 ? '\n' : ''}${label}${lines}`;
    if (joined.length <= MAX_MESSAGE_CHARS) {
      pending = joined;
      return;
    }
    const cut = joined.lastIndexOf('\n', MAX_MESSAGE_CHARS);
    pending = cut > pending.length ? joined.slice(0, cut) : joined.slice(0, MAX_MESSAGE_CHARS);
  };
  return {
    onEvent(event) {
      if (stopped) return;
      const text = (partial.get(event.kind) ?? '') + event.text;
      const end = text.lastIndexOf('\n');
      if (end < 0) {
        if (text.length < MAX_MESSAGE_CHARS) {
          partial.set(event.kind, text);
          return;
        }
        partial.set(event.kind, '');
        append(event.kind, text);
        return;
      }
      partial.set(event.kind, text.slice(end + 1, end + 1 + MAX_MESSAGE_CHARS));
      append(event.kind, text.slice(0, end));
    },
    async settle() {
      stopped = true;
      clearInterval(ticker);
      pending = '';
      const wait = QUIET_MS - (performance.now() - lastSentAt);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    },
  };
}
