import { silentLogger, type Logger } from './logger.js';
import { InMemoryChannel, type WorkerChannel } from './worker-channel.js';
import {
  RequestMatcher,
  WorkerExitedError,
} from './worker-connection.js';
import type { ToolAnswer } from './runtime-types.js';
import type { RequestHooks, WorkerHandle, WorkerInfo, WorkerReply } from './worker-handle.js';

/** Options of a {@link ChannelWorker}. */
export interface ChannelWorkerOptions {
  /** What the worker reports as its handshake (defaults describe an in-memory worker). */
  info?: Partial<WorkerInfo> | undefined;
  logger?: Logger | undefined;
}

/**
 * A worker that is only a {@link WorkerChannel}: no process, no handshake (ready at once). With an
 * {@link InMemoryChannel} whose other end a test drives, the runtime's dispatch, deadlines, interrupts and request
 * matching run without Python. The other end closing counts as the worker exiting (as pipe EOF does).
 */
export class ChannelWorker implements WorkerHandle {
  readonly ready: Promise<WorkerInfo>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** No process: the memory guard has nothing to read. */
  readonly pid: number | undefined = undefined;
  private readonly requests: RequestMatcher;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private resolveExited!: (value: { code: number | null; signal: NodeJS.Signals | null }) => void;

  constructor(
    private readonly channel: WorkerChannel,
    options: ChannelWorkerOptions = {},
  ) {
    this.ready = Promise.resolve({ pid: 0, python: 'in-memory', ipython: 'in-memory', codec: channel.codec, protectedNames: [], startupMs: 0, ...options.info });
    this.exited = new Promise((resolve) => {
      this.resolveExited = resolve;
    });
    this.requests = new RequestMatcher(
      channel,
      options.logger ?? silentLogger,
      () => (this.alive ? undefined : new WorkerExitedError('the worker is not running', this.exitInfo?.code ?? null, this.exitInfo?.signal ?? null)),
      () => this.alive,
    );
    channel.onmessage = (message) => this.requests.handle(message);
    if (channel instanceof InMemoryChannel) channel.onclose = () => this.end(0, null);
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** Requests sent and not yet answered. */
  get inFlight(): number {
    return this.requests.inFlight;
  }

  request(op: string, params: Record<string, unknown>, hooks: RequestHooks = {}): { id: number; reply: Promise<WorkerReply> } {
    return this.requests.request(op, params, hooks);
  }

  interrupt(id: number, reason?: 'memory_limit'): void {
    this.requests.interrupt(id, reason);
  }

  sendToolResult(callId: number, result: ToolAnswer): void {
    this.requests.sendToolResult(callId, result);
  }

  /** Ends the worker as SIGKILL would: every outstanding request fails with {@link WorkerExitedError}. */
  kill(): void {
    this.end(null, 'SIGKILL');
  }

  async shutdown(graceMs: number): Promise<void> {
    if (!this.alive) return;
    this.requests.send({ type: 'shutdown' });
    this.channel.close();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  setHeld(): void {
    // No process or pipe holds the event loop.
  }

  private end(code: number | null, signal: NodeJS.Signals | null): void {
    if (!this.alive) return;
    this.exitInfo = { code, signal };
    this.channel.close();
    this.requests.rejectAll(new WorkerExitedError(`the worker exited (${signal ?? `code ${String(code)}`})`, code, signal));
    this.resolveExited({ code, signal });
  }
}
