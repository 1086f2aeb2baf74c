import { workerLimits, type StateReport } from '@ipython-mcp/protocol';
import type { Logger } from './logger.js';
import type { WorkerMemory } from './memory-watch.js';
import { MAX_ERROR_CHARS, unavailableMessage } from './outcome-wording.js';
import type { ResolvedRuntimeOptions } from './runtime-options.js';
import type { EpochChange, InterruptionKind, NamespaceOutcome, OperationFailure, OtherClientAction, RuntimeStatus } from './runtime-types.js';
import type { WorkerHandle, WorkerInfo } from './worker-handle.js';
import { WorkerStartupError } from './worker-connection.js';
import { SPILL_DIRECTORY_ENV, SPILL_OWNER_ENV, type OutputSpill } from './output-spill.js';
import { StartRetries } from './start-retries.js';
import type { WorkerBackend } from './worker-backend.js';

/**
 * The workers behind one runtime: the active one, a warm standby, and the epoch that advances on every atomic
 * replacement. It knows nothing about operations: dispatch asks it for the active worker and to replace one.
 */
export class WorkerPool {
  private currentWorker: WorkerHandle | undefined;
  private standbyWorker: WorkerHandle | undefined;
  private standbyStarted = false;
  private currentEpoch = 1;
  /** Set while replacing, after a start-up failure (for good, or until a retried start succeeds), and by close. */
  private override: 'recovering' | 'unavailable' | 'closed' | undefined;
  private unavailableReason: string | null = null;
  private interruption: RuntimeStatus['lastInterruption'] = null;
  private replacementMs: number | null = null;
  private workerInfo: WorkerInfo | undefined;
  /** `--state`: the first worker's restore, and the latest save any active worker reported. */
  private lastRestore: StateReport | null = null;
  private lastSave: StateReport | null = null;
  private replacement: Promise<void> | undefined;
  /** The replacement being started, so close() can end it rather than wait out its start-up. */
  private replacementWorker: WorkerHandle | undefined;
  /** Set by {@link beginClose}: nothing started from now on is a failure. */
  private closingNow = false;
  /** The runtime's spill directory, named to every worker it starts (see {@link useSpill}). */
  private outputSpill: OutputSpill | undefined;
  private readonly epochListeners = new Set<(change: EpochChange) => void>();
  private readonly unavailableListeners = new Set<(error: string) => void>();
  /** Starts that failed for a passing cause: retried in the background, and by a call that arrives meanwhile. */
  private readonly retries: StartRetries;
  /** When the start of the worker that is to become the active one began (performance clock). */
  private startBegan = 0;
  /** Where workers start: the options' backend until {@link switchBackend} moves the runtime to another. */
  private backend: WorkerBackend;
  private warmStandby: boolean | undefined;

  constructor(
    private readonly options: ResolvedRuntimeOptions,
    private readonly logger: Logger,
    private readonly memory: WorkerMemory,
    /** Whether the workers should hold Node's event loop now (see `unrefWhenIdle`). */
    private readonly held: () => boolean,
    /** Whether an operation is active: its own failure path replaces a worker that dies under it. */
    private readonly operationActive: () => boolean,
  ) {
    this.retries = new StartRetries(() => this.tryAgain(), options.unrefWhenIdle === true);
    this.backend = options.backend;
    this.warmStandby = options.warmStandby;
  }

  /** The worker serving operations now (undefined before the first start). */
  get current(): WorkerHandle | undefined {
    return this.currentWorker;
  }

  /** The warm standby, if one is kept. */
  get standby(): WorkerHandle | undefined {
    return this.standbyWorker;
  }

  /** The standby as runtime_status reports it. */
  get standbyState(): 'ready' | 'starting' | 'none' {
    if (this.standbyWorker === undefined) return 'none';
    return this.standbyStarted ? 'ready' : 'starting';
  }

  /** Advances on every atomic replacement. */
  get epoch(): number {
    return this.currentEpoch;
  }

  /** Replacing, unavailable for good, or closed; undefined otherwise. */
  get stateOverride(): 'recovering' | 'unavailable' | 'closed' | undefined {
    return this.override;
  }

  /** Why the runtime is unavailable, once it is. */
  get unavailableError(): string | null {
    return this.unavailableReason;
  }

  get lastInterruption(): RuntimeStatus['lastInterruption'] {
    return this.interruption;
  }

  /** How long the latest replacement took, in ms. */
  get replacementStartupMs(): number | null {
    return this.replacementMs;
  }

  /** The active worker's handshake, once it answered one. */
  get info(): WorkerInfo | undefined {
    return this.workerInfo;
  }

  /** `--state`: the first worker's restore and the latest save of an active worker. */
  get snapshotReports(): { lastRestore: StateReport | null; lastSave: StateReport | null } {
    return { lastRestore: this.lastRestore, lastSave: this.lastSave };
  }

  /** The replacement under way, if any. */
  get replacing(): Promise<void> | undefined {
    return this.replacement;
  }

  /** Whether the runtime is closing: nothing that ends from now on is a failure. */
  get closing(): boolean {
    return this.closingNow;
  }

  get spill(): OutputSpill | undefined {
    return this.outputSpill;
  }

  /** Names `spill` to every worker started from now on (set once, before the first start). */
  useSpill(spill: OutputSpill | undefined): void {
    this.outputSpill = spill;
  }

  /** Subscribes to replacements; returns the unsubscribe. */
  onEpochChange(listener: (change: EpochChange) => void): () => void {
    this.epochListeners.add(listener);
    return () => void this.epochListeners.delete(listener);
  }

  /** Subscribes to the runtime becoming unavailable; returns the unsubscribe. */
  onUnavailable(listener: (error: string) => void): () => void {
    this.unavailableListeners.add(listener);
    return () => void this.unavailableListeners.delete(listener);
  }

  /**
   * The runtime cannot start (a configuration problem found before any worker): unavailable at once, and the
   * listeners told on the next microtask, so one subscribed right after start() still hears it.
   */
  refuseToStart(problem: string): void {
    this.override = 'unavailable';
    this.unavailableReason = problem;
    queueMicrotask(() => this.becomeUnavailable(problem));
  }

  /** From now on nothing started or ended is a failure (the runtime's close). */
  beginClose(): void {
    this.closingNow = true;
    this.retries.clear();
  }

  /** The runtime is closed: status says so from now on, even through a replacement still finishing. */
  markClosed(): void {
    this.override = 'closed';
  }

  /** Starts the first worker; `onReady` runs once it answered the handshake. */
  startFirst(): void {
    // Only the first worker of a lifespan restores the snapshot: a replacement starts empty (the seed's contract),
    // and the standby is started only once this one is ready, so it never serves first.
    this.startBegan = performance.now();
    const first = this.startWorker(true);
    this.currentWorker = first;
    this.watch(first);
    first.ready.then(
      (info) => {
        if (this.currentWorker !== first) return; // switched to another backend meanwhile (switchBackend)
        this.workerInfo = info;
        if (info.stateRestore !== undefined) this.lastRestore = info.stateRestore;
        this.logger.info('worker.ready', { epoch: this.currentEpoch, pid: info.pid, startupMs: Math.round(info.startupMs) });
        this.ensureStandby();
      },
      (error: Error) => {
        // A start-up the runtime abandoned because it is closing is not a failure: one info line, no error.
        if (this.closingNow) {
          this.logger.info('runtime.startup_abandoned', { epoch: this.currentEpoch });
          return;
        }
        if (this.currentWorker !== first) return;
        if (!this.retryLater(error)) this.becomeUnavailable(error.message);
      },
    );
  }

  /** With `unrefWhenIdle`, lets the workers hold the event loop only while there is work (or a close). */
  holdWorkers(worker?: WorkerHandle): void {
    if (this.options.unrefWhenIdle !== true) return;
    const held = this.held();
    for (const each of worker === undefined ? [this.currentWorker, this.standbyWorker] : [worker]) each?.setHeld(held);
  }

  /** Ends the standby and any replacement still starting: they hold no user state. */
  killSpares(): WorkerHandle | undefined {
    const standby = this.standbyWorker;
    this.standbyWorker = undefined;
    standby?.kill();
    this.replacementWorker?.kill();
    return standby;
  }

  recordInterruption(kind: InterruptionKind, namespace: NamespaceOutcome, action?: OtherClientAction): void {
    this.interruption = { kind, namespace, epoch: this.currentEpoch, ...(kind === 'other_client' && action !== undefined ? { action } : {}) };
  }

  becomeUnavailable(message: string): void {
    if (this.closingNow) return; // a start-up cut short by close() says nothing about the runtime
    this.override = 'unavailable';
    this.unavailableReason = message.slice(0, MAX_ERROR_CHARS);
    this.retries.clear();
    this.logger.error('runtime.unavailable', { reason: this.unavailableReason });
    const standby = this.standbyWorker;
    this.standbyWorker = undefined;
    standby?.kill();
    for (const listener of this.unavailableListeners) listener(this.unavailableReason);
  }

  /**
   * Atomically swaps `failed` for a started worker: the warm standby when it is ready, else a cold start within
   * the start-up bound. On a failure the backend expects to pass (its WorkerStartupError has `retry`) the runtime
   * is unavailable for now and starts again in the background; on any other it is unavailable for good.
   */
  replace(failed: WorkerHandle, reason: InterruptionKind): Promise<void> {
    if (this.currentWorker !== failed) return this.replacement ?? Promise.resolve();
    if (this.replacement) return this.replacement;
    this.replacement = this.doReplace(failed, reason).finally(() => {
      this.replacement = undefined;
      this.replacementWorker = undefined;
    });
    return this.replacement;
  }

  /**
   * The worker to dispatch to, once any replacement has finished; or why there is none. While starts fail for a
   * passing cause, a call is answered from a start that began after it arrived (one it runs itself when the latest
   * began before), never from an older failure: a server that came back is found by the first call after it did.
   */
  async activeWorker(arrivedAt = performance.now()): Promise<WorkerHandle | OperationFailure> {
    if (this.replacement) await this.replacement;
    if (this.retries.pending && this.override === 'unavailable' && !this.closingNow) {
      if (this.retries.freshFor(arrivedAt)) return this.retries.failure();
      const failed = this.currentWorker;
      if (failed === undefined) return this.retries.failure();
      this.retries.cancelScheduled();
      await this.replace(failed, 'crash');
      // The start just made began after the call arrived: its outcome, whatever it is, is the answer.
      return this.activeWorker(Math.min(arrivedAt, performance.now()));
    }
    if (this.override === 'unavailable') return { code: 'runtime_unavailable', message: unavailableMessage(this.unavailableReason) };
    const worker = this.currentWorker;
    if (worker === undefined) return { code: 'runtime_unavailable', message: 'the runtime has not started' };
    try {
      await worker.ready;
    } catch {
      return this.activeWorker();
    }
    // A backend may tell a worker that lost its namespace under it (a restarted kernel) before anything is sent, or
    // that it cannot be reached for now (its route is away) without being lost: then nothing is sent.
    const notNow = worker.alive && worker.check !== undefined ? await worker.check() : undefined;
    if (!worker.alive) {
      const epoch = this.currentEpoch;
      await this.replace(worker, endKind(worker));
      if (this.currentWorker !== worker && !this.closingNow) this.recordInterruption(endKind(worker), this.currentEpoch === epoch ? 'preserved' : 'reset', worker.endedByOtherClient);
      return this.activeWorker();
    }
    if (notNow !== undefined) return notNow;
    return worker;
  }

  /**
   * A start that failed for a cause the backend expects to pass: unavailable for now, with the backend's words
   * and code, and another start in the background after the backend's delay (StartRetries).
   *
   * @returns whether `error` was such a failure
   */
  private retryLater(error: unknown): boolean {
    if (!(error instanceof WorkerStartupError) || error.retry === undefined || this.closingNow) return false;
    const message = error.message.slice(0, MAX_ERROR_CHARS);
    this.override = 'unavailable';
    this.unavailableReason = message;
    this.retries.failed(error as WorkerStartupError & { retry: NonNullable<WorkerStartupError['retry']> }, this.startBegan);
    this.logger.warn('runtime.retry_later', { reason: message.slice(0, 200), retryAfterMs: error.retry.afterMs });
    const standby = this.standbyWorker;
    this.standbyWorker = undefined;
    standby?.kill();
    return true;
  }

  /** The background start of an outage: a replacement of the worker that failed (or never started). */
  private tryAgain(): void {
    const failed = this.currentWorker;
    if (this.closingNow || !this.retries.pending || this.replacement !== undefined || failed === undefined) return;
    void this.replace(failed, 'crash');
  }

  private startWorker(restore = false, backend?: WorkerBackend): WorkerHandle {
    const options = this.options;
    const state = options.state;
    const spawnOptions = {
      python: options.python,
      maxMessageBytes: options.limits.maxIpcMessageBytes,
      // A restore may take up to the state time cap on top of the usual start-up.
      startupTimeoutMs: options.startupTimeoutMs + (restore && state ? state.saveTimeoutMs : 0),
      cwd: options.cwd,
      env: this.outputSpill?.watchedByWorker ? { ...options.env, [SPILL_DIRECTORY_ENV]: this.outputSpill.path, [SPILL_OWNER_ENV]: String(process.pid) } : options.env,
      forceJsonCodec: options.forceJsonCodec,
      launch: options.launch,
      logger: this.logger,
      configure: {
        limits: workerLimits(options.limits),
        library_paths: options.libraryPaths,
        preload_modules: options.preloadModules,
        module_aliases: options.moduleAliases,
        reserved_tool_names: options.reservedToolNames ?? [],
        ...(this.memory.backstopBytes ? { data_limit_bytes: this.memory.backstopBytes } : {}),
        ...(state
          ? { state: { path: state.path, restore, max_bytes: state.maxBytes, save_seconds: state.saveTimeoutMs / 1000 } }
          : {}),
        ...(this.outputSpill === undefined ? {} : { output_spill: { dir: this.outputSpill.path, max_bytes: this.outputSpill.maxBytes } }),
      },
    };
    const worker = (backend ?? this.backend).start(spawnOptions);
    if (state) {
      worker.onStateReport = (report) => {
        // A standby cannot save (it never runs a cell); only the active worker's saves are the namespace's.
        if (worker === this.currentWorker) this.lastSave = report;
      };
    }
    this.holdWorkers(worker);
    return worker;
  }

  private ensureStandby(): void {
    if (this.warmStandby === false || this.standbyWorker !== undefined || this.closingNow || this.override === 'unavailable') return;
    const standby = this.startWorker();
    this.standbyWorker = standby;
    this.standbyStarted = false;
    standby.ready.then(
      () => {
        if (this.standbyWorker === standby) this.standbyStarted = true;
      },
      (error: Error) => {
        if (this.standbyWorker === standby) this.standbyWorker = undefined;
        if (this.closingNow) return; // killed by close: not a failure worth a warning
        this.logger.warn('standby.failed', { reason: error.message.slice(0, 200) });
      },
    );
    void standby.exited.then(() => {
      if (this.standbyWorker === standby) this.standbyWorker = undefined;
    });
  }

  /**
   * Moves the runtime to `backend` (another kernel): a worker of it is started and, once ready, takes the active
   * worker's place as a replacement does (the epoch advances: a new namespace); the old active worker is shut down
   * within `graceMs` and the standby ended, and standbys now come from `backend` (kept when `warmStandby`). A start
   * that fails changes nothing: the old worker stays active and the start's error is thrown. The caller holds the
   * admission queue, so no operation is active.
   */
  async switchBackend(backend: WorkerBackend, warmStandby: boolean, graceMs: number): Promise<void> {
    if (this.closingNow) throw new Error('the runtime is closed');
    const next = this.startWorker(false, backend);
    this.replacementWorker = next;
    let info: WorkerInfo;
    try {
      info = await next.ready;
    } catch (error) {
      next.kill();
      throw error;
    } finally {
      if (this.replacementWorker === next) this.replacementWorker = undefined;
    }
    // A replacement of the old worker (it died meanwhile) finishes first: whatever it started is ended below.
    while (this.replacement !== undefined) await this.replacement.catch(() => undefined);
    if (this.closingNow) {
      next.kill();
      throw new Error('the runtime is closed');
    }
    const old = this.currentWorker;
    const standby = this.standbyWorker;
    this.standbyWorker = undefined;
    standby?.kill();
    this.backend = backend;
    this.warmStandby = warmStandby;
    this.currentWorker = next;
    this.workerInfo = info;
    this.currentEpoch += 1;
    this.override = undefined;
    this.unavailableReason = null;
    this.retries.clear();
    this.watch(next);
    this.logger.info('worker.switched', { epoch: this.currentEpoch });
    for (const listener of this.epochListeners) listener({ epoch: this.currentEpoch, reason: 'reset' });
    this.ensureStandby();
    await old?.shutdown(graceMs);
  }

  /** Replaces the active worker when it dies while idle. */
  private watch(worker: WorkerHandle): void {
    void worker.exited.then(({ code, signal }) => {
      if (this.currentWorker !== worker || this.closingNow || this.workerInfo === undefined) return;
      this.logger.warn('worker.exited', { epoch: this.currentEpoch, code, signal });
      if (this.operationActive()) return; // the active operation's own failure path replaces it
      const epoch = this.currentEpoch;
      void this.replace(worker, endKind(worker)).then(() => {
        if (this.closingNow) return;
        this.recordInterruption(endKind(worker), this.override === 'unavailable' ? 'unknown' : this.currentEpoch === epoch ? 'preserved' : 'reset', worker.endedByOtherClient);
      });
    });
  }

  private async doReplace(failed: WorkerHandle, reason: InterruptionKind): Promise<void> {
    const startedAt = performance.now();
    if (this.override !== 'closed') this.override = 'recovering';
    failed.kill();
    let next = this.standbyWorker;
    this.standbyWorker = undefined;
    const fromStandby = next !== undefined && next.alive;
    this.startBegan = startedAt;
    if (next === undefined || !next.alive) next = this.startWorker();
    this.replacementWorker = next;
    let info: WorkerInfo;
    try {
      info = await next.ready;
    } catch (error) {
      next.kill();
      if (this.closingNow) return; // close() ended this start-up: nothing failed, nothing to retry
      if (!fromStandby) {
        // A cold start already had its full start-up bound: do not try again now (that would double the bound).
        if (!this.retryLater(error)) this.becomeUnavailable(`replacement worker failed to start: ${(error as Error).message}`);
        return;
      }
      this.logger.warn('replacement.standby_failed', { reason: (error as Error).message.slice(0, 200) });
      this.startBegan = performance.now();
      next = this.startWorker();
      this.replacementWorker = next;
      try {
        info = await next.ready;
      } catch (coldError) {
        next.kill();
        if (this.closingNow) return;
        if (!this.retryLater(coldError)) this.becomeUnavailable(`replacement worker failed to start: ${(coldError as Error).message}`);
        return;
      }
    }
    if (this.closingNow) {
      next.kill();
      return;
    }
    const served = this.workerInfo !== undefined;
    this.currentWorker = next;
    this.workerInfo = info;
    // A worker that never became ready served no namespace; one attached again to the same kernel keeps it.
    const advanced = served && info.namespaceKept !== true;
    if (advanced) this.currentEpoch += 1;
    this.replacementMs = Math.round(performance.now() - startedAt);
    this.override = undefined;
    this.unavailableReason = null;
    this.retries.clear();
    this.watch(next);
    this.logger.info('worker.replaced', { epoch: this.currentEpoch, reason, replacementMs: this.replacementMs });
    if (advanced) for (const listener of this.epochListeners) listener({ epoch: this.currentEpoch, reason });
    this.ensureStandby();
  }
}

/** Why a worker that ended by itself ended: another client of its shared kernel ended the kernel on purpose, or a crash. */
export function endKind(worker: WorkerHandle): InterruptionKind {
  return worker.endedByOtherClient === undefined ? 'crash' : 'other_client';
}
