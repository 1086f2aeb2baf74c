import { AdmissionError, AdmissionQueue } from '@ipython-mcp/admission-queue';
import { loneSurrogatePath, type OperationName, type OperationParams, type OperationResult } from '@ipython-mcp/protocol';
import { Dispatcher } from './dispatch.js';
import { silentLogger, type Logger } from './logger.js';
import { WorkerMemory, toMb } from './memory-watch.js';
import { admissionMessage, boundedMessage, loneSurrogateMessage } from './outcome-wording.js';
import { resolveRuntimeOptions, type ResolvedRuntimeOptions, type RuntimeOptions } from './runtime-options.js';
import type { EpochChange, OperationOutcome, RunOptions, RuntimeState, RuntimeStatus } from './runtime-types.js';
import { startupConfigurationProblem } from './startup-checks.js';
import { capabilityProblem, type WorkerBackend } from './worker-backend.js';
import { WorkerPool } from './worker-pool.js';
import { OutputSpill } from './output-spill.js';
import type { WorkerHandle } from './worker-handle.js';


/**
 * The supervised runtime: one active worker (plus a warm standby), an admission queue in front of it, deadlines
 * measured from dispatch, cooperative interruption with a grace period, and atomic replacement.
 *
 * A facade over three parts: the {@link WorkerPool} (active worker, standby, epochs, replacement), the
 * {@link Dispatcher} (deadline, interrupt, verification) and outcome-wording.ts (what a failure says).
 */
export class Runtime {
  private readonly options: ResolvedRuntimeOptions;
  private readonly logger: Logger;
  private readonly admission: AdmissionQueue;
  private readonly memory: WorkerMemory;
  private readonly pool: WorkerPool;
  private readonly dispatcher: Dispatcher;
  private closing: Promise<void> | undefined;
  private started = false;
  /** Operations admitted and not yet finished: while there are any, the workers hold the event loop. */
  private admitted = 0;

  constructor(options: RuntimeOptions) {
    this.options = resolveRuntimeOptions(options);
    this.logger = options.logger ?? silentLogger;
    this.admission = new AdmissionQueue({ maxPending: this.options.maxPendingOperations, queueWaitTimeoutMs: this.options.queueWaitTimeoutMs });
    this.memory = new WorkerMemory(this.options.memoryLimitMb, options.memoryProbe?.read, options.memoryProbe?.intervalMs);
    this.pool = new WorkerPool(
      this.options,
      this.logger,
      this.memory,
      () => this.admitted > 0 || this.closing !== undefined,
      () => this.admission.active,
    );
    this.dispatcher = new Dispatcher(this.options, this.pool, this.memory, this.logger);
  }

  /** Starts the first worker in the background; operations wait for it. Idempotent. */
  start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    const spillBytes = this.options.outputSpillBytes;
    if (spillBytes !== null && spillBytes !== undefined && spillBytes > 0) this.pool.useSpill(OutputSpill.create(spillBytes, this.options.outputSpillParent));
    const options = this.options;
    const problem =
      capabilityProblem(options.backend, { state: options.state !== undefined, sandbox: options.launch !== undefined }) ??
      startupConfigurationProblem(options.libraryPaths);
    if (problem !== undefined) {
      this.pool.refuseToStart(problem);
      return;
    }
    this.pool.startFirst();
  }

  /** The current epoch: advances on every worker replacement. */
  get epoch(): number {
    return this.pool.epoch;
  }

  /** Subscribes to worker replacements (the namespace and registry are gone). */
  onEpochChange(listener: (change: EpochChange) => void): () => void {
    return this.pool.onEpochChange(listener);
  }

  /** Subscribes to the runtime becoming unavailable (a start-up failure); the listener gets the error text. */
  onUnavailable(listener: (error: string) => void): () => void {
    return this.pool.onUnavailable(listener);
  }

  /** Control-plane status; answers immediately, never queued. */
  status(): RuntimeStatus {
    const pool = this.pool;
    let state: RuntimeState;
    if (pool.stateOverride !== undefined) state = pool.stateOverride;
    else if (pool.info === undefined) state = 'starting';
    else state = this.admission.active ? 'busy' : 'ready';
    const running = this.dispatcher.active;
    return {
      state,
      epoch: pool.epoch,
      queueDepth: this.admission.pending,
      active: this.admission.active,
      lastInterruption: pool.lastInterruption,
      replacementStartupMs: pool.replacementStartupMs,
      workerStartupMs: pool.info ? Math.round(pool.info.startupMs) : null,
      standby: pool.standbyState,
      error: pool.unavailableError,
      python: pool.info?.python ?? null,
      ipython: pool.info?.ipython ?? null,
      codec: pool.info?.codec ?? null,
      memoryMb: pool.info === undefined ? null : toMb(this.memory.current(pool.current)),
      memoryLimitMb: toMb(this.memory.bounds?.limitBytes),
      snapshot: this.options.state ? { file: this.options.state.path, ...pool.snapshotReports } : null,
      activeOperation:
        running === undefined
          ? null
          : { elapsedMs: performance.now() - running.dispatchedAt, deadlineMs: Number.isFinite(running.timeoutMs) ? running.timeoutMs : null },
    };
  }

  /** The spill directory of this runtime, or undefined when spilling is off (or the directory could not be made). */
  get spillDirectory(): string | undefined {
    return this.pool.spill?.path;
  }

  /**
   * The worker serving operations now and the warm standby, as they are (either may be undefined, starting or
   * ended): for a backend's own status, which names what each one runs on (a Jupyter kernel's id).
   */
  workers(): { active: WorkerHandle | undefined; standby: WorkerHandle | undefined } {
    return { active: this.pool.current, standby: this.pool.standby };
  }

  /** Pids of the worker processes alive now (active and standby), for tests and diagnostics. */
  workerPids(): number[] {
    return [this.pool.current, this.pool.standby].filter((worker) => worker?.alive && worker.pid !== undefined).map((worker) => worker!.pid!);
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
            error: { code: 'invalid_arguments' as const, message: loneSurrogateMessage(illFormed), details: { path: illFormed } },
            meta: this.dispatcher.meta(options, null, 0, 0),
          };
    // On a kernel other clients share every answer says who did what, one that never reached the worker included
    // (refused by admission, cut short by shutdown, no worker to run it): it never ran and waited for no kernel.
    if (this.options.backend.sharedKernel === true) outcome.meta.shared ??= { ran: false, waitedMs: 0, behind: null, stoppedBy: null };
    this.logOutcome(op, outcome);
    return outcome;
  }

  private async admit(op: string, params: Record<string, unknown>, options: RunOptions): Promise<OperationOutcome> {
    this.admitted += 1;
    try {
      this.start();
      this.pool.holdWorkers();
      return await this.admitHeld(op, params, options);
    } finally {
      this.admitted -= 1;
      this.pool.holdWorkers();
    }
  }

  private async admitHeld(op: string, params: Record<string, unknown>, options: RunOptions): Promise<OperationOutcome> {
    const admittedAt = performance.now();
    try {
      return await this.admission.run((ticket, abort) => this.dispatcher.dispatch(op, params, ticket, abort, options), {
        signal: options.signal,
      });
    } catch (error) {
      const meta = this.dispatcher.meta(options, null, performance.now() - admittedAt, 0);
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
      code: outcome.ok ? null : outcome.error.code,
      interruption: meta.interruption,
      namespace: meta.namespace,
    };
    if (meta.interruption !== null) this.logger.info('op.interrupted', fields);
    else this.logger.debug('op.done', fields);
  }

  /**
   * Moves the namespace to another backend (another kernel), in line with the operations: it waits in the admission
   * queue like one (so it never cuts a running cell), then a worker of `backend` takes the active worker's place and
   * the epoch advances (a new namespace, as after a replacement). A worker that fails to start changes nothing: the
   * old one stays active and the error is thrown. An {@link AdmissionError} says it never ran (a full queue, a queue
   * wait past its bound, a closed runtime).
   *
   * @param options.warmStandby - keep a warm standby of `backend` (false where every worker shares one kernel)
   * @returns the new epoch
   */
  async switchBackend(backend: WorkerBackend, options: { warmStandby: boolean }): Promise<{ epoch: number }> {
    const problem = capabilityProblem(backend, { state: this.options.state !== undefined, sandbox: this.options.launch !== undefined });
    if (problem !== undefined) throw new Error(problem);
    this.admitted += 1;
    try {
      this.start();
      this.pool.holdWorkers();
      return await this.admission.run(async () => {
        await this.pool.switchBackend(backend, options.warmStandby, this.options.interruptionGraceMs);
        return { epoch: this.pool.epoch };
      });
    } finally {
      this.admitted -= 1;
      this.pool.holdWorkers();
    }
  }

  /** Stops admission, completes queued work as runtime_closed, interrupts the active one, ends every worker. */
  close(): Promise<void> {
    this.pool.beginClose();
    this.closing ??= this.doClose();
    this.pool.holdWorkers();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    const pool = this.pool;
    pool.markClosed();
    this.logger.info('runtime.closing', { epoch: pool.epoch, queueDepth: this.admission.pending, active: this.admission.active });
    // The standby holds no user state: end it at once rather than after the active operation's grace.
    const standby = pool.killSpares();
    this.admission.close();
    await this.admission.onIdle();
    // With --state the worker saves the namespace before it exits: its grace covers the save's time cap too.
    const grace = this.options.interruptionGraceMs + (this.options.state?.saveTimeoutMs ?? 0);
    await Promise.all([pool.current?.shutdown(grace), standby?.exited]);
    await pool.replacing?.catch(() => undefined);
    // A replacement finished during close may have spawned another standby: end everything.
    const remaining = [pool.current, pool.standby];
    for (const worker of remaining) worker?.kill();
    await Promise.all(remaining.map((worker) => worker?.exited));
    // Every worker is gone: nothing writes into the spill directory any more.
    pool.spill?.remove();
  }
}
