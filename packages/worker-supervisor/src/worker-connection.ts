import { isErrorCode, parseWorkerMessage, type StateReport, type WireError } from '@ipython-mcp/protocol';
import type { OperationFailure } from './runtime-types.js';
import type { ToolAnswer } from './runtime-types.js';
import type { RequestHooks, WorkerReply } from './worker-handle.js';
import type { Logger } from './logger.js';
import type { WorkerChannel } from './worker-channel.js';

/**
 * A worker's error as an operation failure. A code outside the stable list is a worker bug: the caller gets
 * `internal_error` (its code in `details.worker_code`) rather than a code no client can know.
 */
export function knownFailure(error: WireError): OperationFailure {
  if (isErrorCode(error.code)) {
    return error.details === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, details: error.details };
  }
  return { code: 'internal_error', message: error.message, details: { ...error.details, worker_code: error.code } };
}

/** Why a worker stopped being usable. */
export class WorkerExitedError extends Error {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  constructor(message: string, exitCode: number | null, signal: NodeJS.Signals | null) {
    super(message);
    this.name = 'WorkerExitedError';
    this.exitCode = exitCode;
    this.signal = signal;
  }
}

/** Start-up failed: the message is one clear line for a person. */
export class WorkerStartupError extends Error {
  /**
   * @param message - why the worker did not start
   * @param retry - set when the cause may pass (a Jupyter kernel that is stuck in a cell, a server that is
   *   restarting): the runtime answers with `code` and tries another start after `afterMs` in the background,
   *   instead of giving up; `waitingFor` names what it waits for (`the Jupyter server at URL to answer`)
   */
  constructor(
    message: string,
    readonly retry?: { readonly code: 'runtime_busy' | 'runtime_unavailable'; readonly afterMs: number; readonly waitingFor?: string | undefined } | undefined,
  ) {
    super(message);
    this.name = 'WorkerStartupError';
  }
}

interface Pending {
  resolve: (reply: WorkerReply) => void;
  reject: (error: Error) => void;
  hooks: RequestHooks;
}

/**
 * Request matching over a {@link WorkerChannel}, after the handshake: numbers requests, routes responses, stream
 * events and nested tool calls to the request they name, and fails every outstanding request at once when the
 * worker ends. It knows nothing about deadlines or admission: the runtime owns those.
 */
export class RequestMatcher {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Receives the worker's `state_report` messages (saves of the namespace snapshot). */
  onStateReport: ((report: StateReport) => void) | undefined;

  /**
   * @param unusable why a request cannot be sent now (the worker is not ready or has ended), or undefined.
   * @param canSend whether control messages (interrupt, tool results) may be sent now.
   */
  constructor(
    private readonly channel: WorkerChannel,
    private readonly logger: Logger,
    private readonly unusable: () => Error | undefined,
    private readonly canSend: () => boolean,
  ) {}

  /** Requests sent and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request. Resolves with the worker's reply; rejects with the `unusable` error, or with a
   * `message_too_large` FrameError if the request cannot be framed.
   */
  request(op: string, params: Record<string, unknown>, hooks: RequestHooks = {}): { id: number; reply: Promise<WorkerReply> } {
    const id = this.nextId++;
    const reply = new Promise<WorkerReply>((resolve, reject) => {
      const problem = this.unusable();
      if (problem !== undefined) {
        reject(problem);
        return;
      }
      try {
        this.channel.send({ type: 'request', id, op, params, stream: hooks.onEvent !== undefined });
      } catch (error) {
        reject(error as Error);
        return;
      }
      this.pending.set(id, { resolve, reject, hooks });
    });
    return { id, reply };
  }

  /** Asks the worker to interrupt request `id` if it is still the active one. */
  interrupt(id: number, reason?: 'memory_limit'): void {
    this.send(reason === undefined ? { type: 'interrupt', id } : { type: 'interrupt', id, reason });
  }

  /** Answers a nested tool call. */
  sendToolResult(callId: number, result: ToolAnswer): void {
    this.send(
      result.ok
        ? { type: 'tool_result', call_id: callId, ok: true, value_json: result.valueJson }
        : { type: 'tool_result', call_id: callId, ok: false, message: result.message },
    );
  }

  /** Sends a control message; a message that cannot be framed is logged, not thrown. */
  send(message: unknown): void {
    if (!this.canSend()) return;
    try {
      this.channel.send(message);
    } catch (error) {
      this.logger.warn('worker.send_failed', { reason: (error as Error).message });
    }
  }

  /** Routes one decoded message received after the handshake. */
  handle(raw: unknown): void {
    const message = parseWorkerMessage(raw);
    if (message === undefined) {
      this.logger.warn('worker.invalid_message', { type: typeof raw === 'object' && raw !== null ? String((raw as { type?: unknown }).type).slice(0, 32) : typeof raw });
      return;
    }
    switch (message.type) {
      case 'response': {
        if (message.id === null) return;
        const pending = this.pending.get(message.id);
        if (pending === undefined) return;
        this.pending.delete(message.id);
        const revision = message.catalog_revision;
        const reply: WorkerReply = message.ok ? { ok: true, result: message.result } : { ok: false, error: knownFailure(message.error) };
        if (revision !== undefined) reply.catalogRevision = revision;
        pending.resolve(reply);
        return;
      }
      case 'event':
        this.pending.get(message.id)?.hooks.onEvent?.(message);
        return;
      case 'tool_call': {
        const pending = this.pending.get(message.id);
        if (pending?.hooks.onToolCall === undefined) {
          this.sendToolResult(message.call_id, { ok: false, message: 'tool calls are not available here' });
          return;
        }
        pending.hooks.onToolCall(message);
        return;
      }
      case 'protocol_error': {
        this.logger.warn('worker.protocol_error', { code: message.code });
        if (message.id !== undefined) {
          const pending = this.pending.get(message.id);
          if (pending !== undefined) {
            this.pending.delete(message.id);
            pending.resolve({ ok: false, error: knownFailure({ code: message.code, message: message.message }) });
          }
        }
        return;
      }
      case 'state_report':
        this.onStateReport?.(message.report);
        return;
      default:
        return;
    }
  }

  /** Fails every outstanding request (the worker ended). */
  rejectAll(error: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const entry of pending) entry.reject(error);
  }
}
