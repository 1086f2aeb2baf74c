import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { WorkerEvent } from '@ipython-mcp/protocol';

const HEARTBEAT_MS = 5000;
const MAX_MESSAGE_CHARS = 4096;

/** Streams output chunks and a heartbeat as notifications/progress while an operation runs. */
export interface ProgressReporter {
  onEvent: (event: WorkerEvent) => void;
  stop: () => void;
}

/**
 * A reporter for a request that carried a progress token, or undefined when it did not (then nothing is sent).
 * The worker already coalesces output (at most one chunk per stream per 100 ms); the heartbeat says the
 * operation is still alive when it prints nothing.
 */
export function progressReporter(
  token: string | number | undefined,
  send: (notification: ServerNotification) => Promise<void>,
): ProgressReporter | undefined {
  if (token === undefined) return undefined;
  let progress = 0;
  const startedAt = performance.now();
  const emit = (message: string): void => {
    progress += 1;
    send({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(() => undefined);
  };
  const heartbeat = setInterval(() => {
    emit(`running for ${Math.round((performance.now() - startedAt) / 1000)} s`);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    onEvent(event) {
      emit(`[${event.kind}] ${event.text.slice(0, MAX_MESSAGE_CHARS)}`);
    },
    stop() {
      clearInterval(heartbeat);
    },
  };
}
