/** One request a kernel worker holds, from `request()` to its answer, and the size check it passes first. */
import { FrameError } from '@ipython-mcp/protocol';
import type { RequestHooks, SharedKernelFacts, WorkerReply } from '@ipython-mcp/worker-supervisor';

/** Waiting in Node (the kernel busy with another client's request), sent to the kernel, or seen running there. */
export type PendingState = 'waiting' | 'sent' | 'running';

export interface Pending {
  readonly id: number;
  readonly op: string;
  readonly params: Record<string, unknown>;
  readonly hooks: RequestHooks;
  readonly cell: boolean;
  state: PendingState;
  /** The message id of what was sent (execute_request or comm_msg). */
  messageId: string | undefined;
  /** Interrupted while queued in the kernel: interrupt it as soon as it runs. */
  interruptWhenRunning: boolean;
  /** This worker asked for an interrupt of it (a KeyboardInterrupt in its answer is then ours). */
  interruptAsked?: boolean | undefined;
  /** How often its answer was asked for again after its idle came without it (the server dropped it). */
  resends?: number | undefined;
  /** Its answer came and is held a moment (an interrupt nobody here asked for): its cell's idle is no failure. */
  answerHeld?: boolean | undefined;
  /** When it was handed to this worker (performance.now()). */
  readonly queuedAt: number;
  /** When it was (last) sent to the kernel (performance.now()), once it was. */
  sentAt?: number | undefined;
  /**
   * How long it waited for the kernel: in Node while the kernel was busy with other clients' requests, then in the
   * kernel's own queue until the kernel took it up (measured from the kernel's `busy` for it: kernel-queue-clock.ts).
   */
  waitedMs: number;
  /** Whose request it last waited behind, if it waited. */
  behind: 'person' | 'agent' | null;
  /** When it ended unanswered (the kernel went away under it), so its waits stop growing (performance.now()). */
  endedAt?: number | undefined;
  resolve(reply: WorkerReply): void;
  reject(error: Error): void;
}

/**
 * The `message_too_large` refusal of a request over the IPC limit, measured as the local worker's channel frames it
 * (the JSON of the request message), or undefined: such a request never reaches the kernel.
 */
export function oversize(id: number, op: string, params: Record<string, unknown>, limit: number): FrameError | undefined {
  // A Jupyter server ends the WebSocket of a message over its websocket_max_message_size (Tornado's default, 10 MiB):
  // a request is never sent larger than WEBSOCKET_SAFE_BYTES, whatever IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES allows.
  const bound = Math.min(limit, WEBSOCKET_SAFE_BYTES);
  // Cheap first: a string's UTF-8 size is at most three bytes a character, so most requests need no encoding.
  const text = JSON.stringify({ type: 'request', id, op, params });
  if (text.length * 3 + 1 <= bound) return undefined;
  const size = Buffer.byteLength(text, 'utf8') + 1;
  if (size <= bound) return undefined;
  const why = bound < limit ? 'limit of a message to a Jupyter server (its WebSocket closes past 10 MiB)' : 'IPC limit';
  return new FrameError('message_too_large', `message of ${size} bytes exceeds the ${bound}-byte ${why}`, size);
}

/** The largest request sent to a kernel, in bytes: under a Jupyter server's 10 MiB WebSocket message limit. */
export const WEBSOCKET_SAFE_BYTES = 8 * 1024 * 1024;

/**
 * Who did what to a request as far as it went, at `now` (performance.now()): taken up by the kernel (`ran`) once its
 * `busy` was seen; its wait in Node, plus its time in the kernel's queue (measured when it began there, or, for one
 * sent and never begun, up to when it ended); and whose request it waited behind, if it waited at all (a wait that
 * rounds to 0 ms was behind nobody).
 */
export function factsOf(pending: Pending, now: number): SharedKernelFacts {
  const until = pending.endedAt ?? now;
  let waitedMs = pending.waitedMs;
  if (pending.state === 'waiting') waitedMs = until - pending.queuedAt;
  else if (pending.state === 'sent' && pending.sentAt !== undefined) waitedMs += until - pending.sentAt;
  waitedMs = Math.max(0, waitedMs);
  return { ran: pending.state === 'running', waitedMs, behind: Math.round(waitedMs) === 0 ? null : pending.behind };
}
