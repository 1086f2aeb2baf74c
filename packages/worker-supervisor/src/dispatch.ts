import { type AdmissionAbort, AdmissionError, type AdmissionTicket } from '@ipython-mcp/admission-queue';
import { FrameError } from '@ipython-mcp/protocol';
import type { Logger } from './logger.js';
import { describeMemoryStop, type MemoryTrigger, type OperationMemoryWatch, type WorkerMemory } from './memory-watch.js';
import { boundedMessage, interruptionFailure, interruptionHead, namespaceWording, workerCrashedMessage } from './outcome-wording.js';
import { PausableTimer } from './pausable-timer.js';
import type { ResolvedRuntimeOptions } from './runtime-options.js';
import type { InterruptionKind, NamespaceOutcome, OperationMeta, OperationOutcome, RunOptions, ToolAnswer } from './runtime-types.js';
import { endKind, type WorkerPool } from './worker-pool.js';
import type { WorkerHandle, WorkerReply } from './worker-handle.js';
import { WorkerExitedError } from './worker-process.js';

type Settled = Promise<{ kind: 'reply'; value: WorkerReply } | { kind: 'failed'; error: unknown }>;

/**
 * The stops of one operation as they come (deadline, cancel or `job` stop, shutdown, the memory guard's two lines),
 * in any order and at any gap, zero included. The first decides the interruption (`first`) and the one interrupt
 * sent; a later stop changes nothing but the memory guard, which is heard to the end: a hard trip kills the worker
 * whatever came first, and a soft trip during another stop's grace marks the stop as a memory stop too, so the
 * worker releases what the stopped code held, and the namespace is kept only if memory is then back below the limit.
 */
class OperationStops {
  first: InterruptionKind | undefined;
  /** What the one interrupt asked: sent as a plain stop, or for memory (the worker then releases memory). */
  interrupt: 'plain' | 'memory' | undefined;
  readonly stopped: Promise<InterruptionKind>;
  private resolve!: (kind: InterruptionKind) => void;

  constructor() {
    this.stopped = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  /** Records a stop; only the first one counts as the operation's interruption. */
  stop(kind: InterruptionKind): void {
    if (this.first !== undefined) return;
    this.first = kind;
    this.resolve(kind);
  }
}

/** An operation that was stopped (deadline, cancellation, memory), as its interruption needs it. */
interface StoppedOperation {
  worker: WorkerHandle;
  /** The request's id, which the interrupt names. */
  id: number;
  /** Settles with the request's reply or failure, however late. */
  settled: Settled;
  kind: InterruptionKind;
  /** The epoch the operation was dispatched in. */
  epoch: number;
  options: RunOptions;
  finish: () => OperationMeta;
  watch?: OperationMemoryWatch | undefined;
  stops: OperationStops;
  /** Set when the worker stopped the operation itself (the allocation backstop): no interrupt is sent. */
  trigger?: MemoryTrigger | undefined;
}

/**
 * Runs one admitted operation on the active worker: the deadline (measured from dispatch, paused while a nested
 * tool call is outstanding, and moved later by its frames' transit once the worker reports it), the caller's
 * cancellation, the memory guard, and what follows a stop: a cooperative interrupt, the grace period, verification
 * of the namespace, or replacement of the worker.
 */
export class Dispatcher {
  /** The operation running now: when it was dispatched and its deadline in ms (Infinity: none); for status. */
  active: { dispatchedAt: number; timeoutMs: number } | undefined;

  constructor(
    private readonly options: ResolvedRuntimeOptions,
    private readonly pool: WorkerPool,
    private readonly memory: WorkerMemory,
    private readonly logger: Logger,
  ) {}

  /** The metadata of an operation (never code, arguments or values). */
  meta(options: RunOptions, ticket: AdmissionTicket | null, queueWaitMs: number, durationMs: number): OperationMeta {
    const last = this.pool.lastInterruption;
    const action = last !== null && last.kind === 'other_client' && last.epoch === this.pool.epoch ? last.action : undefined;
    return {
      ...(action === undefined ? {} : { epochReason: { kind: 'other_client' as const, action } }),
      requestId: options.requestId ?? null,
      sequence: ticket?.sequence ?? null,
      epoch: this.pool.epoch,
      queueWaitMs: Math.round(ticket?.queueWaitMs ?? queueWaitMs),
      durationMs: Math.round(durationMs),
      interruption: null,
      namespace: null,
    };
  }

  async dispatch(op: string, params: Record<string, unknown>, ticket: AdmissionTicket, abort: AdmissionAbort, options: RunOptions): Promise<OperationOutcome> {
    const dispatchedAt = performance.now();
    const finish = (): OperationMeta => this.meta(options, ticket, 0, performance.now() - dispatchedAt);
    const worker = await this.pool.activeWorker();
    if ('code' in worker) return { ok: false, error: worker, meta: finish() };
    const epoch = this.pool.epoch;
    this.logger.debug('op.dispatched', { op, sequence: ticket.sequence, epoch, queueWaitMs: Math.round(ticket.queueWaitMs) });

    const stops = new OperationStops();
    const stop = (kind: InterruptionKind): void => stops.stop(kind);
    const timeoutMs = options.timeoutMs === null ? Infinity : (options.timeoutMs ?? this.options.operationTimeoutMs);
    // Code Mode's deadline moves with what the worker reports of its nested calls: found due, it reads that first.
    const deadline = new PausableTimer(timeoutMs, () => stop('timeout'), { readFirst: options.onToolCall !== undefined });
    const active = { dispatchedAt, timeoutMs };
    this.active = active;
    const onAbort = (reason: unknown): void => {
      stop(reason instanceof AdmissionError && reason.code === 'runtime_closed' ? 'shutdown' : 'cancelled');
    };
    let removeAbort: (() => void) | undefined;
    if (abort.aborted) onAbort(abort.reason);
    else removeAbort = abort.onAbort(onAbort);
    const onToolCall = options.onToolCall;
    // How long the deadline stood still for the last nested call answered (ms). The worker's next call says how long
    // it waited for that answer by its own clock; the difference is the frames' transit both ways (a busy event loop
    // here, a loaded machine), which is tool-call time too, so the deadline moves later by it.
    let lastAnsweredMs: number | undefined;
    const { id, reply } = worker.request(op, params, {
      onEvent: options.onEvent,
      onPaused: (paused) => (paused ? deadline.pause() : deadline.resume()),
      onToolCall:
        onToolCall === undefined
          ? undefined
          : (call) => {
              deadline.pause();
              const heardAt = performance.now();
              // What the worker waited beyond our answering (extend ignores what is not positive).
              if (call.waited_us !== undefined && lastAnsweredMs !== undefined) deadline.extend(call.waited_us / 1000 - lastAnsweredMs);
              lastAnsweredMs = undefined;
              const answer = (result: ToolAnswer): void => {
                lastAnsweredMs = performance.now() - heardAt;
                deadline.resume();
                worker.sendToolResult(call.call_id, result);
              };
              // One promise per nested call: the failure handler beside the success one, not a catch before it.
              void onToolCall(call).then(answer, (error: unknown) => answer({ ok: false, message: boundedMessage(error) }));
            },
    });
    // Every outcome of a request the worker was given carries what it knows of who did what (a shared kernel's
    // worker), however the request ended; an answer's own facts, read later, take precedence.
    const finishSent = (): OperationMeta => {
      const meta = finish();
      const facts = worker.sharedFacts?.(id);
      if (facts !== undefined) withShared(meta, { ok: true, result: {}, shared: facts });
      return meta;
    };
    // The memory guard: past the limit the operation is interrupted; past the hard margin the worker is killed. Its
    // baseline read comes after the request is written, so it overlaps the worker's start on the operation. It
    // watches until the operation's outcome is decided, through any stop's grace.
    const watch = this.memory.watch(worker, (trigger) => {
      if (trigger === 'hard') worker.kill();
      stop('memory_limit');
      if (trigger === 'watch' && stops.interrupt === 'plain' && worker.alive) {
        // Another stop's interrupt is out: no second one is raised; the worker is told the stop is for memory too.
        stops.interrupt = 'memory';
        worker.interrupt(id, 'memory_limit');
        this.logger.debug('op.interrupt_for_memory', { kind: stops.first, epoch, requestId: loggedRequestId(options.requestId) });
      }
    });
    const settled: Settled = reply.then(
      (value) => ({ kind: 'reply' as const, value }),
      (error: unknown) => ({ kind: 'failed' as const, error }),
    );
    try {
      const first = await Promise.race([settled, stops.stopped.then((kind) => ({ kind: 'stop' as const, stop: kind }))]);
      if (first.kind === 'reply') {
        if (!first.value.ok && first.value.error.code === 'memory_limit' && this.memory.bounds) {
          // The worker's backstop turned an allocation into MemoryError: the operation already stopped.
          return await this.interrupt({ worker, id, settled, kind: 'memory_limit', epoch, options, finish: finishSent, watch, stops, trigger: 'allocation' });
        }
        const meta = finishSent();
        if (first.value.catalogRevision !== undefined) meta.catalogRevision = first.value.catalogRevision;
        withShared(meta, first.value);
        return first.value.ok ? { ok: true, result: first.value.result, meta } : { ok: false, error: first.value.error, meta };
      }
      if (first.kind === 'failed' && watch?.tripped !== 'hard') return await this.onRequestFailure(worker, first.error, finishSent);
      const kind = first.kind === 'stop' ? first.stop : 'memory_limit';
      stops.stop(kind);
      return await this.interrupt({ worker, id, settled, kind, epoch, options, finish: finishSent, watch, stops });
    } finally {
      watch?.stop();
      deadline.clear();
      removeAbort?.();
      if (this.active === active) this.active = undefined;
    }
  }

  private async onRequestFailure(worker: WorkerHandle, error: unknown, finish: () => OperationMeta): Promise<OperationOutcome> {
    if (error instanceof FrameError) {
      return { ok: false, error: { code: error.code, message: error.message, details: { size: error.size } }, meta: finish() };
    }
    const exitedError = error instanceof WorkerExitedError ? error : undefined;
    // A kernel another client restarted or shut down under the operation is named so, not as a crash.
    const kind = endKind(worker);
    if (!this.pool.closing) await this.pool.replace(worker, kind);
    const namespace: NamespaceOutcome = this.pool.stateOverride === 'unavailable' ? 'unknown' : 'reset';
    this.pool.recordInterruption(kind, namespace, worker.endedByOtherClient);
    const meta = finish();
    meta.interruption = kind;
    meta.namespace = namespace;
    return {
      ok: false,
      error: {
        code: 'worker_crashed',
        message: this.withUnavailableReason(workerCrashedMessage(exitedError, namespace), namespace),
        details: {
          exitCode: exitedError?.exitCode ?? null,
          signal: exitedError?.signal ?? null,
          ...this.replacementDetails(namespace),
        },
      },
      meta,
    };
  }

  private async interrupt(stopped: StoppedOperation): Promise<OperationOutcome> {
    const { worker, id, settled, kind, epoch, options, finish, watch, stops, trigger } = stopped;
    const graceMs = options.graceMs ?? this.options.interruptionGraceMs;
    // A stop the worker reported itself (trigger 'allocation') needs no interrupt. One interrupt only: a stop that
    // meets another (a cancel at the deadline, the memory guard during the grace) never sends a second.
    if (trigger === undefined && stops.interrupt === undefined && worker.alive) {
      // The memory guard may have tripped since the first stop (the same turn of the clock): the stop is for memory too.
      const forMemory = kind === 'memory_limit' || watch?.tripped !== undefined;
      stops.interrupt = forMemory ? 'memory' : 'plain';
      worker.interrupt(id, forMemory ? 'memory_limit' : undefined);
      this.logger.debug('op.interrupt_sent', { kind, epoch, requestId: loggedRequestId(options.requestId) });
    }
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const late = await Promise.race([settled, graceOver]);
    clearTimeout(timer);
    const reply = late !== 'grace' && late.kind === 'reply' ? late.value : undefined;
    // Where the guard runs beside the worker (a Jupyter kernel's machine guard), only its answer says it stopped the
    // code for memory before this stop came (this stop then landed during the memory stop's grace): memory came first.
    const cause: InterruptionKind = kind !== 'memory_limit' && this.memory.bounds === undefined && guardStoppedFirst(reply) ? 'memory_limit' : kind;
    let namespace: NamespaceOutcome;
    let afterBytes: number | undefined;
    /** Whether memory is why the worker is replaced (killed past the hard margin, or still above the limit). */
    let replacedForMemory = watch?.tripped === 'hard';
    const withdrawn = late !== 'grace' && late.kind === 'reply' && !late.value.ok && late.value.withdrawn === true;
    if (withdrawn && worker.alive) {
      // Withdrawn before it ran (it was waiting for a kernel busy with another client's cell): nothing to verify.
      namespace = 'preserved';
    } else if (late !== 'grace' && late.kind === 'reply' && worker.alive) {
      // Whatever stop came first, a stop the memory guard took part in keeps the namespace only if memory fell back
      // below the limit (the worker freed the stopped code's frames before answering); otherwise it is replaced.
      const memoryStop = memoryTriggerOf(trigger, watch, late.value, this.memory.bounds !== undefined) !== undefined;
      afterBytes = memoryStop ? this.memory.current(worker) : undefined;
      const fellBack = !memoryStop || this.memory.bounds === undefined || this.memory.belowLimit(worker);
      replacedForMemory ||= !fellBack;
      // The operation stopped; its late result is discarded. Probe health and reconcile before saying so.
      namespace = fellBack && (await this.verify(worker, graceMs)) && this.pool.epoch === epoch ? 'preserved' : 'unknown';
      replacedForMemory ||= watch?.tripped === 'hard';
    } else {
      namespace = 'unknown';
    }
    if (namespace !== 'preserved') {
      worker.kill();
      if (!this.pool.closing) {
        await this.pool.replace(worker, replacedForMemory ? 'memory_limit' : cause);
        namespace = this.pool.stateOverride === 'unavailable' ? 'unknown' : 'reset';
      } else {
        namespace = 'reset';
      }
    }
    this.pool.recordInterruption(cause, namespace);
    const meta = finish();
    meta.interruption = cause;
    meta.namespace = namespace;
    if (reply !== undefined) withShared(meta, reply);
    const details = this.replacementDetails(namespace);
    const memoryTrigger = memoryTriggerOf(trigger, watch, reply, this.memory.bounds !== undefined);
    const outcome = this.withUnavailableReason(namespaceWording(namespace), namespace);
    const limitMb = this.memory.bounds === undefined ? reportedLimitMb(reply) : undefined;
    if (cause === 'memory_limit' && (this.memory.bounds !== undefined || memoryTrigger !== undefined)) {
      const stop = { trigger: memoryTrigger ?? 'watch', bounds: this.memory.bounds, watch, afterBytes, limitMb } as const;
      const described = describeMemoryStop(stop, outcome);
      return { ok: false, error: { code: 'memory_limit', message: described.message, details: { ...described.details, ...details } }, meta };
    }
    const named = cause === 'memory_limit' ? 'cancelled' : cause;
    if (memoryTrigger !== undefined && cause !== 'memory_limit') {
      // Another stop came first and the memory guard tripped during its grace: the outcome names both, and says it
      // was memory that replaced the worker when it was.
      const described = describeMemoryStop({ trigger: memoryTrigger, bounds: this.memory.bounds, watch, afterBytes, limitMb }, outcome, true);
      const first = interruptionHead(named, meta.shared);
      return {
        ok: false,
        error: {
          code: first.code,
          message: boundedMessage(`${first.message}; ${described.message}`),
          details: { memory: { ...described.details, replaced_worker: replacedForMemory && namespace !== 'preserved' }, ...details },
        },
        meta,
      };
    }
    const failure = interruptionFailure(named, namespace, meta.shared);
    return { ok: false, error: { ...failure, message: this.withUnavailableReason(failure.message, namespace), ...(details ? { details } : {}) }, meta };
  }

  /**
   * An outcome that left no worker to run the next operation says why (e.g. a Jupyter kernel ipython-mcp may not
   * restart is stuck in the cell), so the caller reads it once, with the failure, not only from runtime_status.
   */
  private withUnavailableReason(message: string, namespace: NamespaceOutcome): string {
    const reason = namespace === 'unknown' && this.pool.stateOverride === 'unavailable' ? this.pool.unavailableError : null;
    return reason === null ? message : boundedMessage(`${message}: ${reason}`);
  }

  /** The measured replacement time, for outcomes that replaced the worker. */
  private replacementDetails(namespace: NamespaceOutcome): { replacement_startup_ms: number } | undefined {
    if (namespace !== 'reset' || this.pool.replacementStartupMs === null || this.pool.closing) return undefined;
    return { replacement_startup_ms: this.pool.replacementStartupMs };
  }

  private async verify(worker: WorkerHandle, boundMs: number): Promise<boolean> {
    const bound = Math.max(boundMs, 1000);
    const call = (op: string, params: Record<string, unknown>): Promise<WorkerReply> => withTimeout(worker.request(op, params).reply, bound);
    const policy = this.options.afterInterrupt;
    try {
      const health = await call('health', {});
      if (!health.ok) return false;
      if (policy?.needed()) {
        const reply = await call(policy.operation, policy.params());
        if (!reply.ok || !policy.accept(reply.result, this.pool.epoch)) return false;
      }
      return worker.alive;
    } catch {
      return false;
    }
  }
}

/**
 * How the memory guard took part in a stop, if it did: the worker's own backstop (`allocation`), the watch's line
 * crossed (`watch`, `hard`), or, where the guard runs beside the worker (a Jupyter kernel's machine guard), the
 * worker's answer saying it stopped the code for memory.
 */
function memoryTriggerOf(trigger: MemoryTrigger | undefined, watch: OperationMemoryWatch | undefined, reply: WorkerReply | undefined, guarded: boolean): MemoryTrigger | undefined {
  if (trigger !== undefined) return trigger;
  if (watch?.tripped !== undefined) return watch.tripped;
  if (reply === undefined || reply.ok || reply.error.code !== 'memory_limit') return undefined;
  const said = (reply.error.details as { trigger?: unknown } | undefined)?.trigger;
  if (said === 'allocation' && !guarded) return undefined;
  return said === 'allocation' || said === 'hard' ? said : 'watch';
}

/** Whether a guard beside the worker answered that it stopped the code for memory before any other stop came. */
function guardStoppedFirst(reply: WorkerReply | undefined): boolean {
  if (reply === undefined || reply.ok || reply.error.code !== 'memory_limit') return false;
  const details = reply.error.details as { trigger?: unknown; after_interrupt?: unknown } | undefined;
  return details?.trigger === 'watch' && details.after_interrupt !== true;
}

/** The limit a guard beside the worker reported in its memory_limit answer, in MiB. */
function reportedLimitMb(reply: WorkerReply | undefined): number | undefined {
  if (reply === undefined || reply.ok) return undefined;
  const limit = (reply.error.details as { limit_mb?: unknown } | undefined)?.limit_mb;
  return typeof limit === 'number' && Number.isFinite(limit) ? limit : undefined;
}

/** Copies what a worker over a shared kernel said about the request (who did what) into its metadata. */
function withShared(meta: OperationMeta, reply: WorkerReply): void {
  const shared = reply.shared;
  if (shared === undefined) return;
  meta.shared = { ran: shared.ran, waitedMs: Math.round(shared.waitedMs), behind: shared.behind, stoppedBy: shared.stoppedBy ?? null };
}

/** A client's request id as a log line carries it: a string is cut to 64 characters. */
function loggedRequestId(id: string | number | undefined): string | number | null {
  return typeof id === 'string' ? id.slice(0, 64) : (id ?? null);
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
