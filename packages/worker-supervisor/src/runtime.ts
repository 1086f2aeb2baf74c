import { AdmissionError, AdmissionQueue, type AdmissionTicket } from '@ipython-mcp/admission-queue';
import {
  FrameError,
  loneSurrogatePath,
  workerLimits,
  type ErrorCode,
  type OperationName,
  type OperationParams,
  type OperationResult,
  type Settings,
  type ToolCall,
  type WorkerEvent,
} from '@ipython-mcp/protocol';
import { silentLogger, type Logger } from './logger.js';
import { WorkerMemory, describeMemoryStop, toMb, type MemoryTrigger, type OperationMemoryWatch } from './memory-watch.js';
import { PausableTimer } from './pausable-timer.js';
import { startupConfigurationProblem } from './startup-checks.js';
import { WorkerExitedError, WorkerProcess, type ToolAnswer, type WorkerInfo, type WorkerReply } from './worker-process.js';

/** Control-plane state, as runtime_status reports it. */
export type RuntimeState = 'starting' | 'ready' | 'busy' | 'recovering' | 'unavailable' | 'closed';
/** Why an operation stopped early. */
export type InterruptionKind = 'timeout' | 'cancelled' | 'crash' | 'shutdown' | 'memory_limit';
/** What became of the namespace after an interruption. */
export type NamespaceOutcome = 'preserved' | 'reset' | 'unknown';

/** Options of a {@link Runtime}. */
export interface RuntimeOptions {
  /** Python interpreter for the workers. */
  python: string;
  /** Resolved server settings (limits, deadlines, paths, preloads). */
  settings: Settings;
  /** Tool names the worker must refuse for dynamic registrations (the stable tools). */
  reservedToolNames?: string[] | undefined;
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  logger?: Logger | undefined;
  /** Keep a started, configured spare worker for fast replacement (default true). */
  warmStandby?: boolean | undefined;
  /** Send JSON frames even when msgpack is available. */
  forceJsonCodec?: boolean | undefined;
  /**
   * Let the workers keep Node's event loop alive only while an operation is admitted or the runtime closes
   * (default false: always). A library user that forgets {@link Runtime.close} then does not hang its program;
   * the workers still exit with it (pipe EOF).
   */
  unrefWhenIdle?: boolean | undefined;
  /**
   * Runs after a cooperative interruption, before the namespace is reported preserved (registry
   * reconciliation). A throw makes the outcome `unknown` → the worker is replaced.
   */
  reconcile?: ((call: (op: string, params: Record<string, unknown>) => Promise<WorkerReply>) => Promise<void>) | undefined;
}

/** Per-call options of {@link Runtime.run}. */
export interface RunOptions {
  /** The caller's cancellation (MCP notifications/cancelled). */
  signal?: AbortSignal | undefined;
  /** Client request id, echoed in metadata. */
  requestId?: string | number | undefined;
  /** Streamed stdout/stderr chunks; also asks the worker to stream. */
  onEvent?: ((event: WorkerEvent) => void) | undefined;
  /** Nested tool calls (Code Mode). The deadline clock stops while one is outstanding. */
  onToolCall?: ((call: ToolCall) => Promise<ToolAnswer>) | undefined;
  /** Overrides the operation deadline; `null` means none. */
  timeoutMs?: number | null | undefined;
  /** Overrides the interruption grace. */
  graceMs?: number | undefined;
}

/** Metadata of one operation: never code, arguments or values. */
export interface OperationMeta {
  requestId: string | number | null;
  sequence: number | null;
  epoch: number;
  queueWaitMs: number;
  durationMs: number;
  interruption: InterruptionKind | null;
  namespace: NamespaceOutcome | null;
}

/** A structured failure of an operation. */
export interface OperationFailure {
  code: ErrorCode | string;
  message: string;
  details?: Record<string, unknown> | undefined;
  retryable?: boolean | undefined;
  retryAfterMs?: number | undefined;
}

/**
 * The outcome of {@link Runtime.run}: it never throws. `Result` is the operation's result type from the catalogue
 * (`@ipython-mcp/protocol` operations.ts); untyped code sees a plain record.
 */
export type OperationOutcome<Result = Record<string, unknown>> =
  | { ok: true; result: Result; meta: OperationMeta }
  | { ok: false; error: OperationFailure; meta: OperationMeta };

/** A snapshot for runtime_status: control-plane facts only. */
export interface RuntimeStatus {
  state: RuntimeState;
  epoch: number;
  queueDepth: number;
  active: boolean;
  lastInterruption: { kind: InterruptionKind; namespace: NamespaceOutcome; epoch: number } | null;
  replacementStartupMs: number | null;
  workerStartupMs: number | null;
  standby: 'ready' | 'starting' | 'none';
  error: string | null;
  python: string | null;
  ipython: string | null;
  codec: string | null;
  /** Resident MiB of the worker and the processes it started, now; null when not running or not measurable. */
  memoryMb: number | null;
  /** The memory guard's limit in MiB; null when it is off. */
  memoryLimitMb: number | null;
}

/** Why the namespace was replaced. */
export interface EpochChange {
  epoch: number;
  reason: InterruptionKind | 'reset';
}

const MAX_ERROR_CHARS = 1000;

/**
 * The supervised runtime: one active worker (plus a warm standby), an admission queue in front of it, deadlines
 * measured from dispatch, cooperative interruption with a grace period, and atomic replacement.
 */
export class Runtime {
  private readonly options: RuntimeOptions;
  private readonly settings: Settings;
  private readonly logger: Logger;
  private readonly admission: AdmissionQueue;
  private current: WorkerProcess | undefined;
  private standby: WorkerProcess | undefined;
  private standbyReady = false;
  private epochNumber = 1;
  private stateOverride: 'recovering' | 'unavailable' | 'closed' | undefined;
  private unavailableError: string | null = null;
  private lastInterruption: RuntimeStatus['lastInterruption'] = null;
  private replacementStartupMs: number | null = null;
  private info: WorkerInfo | undefined;
  private replacing: Promise<void> | undefined;
  /** The replacement being started, so close() can end it rather than wait out its start-up. */
  private replacementWorker: WorkerProcess | undefined;
  private closing: Promise<void> | undefined;
  private readonly epochListeners = new Set<(change: EpochChange) => void>();
  private readonly unavailableListeners = new Set<(error: string) => void>();
  private started = false;
  private readonly memory: WorkerMemory;
  /** Operations admitted and not yet finished: while there are any, the workers hold the event loop. */
  private admitted = 0;

  constructor(options: RuntimeOptions) {
    this.options = options;
    this.settings = options.settings;
    this.logger = options.logger ?? silentLogger;
    this.admission = new AdmissionQueue({
      maxPending: this.settings.maxPendingOperations,
      queueWaitTimeoutMs: this.settings.queueWaitTimeoutSeconds * 1000,
    });
    this.memory = new WorkerMemory(this.settings.memoryLimitMb ?? null);
  }

  /** Starts the first worker in the background; operations wait for it. Idempotent. */
  start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    const problem = startupConfigurationProblem(this.settings);
    if (problem !== undefined) {
      // Deferred, so a listener subscribed right after start() still hears it.
      queueMicrotask(() => this.becomeUnavailable(problem));
      this.stateOverride = 'unavailable';
      this.unavailableError = problem;
      return;
    }
    this.current = this.spawnWorker();
    this.watch(this.current);
    this.current.ready.then(
      (info) => {
        this.info = info;
        this.logger.info('worker.ready', { epoch: this.epochNumber, pid: info.pid, startupMs: Math.round(info.startupMs) });
        this.ensureStandby();
      },
      (error: Error) => {
        // A start-up the runtime abandoned because it is closing is not a failure: one info line, no error.
        if (this.closing) {
          this.logger.info('runtime.startup_abandoned', { epoch: this.epochNumber });
          return;
        }
        this.becomeUnavailable(error.message);
      },
    );
  }

  /** The current epoch: advances on every worker replacement. */
  get epoch(): number {
    return this.epochNumber;
  }

  /** Subscribes to worker replacements (the namespace and registry are gone). */
  onEpochChange(listener: (change: EpochChange) => void): () => void {
    this.epochListeners.add(listener);
    return () => this.epochListeners.delete(listener);
  }

  /** Subscribes to the runtime becoming unavailable (a start-up failure); the listener gets the error text. */
  onUnavailable(listener: (error: string) => void): () => void {
    this.unavailableListeners.add(listener);
    return () => this.unavailableListeners.delete(listener);
  }

  /** Control-plane status; answers immediately, never queued. */
  status(): RuntimeStatus {
    let state: RuntimeState;
    if (this.stateOverride !== undefined) state = this.stateOverride;
    else if (this.info === undefined) state = 'starting';
    else state = this.admission.active ? 'busy' : 'ready';
    return {
      state,
      epoch: this.epochNumber,
      queueDepth: this.admission.pending,
      active: this.admission.active,
      lastInterruption: this.lastInterruption,
      replacementStartupMs: this.replacementStartupMs,
      workerStartupMs: this.info ? Math.round(this.info.startupMs) : null,
      standby: this.standby === undefined ? 'none' : this.standbyReady ? 'ready' : 'starting',
      error: this.unavailableError,
      python: this.info?.python ?? null,
      ipython: this.info?.ipython ?? null,
      codec: this.info?.codec ?? null,
      memoryMb: this.info === undefined ? null : toMb(this.memory.current(this.current)),
      memoryLimitMb: toMb(this.memory.bounds?.limitBytes),
    };
  }

  /** Pids of the worker processes alive now (active and standby), for tests and diagnostics. */
  workerPids(): number[] {
    return [this.current, this.standby].filter((worker) => worker?.alive && worker.pid !== undefined).map((worker) => worker!.pid!);
  }

  /**
   * Admits one operation, runs it on the worker under the deadline, and reports its outcome. Never throws.
   *
   * Typed by the operations catalogue. The result is trusted to have its catalogued shape after the cheap frame
   * checks (parse-worker-message.ts): validating every result in full would cost the hot path, and the contract
   * tests (operations.test.ts, python/tests/test_operations_contract.py) hold the worker to the catalogue instead.
   */
  run<Op extends OperationName>(op: Op, params: OperationParams<Op>, options?: RunOptions): Promise<OperationOutcome<OperationResult<Op>>>;
  async run(op: string, params: Record<string, unknown>, options: RunOptions = {}): Promise<OperationOutcome> {
    const illFormed = loneSurrogatePath(params);
    const outcome =
      illFormed === undefined
        ? await this.admit(op, params, options)
        : {
            ok: false as const,
            error: {
              code: 'invalid_arguments',
              message: `the text at ${illFormed} holds a lone surrogate (U+D800–U+DFFF), which cannot be sent to Python exactly; write it as an escape (\\udcff) in the code, or pass it escaped`,
              details: { path: illFormed },
            },
            meta: this.meta(options, null, 0, 0),
          };
    this.logOutcome(op, outcome);
    return outcome;
  }

  private async admit(op: string, params: Record<string, unknown>, options: RunOptions): Promise<OperationOutcome> {
    this.admitted += 1;
    try {
      this.start();
      this.holdWorkers();
      return await this.admitHeld(op, params, options);
    } finally {
      this.admitted -= 1;
      this.holdWorkers();
    }
  }

  /** With `unrefWhenIdle`, lets the workers hold the event loop only while there is work (or a close). */
  private holdWorkers(worker?: WorkerProcess): void {
    if (this.options.unrefWhenIdle !== true) return;
    const held = this.admitted > 0 || this.closing !== undefined;
    for (const each of worker === undefined ? [this.current, this.standby] : [worker]) each?.setHeld(held);
  }

  private async admitHeld(op: string, params: Record<string, unknown>, options: RunOptions): Promise<OperationOutcome> {
    const admittedAt = performance.now();
    try {
      return await this.admission.run((ticket, signal) => this.dispatch(op, params, ticket, signal, options), {
        signal: options.signal,
      });
    } catch (error) {
      const meta = this.meta(options, null, performance.now() - admittedAt, 0);
      if (error instanceof AdmissionError) {
        meta.sequence = error.sequence ?? null;
        meta.queueWaitMs = Math.round(error.queueWaitMs ?? meta.queueWaitMs);
        return {
          ok: false,
          error: {
            code: error.code,
            message: admissionMessage(error),
            retryable: error.retryable,
            retryAfterMs: error.retryAfterMs,
          },
          meta,
        };
      }
      return { ok: false, error: { code: 'internal_error', message: boundedMessage(error) }, meta };
    }
  }

  /**
   * One metadata-only line per operation: the operation name, admission and epoch facts, timings and outcome
   * codes. Never code, arguments, results, messages or namespace values.
   */
  private logOutcome(op: string, outcome: OperationOutcome): void {
    const meta = outcome.meta;
    const fields: Record<string, unknown> = {
      op,
      requestId: typeof meta.requestId === 'string' ? meta.requestId.slice(0, 64) : meta.requestId,
      sequence: meta.sequence,
      epoch: meta.epoch,
      queueWaitMs: meta.queueWaitMs,
      durationMs: meta.durationMs,
      ok: outcome.ok,
      code: outcome.ok ? null : String(outcome.error.code).slice(0, 64),
      interruption: meta.interruption,
      namespace: meta.namespace,
    };
    if (meta.interruption !== null) this.logger.info('op.interrupted', fields);
    else this.logger.debug('op.done', fields);
  }

  /** Stops admission, completes queued work as runtime_closed, interrupts the active one, ends every worker. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    this.holdWorkers();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.stateOverride = 'closed';
    this.logger.info('runtime.closing', { epoch: this.epochNumber, queueDepth: this.admission.pending, active: this.admission.active });
    // The standby holds no user state: end it at once rather than after the active operation's grace.
    const standby = this.standby;
    this.standby = undefined;
    standby?.kill();
    this.replacementWorker?.kill();
    this.admission.close();
    await this.admission.onIdle();
    const grace = this.settings.interruptionGraceSeconds * 1000;
    await Promise.all([this.current?.shutdown(grace), standby?.exited]);
    await this.replacing?.catch(() => undefined);
    // A replacement finished during close may have spawned another standby: end everything.
    const remaining = [this.current, this.standby as WorkerProcess | undefined];
    for (const worker of remaining) worker?.kill();
    await Promise.all(remaining.map((worker) => worker?.exited));
  }

  private spawnWorker(): WorkerProcess {
    const worker = this.spawnProcess();
    this.holdWorkers(worker);
    return worker;
  }

  private spawnProcess(): WorkerProcess {
    const settings = this.settings;
    return WorkerProcess.spawn({
      python: this.options.python,
      maxMessageBytes: settings.maxIpcMessageBytes,
      startupTimeoutMs: settings.workerStartupTimeoutSeconds * 1000,
      cwd: this.options.cwd,
      env: this.options.env,
      forceJsonCodec: this.options.forceJsonCodec,
      logger: this.logger,
      configure: {
        limits: workerLimits(settings),
        library_paths: settings.libraryPaths,
        preload_modules: settings.preloadModules,
        module_aliases: settings.moduleAliases,
        reserved_tool_names: this.options.reservedToolNames ?? [],
        ...(this.memory.backstopBytes ? { data_limit_bytes: this.memory.backstopBytes } : {}),
      },
    });
  }

  private ensureStandby(): void {
    if (this.options.warmStandby === false || this.standby !== undefined || this.closing || this.stateOverride === 'unavailable') return;
    const standby = this.spawnWorker();
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
  private watch(worker: WorkerProcess): void {
    void worker.exited.then(({ code, signal }) => {
      if (this.current !== worker || this.closing || this.info === undefined) return;
      this.logger.warn('worker.exited', { epoch: this.epochNumber, code, signal });
      if (this.admission.active) return; // the active operation's own failure path replaces it
      void this.replace(worker, 'crash').then(() => {
        if (this.closing) return;
        this.recordInterruption('crash', this.stateOverride === 'unavailable' ? 'unknown' : 'reset');
      });
    });
  }

  private becomeUnavailable(message: string): void {
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
  private replace(failed: WorkerProcess, reason: InterruptionKind): Promise<void> {
    if (this.current !== failed) return this.replacing ?? Promise.resolve();
    if (this.replacing) return this.replacing;
    this.replacing = this.doReplace(failed, reason).finally(() => {
      this.replacing = undefined;
      this.replacementWorker = undefined;
    });
    return this.replacing;
  }

  private async doReplace(failed: WorkerProcess, reason: InterruptionKind): Promise<void> {
    const startedAt = performance.now();
    if (this.stateOverride !== 'closed') this.stateOverride = 'recovering';
    failed.kill();
    let next = this.standby;
    this.standby = undefined;
    const fromStandby = next !== undefined && next.alive;
    if (next === undefined || !next.alive) next = this.spawnWorker();
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
      next = this.spawnWorker();
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
    this.epochNumber += 1;
    this.replacementStartupMs = Math.round(performance.now() - startedAt);
    this.stateOverride = undefined;
    this.watch(next);
    this.logger.info('worker.replaced', { epoch: this.epochNumber, reason, replacementMs: this.replacementStartupMs });
    for (const listener of this.epochListeners) listener({ epoch: this.epochNumber, reason });
    this.ensureStandby();
  }

  private async activeWorker(): Promise<WorkerProcess | OperationFailure> {
    if (this.replacing) await this.replacing;
    if (this.stateOverride === 'unavailable') {
      return { code: 'runtime_unavailable', message: `the runtime is unavailable until the server restarts: ${this.unavailableError ?? 'start-up failed'}` };
    }
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

  private meta(options: RunOptions, ticket: AdmissionTicket | null, queueWaitMs: number, durationMs: number): OperationMeta {
    return {
      requestId: options.requestId ?? null,
      sequence: ticket?.sequence ?? null,
      epoch: this.epochNumber,
      queueWaitMs: Math.round(ticket?.queueWaitMs ?? queueWaitMs),
      durationMs: Math.round(durationMs),
      interruption: null,
      namespace: null,
    };
  }

  private async dispatch(
    op: string,
    params: Record<string, unknown>,
    ticket: AdmissionTicket,
    signal: AbortSignal,
    options: RunOptions,
  ): Promise<OperationOutcome> {
    const dispatchedAt = performance.now();
    const finish = (): OperationMeta => this.meta(options, ticket, 0, performance.now() - dispatchedAt);
    const worker = await this.activeWorker();
    if (!(worker instanceof WorkerProcess)) return { ok: false, error: worker, meta: finish() };
    const epoch = this.epochNumber;
    this.logger.debug('op.dispatched', { op, sequence: ticket.sequence, epoch, queueWaitMs: Math.round(ticket.queueWaitMs) });

    let stop: ((kind: InterruptionKind) => void) | undefined;
    const stopped = new Promise<InterruptionKind>((resolve) => {
      stop = resolve;
    });
    const timeoutMs = options.timeoutMs === null ? Infinity : (options.timeoutMs ?? this.settings.operationTimeoutSeconds * 1000);
    const deadline = new PausableTimer(timeoutMs, () => stop?.('timeout'));
    const onAbort = (): void => {
      const reason: unknown = signal.reason;
      stop?.(reason instanceof AdmissionError && reason.code === 'runtime_closed' ? 'shutdown' : 'cancelled');
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // The memory guard: past the limit the operation is interrupted; past the hard margin the worker is killed.
    const watch = this.memory.watch(worker, (trigger) => {
      if (trigger === 'hard') worker.kill();
      stop?.('memory_limit');
    });

    const onToolCall = options.onToolCall;
    const { id, reply } = worker.request(op, params, {
      onEvent: options.onEvent,
      onToolCall:
        onToolCall === undefined
          ? undefined
          : (call) => {
              deadline.pause();
              void onToolCall(call)
                .catch((error: unknown) => ({ ok: false as const, message: boundedMessage(error) }))
                .then((result) => {
                  deadline.resume();
                  worker.sendToolResult(call.call_id, result);
                });
            },
    });
    const settled = reply.then(
      (value) => ({ kind: 'reply' as const, value }),
      (error: unknown) => ({ kind: 'failed' as const, error }),
    );
    try {
      const first = await Promise.race([settled, stopped.then((kind) => ({ kind: 'stop' as const, stop: kind }))]);
      if (first.kind === 'reply') {
        if (!first.value.ok && first.value.error.code === 'memory_limit' && this.memory.bounds) {
          // The worker's backstop turned an allocation into MemoryError: the operation already stopped.
          return await this.interrupt(worker, id, settled, 'memory_limit', epoch, options, finish, watch, 'allocation');
        }
        return first.value.ok
          ? { ok: true, result: first.value.result, meta: finish() }
          : { ok: false, error: first.value.error, meta: finish() };
      }
      if (first.kind === 'failed' && watch?.tripped !== 'hard') return await this.onRequestFailure(worker, first.error, finish);
      return await this.interrupt(worker, id, settled, first.kind === 'stop' ? first.stop : 'memory_limit', epoch, options, finish, watch);
    } finally {
      watch?.stop();
      deadline.clear();
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async onRequestFailure(worker: WorkerProcess, error: unknown, finish: () => OperationMeta): Promise<OperationOutcome> {
    if (error instanceof FrameError) {
      return { ok: false, error: { code: error.code, message: error.message, details: { size: error.size } }, meta: finish() };
    }
    const exitedError = error instanceof WorkerExitedError ? error : undefined;
    if (!this.closing) await this.replace(worker, 'crash');
    const namespace: NamespaceOutcome = this.stateOverride === 'unavailable' ? 'unknown' : 'reset';
    this.recordInterruption('crash', namespace);
    const meta = finish();
    meta.interruption = 'crash';
    meta.namespace = namespace;
    return {
      ok: false,
      error: {
        code: 'worker_crashed',
        message: `the worker process ended during the operation (${exitedError?.signal ?? `exit code ${String(exitedError?.exitCode ?? 'unknown')}`}); ${
          namespace === 'reset' ? 'the namespace was reset' : 'no replacement worker could be started'
        }`,
        details: {
          exitCode: exitedError?.exitCode ?? null,
          signal: exitedError?.signal ?? null,
          ...this.replacementDetails(namespace),
        },
      },
      meta,
    };
  }

  private async interrupt(
    worker: WorkerProcess,
    id: number,
    settled: Promise<{ kind: 'reply'; value: WorkerReply } | { kind: 'failed'; error: unknown }>,
    kind: InterruptionKind,
    epoch: number,
    options: RunOptions,
    finish: () => OperationMeta,
    watch?: OperationMemoryWatch | undefined,
    trigger?: MemoryTrigger | undefined,
  ): Promise<OperationOutcome> {
    const graceMs = options.graceMs ?? this.settings.interruptionGraceSeconds * 1000;
    // A stop the worker reported itself (trigger 'allocation') needs no interrupt.
    if (trigger === undefined) worker.interrupt(id, kind === 'memory_limit' ? 'memory_limit' : undefined);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const late = await Promise.race([settled, graceOver]);
    clearTimeout(timer);
    let namespace: NamespaceOutcome;
    let afterBytes: number | undefined;
    if (late !== 'grace' && late.kind === 'reply' && worker.alive) {
      // A memory stop keeps the namespace only if memory fell back below the limit (the worker freed the stopped
      // code's frames before answering); otherwise the worker is replaced.
      afterBytes = kind === 'memory_limit' ? this.memory.current(worker) : undefined;
      const fellBack = kind !== 'memory_limit' || this.memory.belowLimit(worker);
      // The operation stopped; its late result is discarded. Probe health and reconcile before saying so.
      namespace = fellBack && (await this.verify(worker, graceMs)) && this.epochNumber === epoch ? 'preserved' : 'unknown';
    } else {
      namespace = 'unknown';
    }
    if (namespace !== 'preserved') {
      worker.kill();
      if (!this.closing) {
        await this.replace(worker, kind);
        namespace = this.stateOverride === 'unavailable' ? 'unknown' : 'reset';
      } else {
        namespace = 'reset';
      }
    }
    this.recordInterruption(kind, namespace);
    const meta = finish();
    meta.interruption = kind;
    meta.namespace = namespace;
    const outcome = namespace === 'preserved' ? 'state was preserved' : namespace === 'reset' ? 'the worker was replaced and the namespace reset' : 'the namespace state is unknown';
    const details = this.replacementDetails(namespace);
    if (kind === 'memory_limit' && this.memory.bounds) {
      const stop = { trigger: trigger ?? (watch?.tripped === 'hard' ? 'hard' : 'watch'), bounds: this.memory.bounds, watch, afterBytes } as const;
      const described = describeMemoryStop(stop, outcome);
      return { ok: false, error: { code: 'memory_limit', message: described.message, details: { ...described.details, ...details } }, meta };
    }
    const code: ErrorCode = kind === 'timeout' ? 'operation_timeout' : kind === 'shutdown' ? 'runtime_closed' : 'operation_cancelled';
    const what = kind === 'timeout' ? 'passed its deadline' : kind === 'shutdown' ? 'was stopped by shutdown' : 'was cancelled';
    return { ok: false, error: { code, message: `the operation ${what}; ${outcome}`, ...(details ? { details } : {}) }, meta };
  }

  /** The measured replacement time, for outcomes that replaced the worker. */
  private replacementDetails(namespace: NamespaceOutcome): { replacement_startup_ms: number } | undefined {
    if (namespace !== 'reset' || this.replacementStartupMs === null || this.closing) return undefined;
    return { replacement_startup_ms: this.replacementStartupMs };
  }

  private async verify(worker: WorkerProcess, boundMs: number): Promise<boolean> {
    const bound = Math.max(boundMs, 1000);
    const call = (op: string, params: Record<string, unknown>): Promise<WorkerReply> =>
      withTimeout(worker.request(op, params).reply, bound);
    try {
      const health = await call('health', {});
      if (!health.ok) return false;
      if (this.options.reconcile) await this.options.reconcile(call);
      return worker.alive;
    } catch {
      return false;
    }
  }

  private recordInterruption(kind: InterruptionKind, namespace: NamespaceOutcome): void {
    this.lastInterruption = { kind, namespace, epoch: this.epochNumber };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function boundedMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.slice(0, MAX_ERROR_CHARS);
}

function admissionMessage(error: AdmissionError): string {
  switch (error.code) {
    case 'runtime_busy':
      return 'the pending queue is full; retry after the reported interval';
    case 'queue_timeout':
      return 'the request waited too long for dispatch and never ran; it is safe to retry';
    case 'operation_cancelled':
      return 'the request was cancelled before it was dispatched';
    case 'runtime_closed':
      return 'the runtime is closed';
  }
}
