import { workerLimits, type StateReport } from '@ipython-mcp/protocol';
import type { Logger } from './logger.js';
import type { WorkerMemory } from './memory-watch.js';
import { MAX_ERROR_CHARS, unavailableMessage } from './outcome-wording.js';
import type { ResolvedRuntimeOptions } from './runtime-options.js';
import type { EpochChange, InterruptionKind, NamespaceOutcome, OperationFailure, RuntimeStatus } from './runtime-types.js';
import type { WorkerHandle, WorkerInfo } from './worker-handle.js';
import { SPILL_DIRECTORY_ENV, SPILL_OWNER_ENV, type OutputSpill } from './output-spill.js';

/**
 * The workers behind one runtime: the active one, a warm standby, and the epoch that advances on every atomic
 * replacement. It knows nothing about operations: dispatch asks it for the active worker and to replace one.
 */
export class WorkerPool {
  current: WorkerHandle | undefined;
  standby: WorkerHandle | undefined;
  standbyReady = false;
  epoch = 1;
  /** Set while replacing, after a start-up failure (for the rest of the runtime's lifespan), and by close. */
  stateOverride: 'recovering' | 'unavailable' | 'closed' | undefined;
  unavailableError: string | null = null;
  lastInterruption: RuntimeStatus['lastInterruption'] = null;
  replacementStartupMs: number | null = null;
  info: WorkerInfo | undefined;
  /** `--state`: the first worker's restore, and the latest save any active worker reported. */
  stateRestore: StateReport | null = null;
  stateSave: StateReport | null = null;
  replacing: Promise<void> | undefined;
  /** The replacement being started, so close() can end it rather than wait out its start-up. */
  replacementWorker: WorkerHandle | undefined;
  /** Set by the runtime's close(): nothing started from now on is a failure. */
  closing = false;
  /** The runtime's spill directory, named to every worker it starts (set by the runtime at start). */
  spill: OutputSpill | undefined;
  readonly epochListeners = new Set<(change: EpochChange) => void>();
  readonly unavailableListeners = new Set<(error: string) => void>();

  constructor(
    private readonly options: ResolvedRuntimeOptions,
    private readonly logger: Logger,
    private readonly memory: WorkerMemory,
    /** Whether the workers should hold Node's event loop now (see `unrefWhenIdle`). */
    private readonly held: () => boolean,
    /** Whether an operation is active: its own failure path replaces a worker that dies under it. */
    private readonly operationActive: () => boolean,
  ) {}

  /** Starts the first worker; `onReady` runs once it answered the handshake. */
  startFirst(): void {
    // Only the first worker of a lifespan restores the snapshot: a replacement starts empty (the seed's contract),
    // and the standby is started only once this one is ready, so it never serves first.
    const first = this.startWorker(true);
    this.current = first;
    this.watch(first);
    first.ready.then(
      (info) => {
        this.info = info;
        if (info.stateRestore !== undefined) this.stateRestore = info.stateRestore;
        this.logger.info('worker.ready', { epoch: this.epoch, pid: info.pid, startupMs: Math.round(info.startupMs) });
        this.ensureStandby();
      },
      (error: Error) => {
        // A start-up the runtime abandoned because it is closing is not a failure: one info line, no error.
        if (this.closing) {
          this.logger.info('runtime.startup_abandoned', { epoch: this.epoch });
          return;
        }
        this.becomeUnavailable(error.message);
      },
    );
  }

  /** With `unrefWhenIdle`, lets the workers hold the event loop only while there is work (or a close). */
  holdWorkers(worker?: WorkerHandle): void {
    if (this.options.unrefWhenIdle !== true) return;
    const held = this.held();
    for (const each of worker === undefined ? [this.current, this.standby] : [worker]) each?.setHeld(held);
  }

  /** Ends the standby and any replacement still starting: they hold no user state. */
  killSpares(): WorkerHandle | undefined {
    const standby = this.standby;
    this.standby = undefined;
    standby?.kill();
    this.replacementWorker?.kill();
    return standby;
  }

  recordInterruption(kind: InterruptionKind, namespace: NamespaceOutcome): void {
    this.lastInterruption = { kind, namespace, epoch: this.epoch };
  }

  becomeUnavailable(message: string): void {
    if (this.closing) return; // a start-up cut short by close() says nothing about the runtime
    this.stateOverride = 'unavailable';
    this.unavailableError = message.slice(0, MAX_ERROR_CHARS);
    this.logger.error('runtime.unavailable', { reason: this.unavailableError });
    const standby = this.standby;
    this.standby = undefined;
    standby?.kill();
    for (const listener of this.unavailableListeners) listener(this.unavailableError);
  }

  /**
   * Atomically swaps `failed` for a started worker: the warm standby when it is ready, else a cold start within
   * the start-up bound. On failure the runtime becomes unavailable for the rest of its lifespan.
   */
  replace(failed: WorkerHandle, reason: InterruptionKind): Promise<void> {
    if (this.current !== failed) return this.replacing ?? Promise.resolve();
    if (this.replacing) return this.replacing;
    this.replacing = this.doReplace(failed, reason).finally(() => {
      this.replacing = undefined;
      this.replacementWorker = undefined;
    });
    return this.replacing;
  }

  /** The worker to dispatch to, once any replacement has finished; or why there is none. */
  async activeWorker(): Promise<WorkerHandle | OperationFailure> {
    if (this.replacing) await this.replacing;
    if (this.stateOverride === 'unavailable') return { code: 'runtime_unavailable', message: unavailableMessage(this.unavailableError) };
    const worker = this.current;
    if (worker === undefined) return { code: 'runtime_unavailable', message: 'the runtime has not started' };
    try {
      await worker.ready;
    } catch {
      return this.activeWorker();
    }
    if (!worker.alive) {
      await this.replace(worker, 'crash');
      return this.activeWorker();
    }
    return worker;
  }

  private startWorker(restore = false): WorkerHandle {
    const options = this.options;
    const state = options.state;
    const spawnOptions = {
      python: options.python,
      maxMessageBytes: options.limits.maxIpcMessageBytes,
      // A restore may take up to the state time cap on top of the usual start-up.
      startupTimeoutMs: options.startupTimeoutMs + (restore && state ? state.saveTimeoutMs : 0),
      cwd: options.cwd,
      env: this.spill?.watchedByWorker ? { ...options.env, [SPILL_DIRECTORY_ENV]: this.spill.path, [SPILL_OWNER_ENV]: String(process.pid) } : options.env,
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
        ...(this.spill === undefined ? {} : { output_spill: { dir: this.spill.path, max_bytes: this.spill.maxBytes } }),
      },
    };
    const worker = options.backend.start(spawnOptions);
    if (state) {
      worker.onStateReport = (report) => {
        // A standby cannot save (it never runs a cell); only the active worker's saves are the namespace's.
        if (worker === this.current) this.stateSave = report;
      };
    }
    this.holdWorkers(worker);
    return worker;
  }

  private ensureStandby(): void {
    if (this.options.warmStandby === false || this.standby !== undefined || this.closing || this.stateOverride === 'unavailable') return;
    const standby = this.startWorker();
    this.standby = standby;
    this.standbyReady = false;
    standby.ready.then(
      () => {
        if (this.standby === standby) this.standbyReady = true;
      },
      (error: Error) => {
        if (this.standby === standby) this.standby = undefined;
        if (this.closing) return; // killed by close: not a failure worth a warning
        this.logger.warn('standby.failed', { reason: error.message.slice(0, 200) });
      },
    );
    void standby.exited.then(() => {
      if (this.standby === standby) this.standby = undefined;
    });
  }

  /** Replaces the active worker when it dies while idle. */
  private watch(worker: WorkerHandle): void {
    void worker.exited.then(({ code, signal }) => {
      if (this.current !== worker || this.closing || this.info === undefined) return;
      this.logger.warn('worker.exited', { epoch: this.epoch, code, signal });
      if (this.operationActive()) return; // the active operation's own failure path replaces it
      void this.replace(worker, 'crash').then(() => {
        if (this.closing) return;
        this.recordInterruption('crash', this.stateOverride === 'unavailable' ? 'unknown' : 'reset');
      });
    });
  }

  private async doReplace(failed: WorkerHandle, reason: InterruptionKind): Promise<void> {
    const startedAt = performance.now();
    if (this.stateOverride !== 'closed') this.stateOverride = 'recovering';
    failed.kill();
    let next = this.standby;
    this.standby = undefined;
    const fromStandby = next !== undefined && next.alive;
    if (next === undefined || !next.alive) next = this.startWorker();
    this.replacementWorker = next;
    let info: WorkerInfo;
    try {
      info = await next.ready;
    } catch (error) {
      next.kill();
      if (this.closing) return; // close() ended this start-up: nothing failed, nothing to retry
      if (!fromStandby) {
        // A cold start already had its full start-up bound: do not try again (that would double the bound).
        this.becomeUnavailable(`replacement worker failed to start: ${(error as Error).message}`);
        return;
      }
      this.logger.warn('replacement.standby_failed', { reason: (error as Error).message.slice(0, 200) });
      next = this.startWorker();
      this.replacementWorker = next;
      try {
        info = await next.ready;
      } catch (coldError) {
        next.kill();
        if (this.closing) return;
        this.becomeUnavailable(`replacement worker failed to start: ${(coldError as Error).message}`);
        return;
      }
    }
    if (this.closing) {
      next.kill();
      return;
    }
    this.current = next;
    this.info = info;
    this.epoch += 1;
    this.replacementStartupMs = Math.round(performance.now() - startedAt);
    this.stateOverride = undefined;
    this.watch(next);
    this.logger.info('worker.replaced', { epoch: this.epoch, reason, replacementMs: this.replacementStartupMs });
    for (const listener of this.epochListeners) listener({ epoch: this.epoch, reason });
    this.ensureStandby();
  }
}
