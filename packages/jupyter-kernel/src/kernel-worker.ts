/**
 * A worker whose namespace is a Jupyter kernel's: the worker's Python package is booted into the kernel with one
 * silent cell, then spoken to over a comm (the handshake and every operation but a non-blank `execute`); a
 * non-blank `execute` runs as the kernel's own cell, which the kernel side captures and answers on the comm. The
 * wire is fixed in docs/jupyter.md ("The wire").
 *
 * Beside it: its options (kernel-worker-options.ts), the requests it holds (pending-request.ts), the handshake
 * (kernel-handshake.ts), other clients' requests it waits behind (foreign-requests.ts), the probes after a reconnect
 * (reconnect-probes.ts), the agent's cells sent as the kernel's own (agent-cell.ts), spill files (kernel-spills.ts),
 * the notebook mirror's observer (kernel-cell-observer.ts), Code Mode's calls on the stdin channel (kernel-stdin.ts).
 */
import { ConfigureSchema, PROTOCOL_VERSION, parseWorkerMessage } from '@ipython-mcp/protocol';
import {
  WorkerExitedError,
  WorkerStartupError,
  knownFailure,
  silentLogger,
  type Logger,
  type OperationFailure,
  type OtherClientAction,
  type RequestHooks,
  type SharedKernelFacts,
  type ToolAnswer,
  type WorkerHandle,
  type WorkerInfo,
  type WorkerReply,
} from '@ipython-mcp/worker-supervisor';
import { sendAgentCell } from './agent-cell.js';
import { bootCellCode } from './boot-cell.js';
import { ForeignRequests } from './foreign-requests.js';
import type { JupyterComm } from './jupyter-comm.js';
import type { JupyterKernel, KernelActivity } from './jupyter-kernel.js';
import { readHandshake } from './kernel-handshake.js';
import { JupyterKernelError } from './errors.js';
import { directSpills, SpillTransfer, spillProbe } from './kernel-spills.js';
import { KernelQueueClock } from './kernel-queue-clock.js';
import { KernelToolCalls, machineGuardConfigure, runsAsCell } from './kernel-stdin.js';
import { WORKER_COMM_TARGET, type KernelWorkerOptions } from './kernel-worker-options.js';
import { factsOf, oversize, type Pending } from './pending-request.js';
import { ReconnectProbes } from './reconnect-probes.js';

export type { KernelCellObserver } from './kernel-cell-observer.js';
export { WORKER_COMM_TARGET } from './kernel-worker-options.js';
export type { KernelWorkerOptions } from './kernel-worker-options.js';

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/**
 * How long check() waits for the kernel's control channel: a kernel that died while idle answers only once the
 * server noticed (its restarter polls every 3 s) and started it again.
 */
const CHECK_WAIT_MS = 5_000;
/** How recently the kernel must have been heard for {@link KernelWorker.check} to send nothing before a request. */
const HEARD_RECENTLY_MS = 200;

/**
 * How long a call waits for the kernel's channels to reopen once the server answers for the kernel again, before
 * it is answered that the route is away (nothing sent).
 */
const REACH_WAIT_MS = 2_000;

/** A moment as the agent reads it: ISO 8601 to the second, UTC. */
function secondsText(moment: Date): string {
  return moment.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** How long a cell's answer of an interrupt nobody here asked for waits for a restart to announce itself. */
const RESTART_NOTICE_MS = 1_000;

/** How long shutdown() waits for the kernel side to close the comm after `shutdown`, at most. */
const SHUTDOWN_WAIT_MS = 2_000;

/** How many recent requests keep their who-did-what facts after they ended (the runtime reads them at once). */
const RECENT_REQUESTS = 64;

/**
 * How often an answer the Jupyter server dropped (its IOPub rate limits drop any message but a status) is asked for
 * again, after its request's idle came without it, before the call fails.
 */
const MAX_RESENDS = 3;

/**
 * One worker over one kernel. Requests wait in Node while the kernel is busy with another client's request (a
 * human's cell), so one interrupted while it waits is withdrawn without ever reaching the kernel; an interrupt of a
 * request the kernel is running goes through the server's REST interrupt, and of no other.
 */
export class JupyterKernelWorker implements WorkerHandle {
  readonly ready: Promise<WorkerInfo>;
  readonly exited: Promise<Exit>;
  /** No local process: the memory guard has nothing to read. */
  readonly pid: number | undefined = undefined;
  readonly #options: KernelWorkerOptions;
  readonly #logger: Logger;
  readonly #pending = new Map<number, Pending>();
  readonly #waiting: Pending[] = [];
  /** Requests of other clients the kernel is busy with: this worker's requests wait in Node behind them. */
  readonly #foreign = new ForeignRequests();
  #nextId = 1;
  /** The latest requests, answered or not, by id: what {@link sharedFacts} reads of one that ended unanswered. */
  readonly #recent = new Map<number, Pending>();
  /** Measures each request's wait in the kernel's own queue from the kernel's `busy` for it. */
  readonly #queueClock = new KernelQueueClock();
  readonly #probes = new ReconnectProbes();
  #kernel: JupyterKernel | undefined;
  #comm: JupyterComm | undefined;
  #readyState: 'starting' | 'ready' | 'failed' = 'starting';
  #exit: Exit | undefined;
  #exitReason = '';
  #resolveExited!: (exit: Exit) => void;
  #settleReady!: { resolve: (info: WorkerInfo) => void; reject: (error: Error) => void };
  #startupTimer: NodeJS.Timeout | undefined;
  /** Abandons the kernel's opening when the worker ends first: a kernel started for it is shut down at once. */
  readonly #opening = new AbortController();
  #reportedPid: number | undefined;
  #readyInfo: WorkerInfo | undefined;
  /**
   * The shell message type the kernel side takes the agent's cells as (kernel/__init__.py, `_take_agent_cells`): a
   * kernel without the side (restarted since) does not know it and runs nothing. Undefined: plain execute_requests.
   */
  #agentCellType: string | undefined;
  readonly #startedAt = performance.now();
  /** Code Mode's nested calls, on the kernel's stdin channel (kernel-stdin.ts). */
  readonly #toolCalls: KernelToolCalls;
  /** Answers whose spill files are being pulled from a kernel that does not see the spill directory, by request id. */
  readonly #transfers = new Map<number, SpillTransfer>();
  /** How the kernel side's spill files reach this side: `direct`, `transfer`, or undefined (spilling off). */
  #spillMode: string | undefined;

  constructor(options: KernelWorkerOptions) {
    this.#options = options;
    this.#logger = options.logger ?? options.start.logger ?? silentLogger;
    this.#toolCalls = new KernelToolCalls(this.#logger);
    this.ready = new Promise<WorkerInfo>((resolve, reject) => {
      this.#settleReady = { resolve, reject };
    });
    this.ready.catch(() => undefined);
    this.exited = new Promise((resolve) => {
      this.#resolveExited = resolve;
    });
    this.#startupTimer = setTimeout(() => {
      // A server that is restarting (or hangs while it shuts down) may answer later: the backend says whether to retry.
      const message = `the kernel did not become ready within ${options.start.startupTimeoutMs} ms`;
      this.#failStartup(message, this.#options.startupRetry?.(new JupyterKernelError('jupyter_kernel_died', { reason: message })));
    }, options.start.startupTimeoutMs);
    void this.#boot();
  }

  /**
   * The requests waiting in Node now for the kernel, busy with another client's request: how many, behind whose
   * request, and since when (ms); null when none waits. What runtime_status shows of a call held by the person's cell.
   */
  waitingNow(): { count: number; behind: 'person' | 'agent'; since_ms: number } | null {
    if (this.#waiting.length === 0 || this.#foreign.size === 0) return null;
    // #waiting is in arrival order: its first has waited longest.
    const oldest = this.#waiting[0] as Pending;
    return { count: this.#waiting.length, behind: this.#foreign.behindNow() ?? 'person', since_ms: Math.round(performance.now() - oldest.queuedAt) };
  }

  /** What this worker tells the runtime about who did what to a request the kernel answered. */
  #facts(pending: Pending, stoppedBy?: 'other_client'): SharedKernelFacts {
    return { ...factsOf(pending, performance.now()), ran: true, ...(stoppedBy === undefined ? {} : { stoppedBy }) };
  }

  /**
   * Who did what to request `id`, however it ended (answered, withdrawn, or unanswered because the kernel died,
   * restarted or was shut down under it, or the worker was killed): whether the kernel took it up, how long it
   * waited for the kernel and behind whose request. Undefined for an id this worker no longer remembers.
   */
  sharedFacts(id: number): SharedKernelFacts | undefined {
    const pending = this.#recent.get(id);
    return pending === undefined ? undefined : factsOf(pending, performance.now());
  }

  /** Set once the kernel was restarted or shut down by another client of it (the person's Restart Kernel). */
  get endedByOtherClient(): OtherClientAction | undefined {
    return this.#kernel?.lostToOtherClient;
  }

  /** The id of the kernel this worker runs in, once it opened one. */
  get kernelId(): string | undefined {
    return this.#kernel?.kernelId;
  }

  /** Since when the kernel's channels are down and why, while they are (the kernel is not lost meanwhile). */
  awayNow(): { since: Date; reason: string } | undefined {
    return this.alive ? this.#kernel?.away : undefined;
  }

  /** The pid the kernel side reported (a process on the kernel's machine), once ready. */
  get reportedPid(): number | undefined {
    return this.#reportedPid;
  }

  get alive(): boolean {
    return this.#exit === undefined;
  }

  async #boot(): Promise<void> {
    let kernel: JupyterKernel;
    try {
      kernel = await this.#options.open(this.#opening.signal);
    } catch (error) {
      // A kernel that is stuck or gone for now: the runtime tries again later (the backend says when).
      this.#failStartup((error as Error).message, error instanceof WorkerStartupError ? error.retry : undefined);
      return;
    }
    if (this.#readyState !== 'starting' || !this.alive) {
      await kernel.close().catch(() => undefined);
      return;
    }
    this.#kernel = kernel;
    kernel.onActivity((activity) => this.#onActivity(activity));
    kernel.onReconnected(() => this.#probeAfterReconnect());
    kernel.onAwayTooLong((away) => this.#answerCut(away));
    kernel.onLost((error) => this.#end({ code: null, signal: null }, error.message));
    try {
      const booted = await kernel.execute(bootCellCode(this.#options.sourceDirectory), { silent: true, storeHistory: false, discardOutputs: true });
      if (booted.status !== 'ok') {
        const error = booted.error;
        this.#failStartup(
          error === undefined ? `the boot cell was ${booted.status}` : `the worker could not be loaded into the kernel: ${error.ename}: ${error.evalue}`.slice(0, 2000),
        );
        return;
      }
      if (this.#readyState !== 'starting') return;
      const configure = ConfigureSchema.parse({ type: 'configure', protocol: PROTOCOL_VERSION, codec: 'json', ...this.#options.start.configure });
      // The kernel side answers the configure (ready or startup_failed) while it handles the comm_open, having read
      // the spill probe (kernel-spills.ts) if it can.
      const probe = spillProbe(this.#spillDirectory);
      let comm: JupyterComm;
      try {
        comm = await kernel.openComm(WORKER_COMM_TARGET, { ...configure, ...machineGuardConfigure(this.#options.machineGuard), ...probe.configure }, (data) => this.#onCommData(data));
      } finally {
        probe.remove();
      }
      if (!this.alive) {
        comm.close();
        return;
      }
      this.#comm = comm;
      comm.onClose(() => {
        if (this.#comm === comm) this.#end({ code: null, signal: null }, 'the kernel side closed its channel (the kernel restarted, or an ipython-mcp of another version booted it again)');
      });
      const info = this.#readyInfo;
      if (this.#readyState !== 'starting') return;
      if (info === undefined) {
        this.#failStartup('the kernel side did not answer the configure message (is the kernel an IPython kernel?)');
        return;
      }
      this.#readyState = 'ready';
      clearTimeout(this.#startupTimer);
      this.#settleReady.resolve({ ...info, startupMs: performance.now() - this.#startedAt, namespaceKept: this.#options.namespaceKept?.(kernel) ?? false });
    } catch (error) {
      this.#failStartup((error as Error).message, this.#options.startupRetry?.(error));
    }
  }

  #onCommData(data: Readonly<Record<string, unknown>>): void {
    let message: unknown;
    try {
      message = typeof data.m === 'string' ? JSON.parse(data.m) : undefined;
    } catch {
      message = undefined;
    }
    if (typeof message !== 'object' || message === null) {
      this.#logger.warn('kernel.invalid_message', {});
      return;
    }
    if (this.#readyState === 'starting' && this.#readyInfo === undefined) {
      this.#onHandshake(message as Record<string, unknown>);
      return;
    }
    this.#route(message);
  }

  #onHandshake(message: Record<string, unknown>): void {
    const handshake = readHandshake(message);
    if (!handshake.ok) {
      this.#failStartup(handshake.failure);
      return;
    }
    // Ready once the comm is in place (#boot): the kernel side answers while the comm_open is still being handled.
    this.#reportedPid = handshake.pid;
    this.#readyInfo = handshake.info;
    this.#spillMode = typeof message.spill === 'string' ? message.spill : undefined;
    const cellType = message.agent_cell_type;
    this.#agentCellType = typeof cellType === 'string' && /^[a-z_]{1,64}$/.test(cellType) ? cellType : undefined;
  }

  #route(raw: unknown, held = false): void {
    const type = (raw as { type?: unknown }).type;
    if (type === 'spill_chunk') {
      for (const transfer of this.#transfers.values()) transfer.onChunk(raw as Record<string, unknown>);
      return;
    }
    if (type === 'resent') {
      // The kernel side kept no answer of that request: it ran without the hooks (or ended before answering).
      const id = (raw as { id?: unknown }).id;
      if (typeof id === 'number') this.#unanswered(id);
      return;
    }
    if ((raw as { type?: unknown }).type === 'probe') {
      this.#onProbe(raw as Record<string, unknown>);
      return;
    }
    const message = parseWorkerMessage(raw);
    if (message === undefined) {
      this.#logger.warn('kernel.invalid_message', {});
      return;
    }
    switch (message.type) {
      case 'response': {
        if (message.id === null) return;
        if (!held && this.#unaskedInterrupt(message.id, message.ok ? message.result : undefined)) {
          // Nobody here interrupted the cell: the person's stop button, or a restart of the kernel, which interrupts
          // a running cell before it ends the process. A restart announces itself right after (shutdown_reply) and
          // ends this worker, so the call says the kernel restarted rather than a bare KeyboardInterrupt.
          const pending = this.#pending.get(message.id);
          if (pending !== undefined) pending.answerHeld = true;
          setTimeout(() => this.#route(raw, true), RESTART_NOTICE_MS).unref();
          return;
        }
        const pending = this.#settle(message.id);
        if (pending === undefined) return;
        // Held: an interrupt nobody here asked for, and no restart followed: another client stopped the cell.
        const shared = this.#facts(pending, held ? 'other_client' : undefined);
        const reply: WorkerReply = message.ok ? { ok: true, result: directSpills(this.#spillDirectory, message.result, this.#logger), shared } : { ok: false, error: knownFailure(message.error), shared };
        if (message.catalog_revision !== undefined) reply.catalogRevision = message.catalog_revision;
        if (reply.ok && this.#comm !== undefined && this.#spillDirectory !== undefined && SpillTransfer.needed(reply.result)) {
          this.#pullSpills(pending, reply, this.#comm, this.#spillDirectory);
          return;
        }
        pending.resolve(reply);
        return;
      }
      case 'event':
        this.#pending.get(message.id)?.hooks.onEvent?.(message);
        return;
      case 'protocol_error': {
        this.#logger.warn('kernel.protocol_error', { code: message.code });
        if (message.id === undefined) return;
        const pending = this.#settle(message.id);
        pending?.resolve({ ok: false, error: knownFailure({ code: message.code, message: message.message }), shared: this.#facts(pending) });
        return;
      }
      default:
        return;
    }
  }

  get #spillDirectory(): string | undefined {
    return this.#options.start.configure.output_spill?.dir;
  }

  /**
   * Pulls the answer's spill files from the kernel side before the answer is given, the deadline paused meanwhile
   * (the code has ended; a stop during the pull gives the answer with what came: SpillTransfer).
   */
  #pullSpills(pending: Pending, reply: WorkerReply & { ok: true }, comm: JupyterComm, directory: string): void {
    const transfer = new SpillTransfer(comm, directory, reply.result, this.#logger);
    this.#transfers.set(pending.id, transfer);
    pending.hooks.onPaused?.(true);
    void transfer.done.then((result) => {
      this.#transfers.delete(pending.id);
      pending.hooks.onPaused?.(false);
      pending.resolve({ ...reply, result });
    });
  }

  /** A request whose answer never came, and that the kernel side kept none of: it ran without the hooks. */
  #unanswered(id: number): void {
    const pending = this.#pending.get(id);
    if (pending === undefined || pending.answerHeld === true) return;
    this.#logger.warn('kernel.unhooked_cell', { op: pending.op });
    this.#settle(id)?.resolve({
      ok: false,
      error: { code: 'internal_error', message: 'the kernel ran the cell without the ipython-mcp hooks (was the worker unloaded?)' },
    });
  }

  /**
   * The kernel went idle after one of this worker's requests without its answer: the Jupyter server dropped it (an
   * IOPub rate limit), or the request ran without the hooks. The kernel side is asked for it again; its own request's
   * idle resets the server's rate window.
   */
  #answerMissing(pending: Pending): void {
    const comm = this.#comm;
    const asked = pending.resends ?? 0;
    if (comm === undefined || asked >= MAX_RESENDS) {
      this.#unanswered(pending.id);
      return;
    }
    pending.resends = asked + 1;
    this.#logger.warn('kernel.answer_resent', { op: pending.op });
    try {
      pending.messageId = comm.send({ type: 'resend', id: pending.id });
    } catch {
      this.#unanswered(pending.id);
    }
  }

  #unaskedInterrupt(id: number, result: Record<string, unknown> | undefined): boolean {
    const pending = this.#pending.get(id);
    if (pending === undefined || !pending.cell || pending.interruptAsked === true) return false;
    const error = result?.error as { type?: unknown } | null | undefined;
    return error?.type === 'KeyboardInterrupt';
  }

  /** After a reconnect, the requests sent but not yet seen to begin are followed by a probe (reconnect-probes.ts). */
  #probeAfterReconnect(): void {
    const comm = this.#comm;
    const suspects = [...this.#pending.values()].filter((each) => each.state === 'sent').map((each) => each.id);
    if (comm === undefined || suspects.length === 0 || !this.alive) return;
    this.#probes.send(comm, suspects);
  }

  /** A probe's answer: each suspect the kernel side never began was lost on the way, and is sent again (once). */
  #onProbe(message: Record<string, unknown>): void {
    for (const id of this.#probes.lost(message)) {
      const pending = this.#pending.get(id);
      if (pending === undefined || pending.state !== 'sent') continue;
      this.#logger.warn('kernel.request_resent', { op: pending.op });
      try {
        this.#send(pending);
      } catch (error) {
        this.#settle(pending.id);
        pending.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  /**
   * The kernel's channels have been down too long for the requests sent before they dropped: each is answered now,
   * saying its cell may have run (or may still run) and its answer is lost. The kernel is not declared lost and
   * this worker lives on: once the server answers again, the next call runs in the same kernel, names kept.
   */
  #answerCut(away: { since: Date; reason: string }): void {
    const since = secondsText(away.since);
    for (const pending of [...this.#pending.values()]) {
      if (pending.state === 'waiting') continue;
      this.#settle(pending.id);
      pending.resolve({
        ok: false,
        error: {
          code: 'worker_crashed',
          message: `the Jupyter server went away during the operation (no answer for the kernel since ${since}: ${away.reason.slice(0, 300)}): the code may have run, or may still be running in the kernel, and its answer is lost. The kernel was not restarted: once the server answers again, the next call runs in it with the names kept`,
          details: { connection_lost_since: away.since.toISOString(), kernel_kept: true },
        },
        shared: this.#facts(pending),
      });
    }
  }

  /** Removes request `id` from the books and returns it, if it was still open. */
  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    pending.endedAt ??= performance.now();
    this.#pending.delete(id);
    const index = this.#waiting.indexOf(pending);
    if (index >= 0) this.#waiting.splice(index, 1);
    return pending;
  }

  #onActivity(activity: KernelActivity): void {
    const kernel = this.#kernel;
    if (kernel === undefined) return;
    if (activity.state === 'starting' || activity.state === 'restarting' || activity.state === 'dead') {
      this.#foreign.clear();
      return;
    }
    if (activity.state === 'idle' && activity.parentSession === kernel.clientId) {
      for (const transfer of this.#transfers.values()) transfer.onIdle(activity.parentId);
    }
    if (activity.parentSession !== kernel.clientId) {
      if (activity.parentId === '') return;
      if (activity.state === 'busy') {
        this.#foreign.began(activity.parentId, activity.parentSession);
        // A request of ours already sent but not yet begun waits behind this one in the kernel's own queue.
        const whose = this.#foreign.behindNow();
        for (const each of this.#pending.values()) if (each.state === 'sent') each.behind = whose;
      } else if (activity.state === 'idle' && this.#foreign.ended(activity.parentId)) this.#pump();
      return;
    }
    const pending = [...this.#pending.values()].find((each) => each.messageId === activity.parentId);
    if (activity.state === 'busy') {
      // Every own busy (the boot cell's and the handshake's too) teaches the clock this connection's floor.
      const sentAt = pending?.state === 'sent' ? pending.sentAt : undefined;
      const queuedMs = this.#queueClock.queuedMs(activity, sentAt === undefined ? 0 : performance.now() - sentAt);
      if (pending !== undefined && sentAt !== undefined) pending.waitedMs += queuedMs;
    }
    if (pending === undefined) return;
    if (activity.state === 'busy' && pending.state === 'sent') {
      pending.state = 'running';
      if (pending.interruptWhenRunning) this.#restInterrupt();
    } else if (activity.state === 'idle' && pending.answerHeld !== true) {
      // The kernel side answers a captured cell from its post_run_cell hook, and a comm request while handling it:
      // both before this idle.
      this.#answerMissing(pending);
    }
  }

  request(op: string, params: Record<string, unknown>, hooks: RequestHooks = {}): { id: number; reply: Promise<WorkerReply> } {
    const id = this.#nextId++;
    const reply = new Promise<WorkerReply>((resolve, reject) => {
      if (!this.alive || this.#readyState !== 'ready') {
        reject(new WorkerExitedError(this.#exit === undefined ? 'the worker is not ready' : `the worker is not running (${this.#exitReason})`, this.#exit?.code ?? null, this.#exit?.signal ?? null));
        return;
      }
      const refused = oversize(id, op, params, this.#options.start.maxMessageBytes);
      if (refused !== undefined) {
        reject(refused);
        return;
      }
      const cell = runsAsCell(op, params);
      const pending: Pending = {
        id,
        op,
        params,
        hooks,
        cell,
        state: 'waiting',
        messageId: undefined,
        interruptWhenRunning: false,
        queuedAt: performance.now(),
        waitedMs: 0,
        behind: null,
        resolve,
        reject,
      };
      this.#pending.set(id, pending);
      this.#remember(pending);
      this.#waiting.push(pending);
      this.#pump();
    });
    // The reply may fail before the caller awaits it (kill() fails every request at once, while the kernel's
    // connection is still closing): that is not an unhandled rejection, the caller still sees it.
    reply.catch(() => undefined);
    return { id, reply };
  }

  #remember(pending: Pending): void {
    this.#recent.set(pending.id, pending);
    if (this.#recent.size <= RECENT_REQUESTS) return;
    const oldest = this.#recent.keys().next();
    if (oldest.done !== true) this.#recent.delete(oldest.value);
  }

  /** Sends the waiting requests, in order, while the kernel is not busy with another client's request. */
  #pump(): void {
    if (this.#waiting.length > 0 && this.#foreign.size > 0) {
      const behind = this.#foreign.behindNow();
      for (const each of this.#waiting) each.behind = behind;
      this.#foreign.scheduleCheck({
        needed: () => this.alive && this.#waiting.length > 0,
        executionState: () => this.#kernel?.executionState(),
        then: () => this.#pump(),
      });
    }
    while (this.#waiting.length > 0 && this.#foreign.size === 0 && this.alive) {
      const pending = this.#waiting.shift() as Pending;
      pending.waitedMs = performance.now() - pending.queuedAt;
      try {
        this.#send(pending);
      } catch (error) {
        this.#settle(pending.id);
        pending.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  #send(pending: Pending): void {
    const kernel = this.#kernel;
    const comm = this.#comm;
    if (kernel === undefined || comm === undefined) throw new WorkerExitedError('the worker is not running', null, null);
    const stream = pending.hooks.onEvent !== undefined;
    pending.state = 'sent';
    pending.sentAt = performance.now();
    if (!pending.cell) {
      pending.messageId = comm.send({ type: 'request', id: pending.id, op: pending.op, params: pending.params, ...(stream ? { stream: true } : {}) });
      return;
    }
    sendAgentCell(pending, {
      kernel,
      comm,
      toolCalls: this.#toolCalls,
      open: () => this.#pending.has(pending.id),
      cells: this.#options.cells,
      logger: this.#logger,
      messageType: this.#agentCellType,
      ended: (error) => {
        // The kernel died, restarted or closed under the cell: the worker is over (its exit fails the rest).
        const still = this.#settle(pending.id);
        if (still === undefined) return;
        still.reject(new WorkerExitedError(`the kernel ended under the request: ${error.message}`, null, null));
      },
    });
  }

  /**
   * Stops request `id`: withdrawn if it still waits in Node; interrupted through the server if the kernel runs it;
   * interrupted as soon as it runs if it waits in the kernel's queue. A finished request is left alone.
   */
  interrupt(id: number): void {
    this.#transfers.get(id)?.stop('the call was stopped (its deadline, a cancel, or the server shutting down) while its spill file was being fetched');
    const pending = this.#pending.get(id);
    if (pending === undefined || !this.alive) return;
    if (pending.state === 'waiting') {
      this.#settle(id);
      const behind = this.#foreign.behindNow() ?? pending.behind;
      pending.resolve({
        ok: false,
        withdrawn: true,
        error: { code: 'operation_cancelled', message: 'withdrawn before it ran: the kernel was busy with another client\'s request' },
        shared: { ran: false, waitedMs: performance.now() - pending.queuedAt, behind },
      });
      return;
    }
    pending.interruptAsked = true;
    if (pending.state === 'running') this.#restInterrupt();
    else pending.interruptWhenRunning = true;
  }

  #restInterrupt(): void {
    this.#kernel?.interrupt().catch((error: unknown) => {
      this.#logger.warn('kernel.interrupt_failed', { reason: (error as Error).message.slice(0, 200) });
    });
  }

  /**
   * Asks the kernel whether it is still the process the worker was booted into, before the runtime sends it an
   * operation: a kernel restarted by another client (or by the server after it died) has none of the worker's hooks,
   * and this worker ends (the runtime attaches a new one) instead of sending a cell that would run unseen.
   */
  async check(): Promise<void | OperationFailure> {
    const kernel = this.#kernel;
    if (!this.alive || this.#readyState !== 'ready' || kernel === undefined) return;
    // Heard a moment ago on channels still up, and the agent's cells come as a message type only this kernel side
    // takes: no question asked (back-to-back calls pay one round trip, not two). A restart in that moment cannot run
    // the cell unseen: the new process does not take the message, and its first word fails the call, nothing run.
    if (this.#agentCellType !== undefined && kernel.heardWithin(HEARD_RECENTLY_MS)) return;
    // Channels that dropped are reopened the moment the server answers for the kernel (a call after a cut or a
    // proxy restart does not wait for the services' back-off); while it does not, nothing is sent.
    if (!(await kernel.reachNow(REACH_WAIT_MS))) {
      const away = kernel.away;
      if (!this.alive || away === undefined) return;
      const since = secondsText(away.since);
      return {
        code: 'runtime_unavailable',
        message: `the Jupyter server does not answer for the kernel (${away.reason.slice(0, 300)}); waiting for it since ${since}. The kernel is not taken for lost and its names are kept (only the server can say it is gone): ipython-mcp reopens its channels as soon as the server answers, and a call made then works (nothing was run)`,
        details: { waiting_for: 'the Jupyter server to answer for the kernel', since: away.since.toISOString() },
        retryable: true,
        retryAfterMs: 1_000,
      };
    }
    // A restart found here fails the kernel's connection, whose loss ends this worker (onLost).
    await kernel.sameKernel(CHECK_WAIT_MS);
  }

  sendToolResult(callId: number, result: ToolAnswer): void {
    this.#toolCalls.answer(callId, result);
  }

  /**
   * Ends the worker at once: every request fails, the connection closes (an owned kernel is shut down with it). A
   * kernel running one of this worker's requests is reported through `onKilledBusy` first.
   */
  kill(): void {
    if (!this.alive) return;
    // Only a request the kernel was running leaves it stuck; one still queued there runs (and is interrupted) later.
    const busy = [...this.#pending.values()].some((each) => each.state === 'running');
    if (busy) this.#options.onKilledBusy?.();
    this.#end({ code: null, signal: 'SIGKILL' }, 'killed');
  }

  async shutdown(graceMs: number): Promise<void> {
    if (!this.alive) return;
    const comm = this.#comm;
    if (this.#readyState === 'ready' && comm !== undefined && !comm.closed) {
      const closed = new Promise<void>((resolve) => comm.onClose(resolve));
      try {
        comm.send({ type: 'shutdown' });
      } catch {
        // the comm went away meanwhile
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(graceMs, SHUTDOWN_WAIT_MS))))]);
      clearTimeout(timer);
    }
    this.#end({ code: 0, signal: null }, 'shut down');
    await this.exited;
  }

  setHeld(): void {
    // The kernel's WebSocket is not ours to unref.
  }

  #failStartup(message: string, retry?: WorkerStartupError['retry']): void {
    if (this.#readyState !== 'starting') return;
    this.#readyState = 'failed';
    clearTimeout(this.#startupTimer);
    this.#settleReady.reject(new WorkerStartupError(message, retry));
    this.#end({ code: 1, signal: null }, message);
  }

  #end(exit: Exit, reason: string): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    this.#exitReason = reason;
    clearTimeout(this.#startupTimer);
    this.#opening.abort();
    this.#foreign.stopChecking();
    if (this.#readyState === 'starting') {
      this.#readyState = 'failed';
      // The kernel lost while the worker booted into it (it died, restarted, or its server went): may pass.
      this.#settleReady.reject(new WorkerStartupError(reason, exit.signal === 'SIGKILL' ? undefined : this.#options.startupRetry?.(new JupyterKernelError('jupyter_kernel_died', { reason }))));
    }
    const error = new WorkerExitedError(`the kernel worker ended: ${reason}`, exit.code, exit.signal);
    const open = [...this.#pending.values()];
    const endedAt = performance.now();
    for (const pending of open) pending.endedAt ??= endedAt;
    this.#pending.clear();
    for (const transfer of this.#transfers.values()) transfer.stop(`the kernel's connection ended (${reason.slice(0, 200)})`);
    this.#probes.clear();
    this.#toolCalls.clear();
    this.#waiting.length = 0;
    for (const pending of open) pending.reject(error);
    const comm = this.#comm;
    this.#comm = undefined;
    comm?.close();
    const kernel = this.#kernel;
    const closing = kernel === undefined ? Promise.resolve() : kernel.close();
    void closing
      .catch((closeError: unknown) => this.#logger.warn('kernel.close_failed', { reason: (closeError as Error).message.slice(0, 200) }))
      .finally(() => this.#resolveExited(exit));
  }
}
