import { type AdmissionAbort, AdmissionError, type AdmissionTicket } from '@ipython-mcp/admission-queue';
import { FrameError } from '@ipython-mcp/protocol';
import type { Logger } from './logger.js';
import { describeMemoryStop, type MemoryTrigger, type OperationMemoryWatch, type WorkerMemory } from './memory-watch.js';
import { boundedMessage, interruptionFailure, namespaceWording, workerCrashedMessage } from './outcome-wording.js';
import { PausableTimer } from './pausable-timer.js';
import type { ResolvedRuntimeOptions } from './runtime-options.js';
import type { InterruptionKind, NamespaceOutcome, OperationMeta, OperationOutcome, RunOptions, ToolAnswer } from './runtime-types.js';
import type { WorkerPool } from './worker-pool.js';
import type { WorkerHandle, WorkerReply } from './worker-handle.js';
import { WorkerExitedError } from './worker-process.js';

type Settled = Promise<{ kind: 'reply'; value: WorkerReply } | { kind: 'failed'; error: unknown }>;

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
  /** Set when the worker stopped the operation itself (the allocation backstop): no interrupt is sent. */
  trigger?: MemoryTrigger | undefined;
}

/**
 * Runs one admitted operation on the active worker: the deadline (measured from dispatch, paused while a nested
 * tool call is outstanding), the caller's cancellation, the memory guard, and what follows a stop: a cooperative
 * interrupt, the grace period, verification of the namespace, or replacement of the worker.
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
    return {
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

    let stop: ((kind: InterruptionKind) => void) | undefined;
    const stopped = new Promise<InterruptionKind>((resolve) => {
      stop = resolve;
    });
    const timeoutMs = options.timeoutMs === null ? Infinity : (options.timeoutMs ?? this.options.operationTimeoutMs);
    const deadline = new PausableTimer(timeoutMs, () => stop?.('timeout'));
    const active = { dispatchedAt, timeoutMs };
    this.active = active;
    const onAbort = (reason: unknown): void => {
      stop?.(reason instanceof AdmissionError && reason.code === 'runtime_closed' ? 'shutdown' : 'cancelled');
    };
    let removeAbort: (() => void) | undefined;
    if (abort.aborted) onAbort(abort.reason);
    else removeAbort = abort.onAbort(onAbort);
    const onToolCall = options.onToolCall;
    const { id, reply } = worker.request(op, params, {
      onEvent: options.onEvent,
      onToolCall:
        onToolCall === undefined
          ? undefined
          : (call) => {
              deadline.pause();
              const answer = (result: ToolAnswer): void => {
                deadline.resume();
                worker.sendToolResult(call.call_id, result);
              };
              // One promise per nested call: the failure handler beside the success one, not a catch before it.
              void onToolCall(call).then(answer, (error: unknown) => answer({ ok: false, message: boundedMessage(error) }));
            },
    });
    // The memory guard: past the limit the operation is interrupted; past the hard margin the worker is killed. Its
    // baseline read comes after the request is written, so it overlaps the worker's start on the operation.
    const watch = this.memory.watch(worker, (trigger) => {
      if (trigger === 'hard') worker.kill();
      stop?.('memory_limit');
    });
    const settled: Settled = reply.then(
      (value) => ({ kind: 'reply' as const, value }),
      (error: unknown) => ({ kind: 'failed' as const, error }),
    );
    try {
      const first = await Promise.race([settled, stopped.then((kind) => ({ kind: 'stop' as const, stop: kind }))]);
      if (first.kind === 'reply') {
        if (!first.value.ok && first.value.error.code === 'memory_limit' && this.memory.bounds) {
          // The worker's backstop turned an allocation into MemoryError: the operation already stopped.
          return await this.interrupt({ worker, id, settled, kind: 'memory_limit', epoch, options, finish, watch, trigger: 'allocation' });
        }
        const meta = finish();
        if (first.value.catalogRevision !== undefined) meta.catalogRevision = first.value.catalogRevision;
        withShared(meta, first.value);
        return first.value.ok ? { ok: true, result: first.value.result, meta } : { ok: false, error: first.value.error, meta };
      }
      if (first.kind === 'failed' && watch?.tripped !== 'hard') return await this.onRequestFailure(worker, first.error, finish);
      const kind = first.kind === 'stop' ? first.stop : 'memory_limit';
      return await this.interrupt({ worker, id, settled, kind, epoch, options, finish, watch });
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
    if (!this.pool.closing) await this.pool.replace(worker, 'crash');
    const namespace: NamespaceOutcome = this.pool.stateOverride === 'unavailable' ? 'unknown' : 'reset';
    this.pool.recordInterruption('crash', namespace);
    const meta = finish();
    meta.interruption = 'crash';
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
    const { worker, id, settled, kind, epoch, options, finish, watch, trigger } = stopped;
    const graceMs = options.graceMs ?? this.options.interruptionGraceMs;
    // A stop the worker reported itself (trigger 'allocation') needs no interrupt.
    if (trigger === undefined) {
      worker.interrupt(id, kind === 'memory_limit' ? 'memory_limit' : undefined);
      // One line per interrupt sent: a stop that meets another (a cancel at the deadline) must still send one.
      this.logger.debug('op.interrupt_sent', { kind, epoch, requestId: loggedRequestId(options.requestId) });
    }
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const late = await Promise.race([settled, graceOver]);
    clearTimeout(timer);
    let namespace: NamespaceOutcome;
    let afterBytes: number | undefined;
    const withdrawn = late !== 'grace' && late.kind === 'reply' && !late.value.ok && late.value.withdrawn === true;
    if (withdrawn && worker.alive) {
      // Withdrawn before it ran (it was waiting for a kernel busy with another client's cell): nothing to verify.
      namespace = 'preserved';
    } else if (late !== 'grace' && late.kind === 'reply' && worker.alive) {
      // A memory stop keeps the namespace only if memory fell back below the limit (the worker freed the stopped
      // code's frames before answering); otherwise the worker is replaced.
      afterBytes = kind === 'memory_limit' ? this.memory.current(worker) : undefined;
      const fellBack = kind !== 'memory_limit' || this.memory.belowLimit(worker);
      // The operation stopped; its late result is discarded. Probe health and reconcile before saying so.
      namespace = fellBack && (await this.verify(worker, graceMs)) && this.pool.epoch === epoch ? 'preserved' : 'unknown';
    } else {
      namespace = 'unknown';
    }
    if (namespace !== 'preserved') {
      worker.kill();
      if (!this.pool.closing) {
        await this.pool.replace(worker, kind);
        namespace = this.pool.stateOverride === 'unavailable' ? 'unknown' : 'reset';
      } else {
        namespace = 'reset';
      }
    }
    this.pool.recordInterruption(kind, namespace);
    const meta = finish();
    meta.interruption = kind;
    meta.namespace = namespace;
    if (late !== 'grace' && late.kind === 'reply') withShared(meta, late.value);
    const details = this.replacementDetails(namespace);
    if (kind === 'memory_limit' && this.memory.bounds) {
      const stop = { trigger: trigger ?? (watch?.tripped === 'hard' ? 'hard' : 'watch'), bounds: this.memory.bounds, watch, afterBytes } as const;
      const described = describeMemoryStop(stop, namespaceWording(namespace));
      return { ok: false, error: { code: 'memory_limit', message: described.message, details: { ...described.details, ...details } }, meta };
    }
    const failure = interruptionFailure(kind === 'memory_limit' ? 'cancelled' : kind, namespace, meta.shared);
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
