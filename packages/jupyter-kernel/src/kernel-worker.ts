/**
 * A worker whose namespace is a Jupyter kernel's: the worker's Python package is booted into the kernel with one
 * silent cell, then spoken to over a comm (the handshake and every operation but a non-blank `execute`); a
 * non-blank `execute` runs as the kernel's own cell, which the kernel side captures and answers on the comm. The
 * wire is fixed in docs/jupyter.md ("The wire").
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigureSchema, FrameError, PROTOCOL_VERSION, parseWorkerMessage } from '@ipython-mcp/protocol';
import {
  WorkerExitedError,
  WorkerStartupError,
  knownFailure,
  silentLogger,
  type Logger,
  type OperationFailure,
  type RequestHooks,
  type SharedKernelFacts,
  type ToolAnswer,
  type WorkerHandle,
  type WorkerInfo,
  type WorkerReply,
  type WorkerStartOptions,
} from '@ipython-mcp/worker-supervisor';
import { bootCellCode } from './boot-cell.js';
import type { JupyterComm } from './jupyter-comm.js';
import type { JupyterKernel, KernelActivity } from './jupyter-kernel.js';
import { KernelToolCalls, machineGuardConfigure, runsAsCell, type MachineGuardOptions } from './kernel-stdin.js';
import { AGENT_SESSION_PREFIX } from './kernel-types.js';
import type { JupyterOutput } from './outputs.js';

/** The names the kernel side gives spill files: nothing else is written. */
const SPILL_NAME = /^\d{20}-cell\d+-(stdout|stderr)\.txt$/;

/**
 * Sees the agent's cells as they go to the kernel: each non-blank `execute` when it is sent, its IOPub outputs as
 * they arrive, and its end (the execute_reply's status and count, or `failed` when the kernel ended under it). What
 * a notebook mirror needs; it must not throw and never affects the request.
 */
export interface KernelCellObserver {
  cellSent(id: number, code: string): void;
  cellOutput(id: number, output: JupyterOutput): void;
  cellEnded(id: number, end: { executionCount: number | null; status: string }): void;
}

/** The comm target the kernel side registers. */
export const WORKER_COMM_TARGET = '_ipython_mcp_worker';

/** What a {@link JupyterKernelWorker} needs besides the runtime's start options. */
export interface KernelWorkerOptions {
  /** Attaches to (or starts) the kernel and opens its channels; a rejection is the start-up failure's message. */
  open: () => Promise<JupyterKernel>;
  start: WorkerStartOptions;
  /** The directory that holds `ipython_mcp_worker` (workerSourceDirectory()). */
  sourceDirectory: string;
  /** The memory guard and process cleanup the kernel side runs on the kernel's machine (kernel-stdin.ts). */
  machineGuard?: MachineGuardOptions | undefined;
  /** Called when `kill()` ends the worker while one of its requests was running or queued in the kernel. */
  onKilledBusy?: (() => void) | undefined;
  /** Whether the opened kernel still holds the namespace the previous worker served (the same kernel process). */
  namespaceKept?: ((kernel: JupyterKernel) => boolean) | undefined;
  /** Told about each of the agent's cells (the notebook mirror). */
  cells?: KernelCellObserver | undefined;
  logger?: Logger | undefined;
}

type PendingState = 'waiting' | 'sent' | 'running';

interface Pending {
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
  /** Its answer came and is held a moment (an interrupt nobody here asked for): its cell's idle is no failure. */
  answerHeld?: boolean | undefined;
  /** When it was handed to this worker (performance.now()). */
  readonly queuedAt: number;
  /** How long it waited in Node for the kernel, busy with other clients' requests, before it was sent. */
  waitedMs: number;
  /** Whose request it last waited behind, if it waited. */
  behind: 'person' | 'agent' | null;
  resolve(reply: WorkerReply): void;
  reject(error: Error): void;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** How often a request waiting on another client's request asks the server whether the kernel is still busy. */
const BUSY_CHECK_MS = 3_000;

/**
 * How long check() waits for the kernel's control channel: a kernel that died while idle answers only once the
 * server noticed (its restarter polls every 3 s) and started it again.
 */
const CHECK_WAIT_MS = 5_000;

/** How long a cell's answer of an interrupt nobody here asked for waits for a restart to announce itself. */
const RESTART_NOTICE_MS = 1_000;

/** How long shutdown() waits for the kernel side to close the comm after `shutdown`, at most. */
const SHUTDOWN_WAIT_MS = 2_000;

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
  /**
   * Requests of other clients the kernel is busy with (IOPub `status: busy` seen, `idle` not yet), and whose: another
   * ipython-mcp's (its session id starts with {@link AGENT_SESSION_PREFIX}) or a person's client's (any other).
   */
  readonly #foreignBusy = new Map<string, 'person' | 'agent'>();
  #nextId = 1;
  /** Probes sent after a reconnect, by token: the requests that were on their way when the channels dropped. */
  readonly #probes = new Map<number, number[]>();
  #nextProbe = 1;
  #kernel: JupyterKernel | undefined;
  #comm: JupyterComm | undefined;
  #readyState: 'starting' | 'ready' | 'failed' = 'starting';
  #exit: Exit | undefined;
  #exitReason = '';
  #resolveExited!: (exit: Exit) => void;
  #settleReady!: { resolve: (info: WorkerInfo) => void; reject: (error: Error) => void };
  #startupTimer: NodeJS.Timeout | undefined;
  #reportedPid: number | undefined;
  #readyInfo: WorkerInfo | undefined;
  #busyCheck: NodeJS.Timeout | undefined;
  readonly #startedAt = performance.now();
  /** Code Mode's nested calls, on the kernel's stdin channel (kernel-stdin.ts). */
  readonly #toolCalls: KernelToolCalls;

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
      this.#failStartup(`the kernel did not become ready within ${options.start.startupTimeoutMs} ms`);
    }, options.start.startupTimeoutMs);
    void this.#boot();
  }

  /**
   * The requests waiting in Node now for the kernel, busy with another client's request: how many, behind whose
   * request, and since when (ms); null when none waits. What runtime_status shows of a call held by the person's cell.
   */
  waitingNow(): { count: number; behind: 'person' | 'agent'; since_ms: number } | null {
    if (this.#waiting.length === 0 || this.#foreignBusy.size === 0) return null;
    // #waiting is in arrival order: its first has waited longest.
    const oldest = this.#waiting[0] as Pending;
    return { count: this.#waiting.length, behind: this.#behindNow() ?? 'person', since_ms: Math.round(performance.now() - oldest.queuedAt) };
  }

  /** Whose request the kernel is busy with for another client: the latest one seen to begin. */
  #behindNow(): 'person' | 'agent' | null {
    let last: 'person' | 'agent' | null = null;
    for (const whose of this.#foreignBusy.values()) last = whose;
    return last;
  }

  /** What this worker tells the runtime about who did what to a request it sent. */
  #facts(pending: Pending, stoppedBy?: 'other_client'): SharedKernelFacts {
    return { ran: true, waitedMs: pending.waitedMs, behind: pending.behind, ...(stoppedBy === undefined ? {} : { stoppedBy }) };
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
      kernel = await this.#options.open();
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
      // The kernel side answers the configure (ready or startup_failed) while it handles the comm_open.
      const comm = await kernel.openComm(WORKER_COMM_TARGET, { ...configure, ...machineGuardConfigure(this.#options.machineGuard) }, (data) => this.#onCommData(data));
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
      this.#failStartup((error as Error).message);
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
    if (message.type === 'ready') {
      if (message.protocol !== undefined && message.protocol !== PROTOCOL_VERSION) {
        this.#failStartup(`the kernel side speaks protocol ${String(message.protocol)} (expected ${PROTOCOL_VERSION})`);
        return;
      }
      // Ready once the comm is in place (#boot): the kernel side answers while the comm_open is still being handled.
      this.#reportedPid = typeof message.pid === 'number' ? message.pid : undefined;
      this.#readyInfo = {
        pid: this.#reportedPid ?? 0,
        python: typeof message.python === 'string' ? message.python : 'unknown',
        ipython: typeof message.ipython === 'string' ? message.ipython : 'unknown',
        codec: 'json',
        protectedNames: Array.isArray(message.protected_names) ? message.protected_names.map(String) : [],
        startupMs: 0,
      };
      return;
    }
    if (message.type === 'startup_failed') {
      const error = message.error as { message?: unknown } | undefined;
      this.#failStartup(`the worker could not start in the kernel: ${typeof error?.message === 'string' ? error.message.slice(0, 2000) : 'unknown failure'}`);
      return;
    }
    this.#failStartup(`unexpected ${String(message.type).slice(0, 32)} message during start-up`);
  }

  #route(raw: unknown, held = false): void {
    if ((raw as { type?: unknown }).type === 'spill') {
      this.#onSpill(raw as Record<string, unknown>);
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
        const reply: WorkerReply = message.ok ? { ok: true, result: this.#localSpills(message.result), shared } : { ok: false, error: knownFailure(message.error), shared };
        if (message.catalog_revision !== undefined) reply.catalogRevision = message.catalog_revision;
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

  #unaskedInterrupt(id: number, result: Record<string, unknown> | undefined): boolean {
    const pending = this.#pending.get(id);
    if (pending === undefined || !pending.cell || pending.interruptAsked === true) return false;
    const error = result?.error as { type?: unknown } | null | undefined;
    return error?.type === 'KeyboardInterrupt';
  }

  /**
   * After the channels dropped and came back, a request sent but not yet seen to begin may have been lost with the
   * old connection. A probe follows it through the kernel's queue: the kernel side handles it after every request
   * sent before it, and answers with the ids of the requests it began.
   */
  #probeAfterReconnect(): void {
    const comm = this.#comm;
    const suspects = [...this.#pending.values()].filter((each) => each.state === 'sent').map((each) => each.id);
    if (comm === undefined || suspects.length === 0 || !this.alive) return;
    const token = this.#nextProbe++;
    this.#probes.set(token, suspects);
    try {
      comm.send({ type: 'probe', token });
    } catch {
      this.#probes.delete(token);
    }
  }

  /** A probe's answer: each suspect the kernel side never began was lost on the way, and is sent again (once). */
  #onProbe(message: Record<string, unknown>): void {
    const token = typeof message.token === 'number' ? message.token : -1;
    const suspects = this.#probes.get(token);
    if (suspects === undefined) return;
    this.#probes.delete(token);
    const seen = new Set(Array.isArray(message.seen) ? message.seen : []);
    for (const id of suspects) {
      const pending = this.#pending.get(id);
      if (pending === undefined || pending.state !== 'sent' || seen.has(id)) continue;
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
   * A piece of a spill file the kernel side wrote on its machine (output past the head and tail of a cell): appended
   * to the file of that name in the runtime's spill directory, here.
   */
  #onSpill(message: Record<string, unknown>): void {
    const directory = this.#options.start.configure.output_spill?.dir;
    const name = message.name;
    if (directory === undefined || typeof name !== 'string' || !SPILL_NAME.test(name) || typeof message.text !== 'string') {
      this.#logger.warn('kernel.invalid_spill', {});
      return;
    }
    try {
      appendFileSync(join(directory, name), message.text, { encoding: 'utf8', mode: 0o600 });
    } catch (error) {
      this.#logger.warn('kernel.spill_failed', { reason: (error as Error).message.slice(0, 200) });
    }
  }

  /** A result's `stdout_spill`/`stderr_spill` name the kernel side's file by name: here it is a local path. */
  #localSpills(result: Record<string, unknown>): Record<string, unknown> {
    const directory = this.#options.start.configure.output_spill?.dir;
    if (directory === undefined) return result;
    let rewritten = result;
    for (const field of ['stdout_spill', 'stderr_spill']) {
      const name = result[field];
      if (typeof name === 'string' && SPILL_NAME.test(name)) rewritten = { ...rewritten, [field]: join(directory, name) };
    }
    return rewritten;
  }

  /** Removes request `id` from the books and returns it, if it was still open. */
  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    this.#pending.delete(id);
    const index = this.#waiting.indexOf(pending);
    if (index >= 0) this.#waiting.splice(index, 1);
    return pending;
  }

  #onActivity(activity: KernelActivity): void {
    const kernel = this.#kernel;
    if (kernel === undefined) return;
    if (activity.state === 'starting' || activity.state === 'restarting' || activity.state === 'dead') {
      this.#foreignBusy.clear();
      return;
    }
    if (activity.parentSession !== kernel.clientId) {
      if (activity.parentId === '') return;
      if (activity.state === 'busy') this.#foreignBusy.set(activity.parentId, activity.parentSession.startsWith(AGENT_SESSION_PREFIX) ? 'agent' : 'person');
      else if (activity.state === 'idle' && this.#foreignBusy.delete(activity.parentId)) this.#pump();
      return;
    }
    const pending = [...this.#pending.values()].find((each) => each.messageId === activity.parentId);
    if (pending === undefined) return;
    if (activity.state === 'busy' && pending.state === 'sent') {
      pending.state = 'running';
      if (pending.interruptWhenRunning) this.#restInterrupt();
    } else if (activity.state === 'idle' && pending.cell && pending.answerHeld !== true) {
      // The kernel side answers a captured cell from its post_run_cell hook, before this idle.
      this.#logger.warn('kernel.unhooked_cell', { op: pending.op });
      this.#settle(pending.id)?.resolve({
        ok: false,
        error: { code: 'internal_error', message: 'the kernel ran the cell without the ipython-mcp hooks (was the worker unloaded?)' },
      });
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
      this.#waiting.push(pending);
      this.#pump();
    });
    // The reply may fail before the caller awaits it (kill() fails every request at once, while the kernel's
    // connection is still closing): that is not an unhandled rejection, the caller still sees it.
    reply.catch(() => undefined);
    return { id, reply };
  }

  /** Sends the waiting requests, in order, while the kernel is not busy with another client's request. */
  #pump(): void {
    if (this.#waiting.length > 0 && this.#foreignBusy.size > 0) {
      const behind = this.#behindNow();
      for (const each of this.#waiting) each.behind = behind;
      this.#scheduleBusyCheck();
    }
    while (this.#waiting.length > 0 && this.#foreignBusy.size === 0 && this.alive) {
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

  /**
   * While requests wait on another client's request, asks the server now and then whether the kernel is idle: an
   * IOPub `idle` lost on the way (a WebSocket that dropped and came back) must not hold them forever.
   */
  #scheduleBusyCheck(): void {
    if (this.#busyCheck !== undefined) return;
    this.#busyCheck = setTimeout(() => {
      this.#busyCheck = undefined;
      if (!this.alive || this.#waiting.length === 0 || this.#foreignBusy.size === 0) return;
      const seen = new Set(this.#foreignBusy.keys());
      void this.#kernel
        ?.executionState()
        .then((state) => {
          // Idle now, and still only the requests seen before asking: the missing idles are not coming.
          if (state === 'idle' && [...this.#foreignBusy.keys()].every((id) => seen.has(id))) this.#foreignBusy.clear();
        })
        .catch(() => undefined)
        .finally(() => this.#pump());
    }, BUSY_CHECK_MS);
    this.#busyCheck.unref();
  }

  #send(pending: Pending): void {
    const kernel = this.#kernel;
    const comm = this.#comm;
    if (kernel === undefined || comm === undefined) throw new WorkerExitedError('the worker is not running', null, null);
    const stream = pending.hooks.onEvent !== undefined;
    pending.state = 'sent';
    if (!pending.cell) {
      pending.messageId = comm.send({ type: 'request', id: pending.id, op: pending.op, params: pending.params, ...(stream ? { stream: true } : {}) });
      return;
    }
    // `comm` names this worker's comm: the kernel side answers the cell there, among every ipython-mcp it serves.
    const codeMode = pending.op === 'run_code';
    const metadata = { ipython_mcp: { id: pending.id, params: pending.params, comm: comm.commId, ...(stream ? { stream: true } : {}), ...(codeMode ? { op: pending.op } : {}) } };
    const onInput = codeMode ? this.#toolCalls.handlerFor(pending.id, pending.hooks, () => this.#pending.has(pending.id)) : undefined;
    const cells = this.#options.cells;
    // The observer never affects the request: whatever it throws is logged and dropped.
    const tell = (event: (observer: KernelCellObserver) => void): void => {
      if (cells === undefined) return;
      try {
        event(cells);
      } catch (error) {
        this.#logger.warn('kernel.cell_observer_failed', { reason: (error as Error).message.slice(0, 200) });
      }
    };
    tell((observer) => observer.cellSent(pending.id, String(pending.params.code)));
    kernel
      .execute(String(pending.params.code), {
        metadata,
        ...(onInput === undefined ? {} : { onInput }),
        discardOutputs: true,
        onSent: (messageId) => {
          pending.messageId = messageId;
        },
        ...(cells === undefined ? {} : { onOutput: (output: JupyterOutput) => tell((observer) => observer.cellOutput(pending.id, output)) }),
      })
      .then((result) => tell((observer) => observer.cellEnded(pending.id, { executionCount: result.executionCount, status: result.status })))
      .catch((error: unknown) => {
        tell((observer) => observer.cellEnded(pending.id, { executionCount: null, status: 'failed' }));
        // The kernel died, restarted or closed under the cell: the worker is over (its exit fails the rest).
        const still = this.#settle(pending.id);
        if (still === undefined) return;
        still.reject(new WorkerExitedError(`the kernel ended under the request: ${(error as Error).message}`, null, null));
      });
  }

  /**
   * Stops request `id`: withdrawn if it still waits in Node; interrupted through the server if the kernel runs it;
   * interrupted as soon as it runs if it waits in the kernel's queue. A finished request is left alone.
   */
  interrupt(id: number): void {
    const pending = this.#pending.get(id);
    if (pending === undefined || !this.alive) return;
    if (pending.state === 'waiting') {
      this.#settle(id);
      const behind = this.#behindNow() ?? pending.behind;
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
  async check(): Promise<void> {
    const kernel = this.#kernel;
    if (!this.alive || this.#readyState !== 'ready' || kernel === undefined) return;
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
    clearTimeout(this.#busyCheck);
    if (this.#readyState === 'starting') {
      this.#readyState = 'failed';
      this.#settleReady.reject(new WorkerStartupError(reason));
    }
    const error = new WorkerExitedError(`the kernel worker ended: ${reason}`, exit.code, exit.signal);
    const open = [...this.#pending.values()];
    this.#pending.clear();
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

/**
 * The `message_too_large` refusal of a request over the IPC limit, measured as the local worker's channel frames it
 * (the JSON of the request message), or undefined: such a request never reaches the kernel.
 */
function oversize(id: number, op: string, params: Record<string, unknown>, limit: number): FrameError | undefined {
  // Cheap first: a string's UTF-8 size is at most three bytes a character, so most requests need no encoding.
  const text = JSON.stringify({ type: 'request', id, op, params });
  if (text.length * 3 + 1 <= limit) return undefined;
  const size = Buffer.byteLength(text, 'utf8') + 1;
  return size > limit ? new FrameError('message_too_large', `message of ${size} bytes exceeds the ${limit}-byte IPC limit`, size) : undefined;
}
