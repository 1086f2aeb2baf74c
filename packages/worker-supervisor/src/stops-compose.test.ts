// Every pair of stops of one operation composes (issue 51): the deadline, a cancel, a `job` stop (a cancel whose reason
// is the job tool's), the memory guard's limit and its hard margin, in any order and at any gap, zero included. Under
// fake timers the runtime's clock, the grace and the watch's reads happen at exact times, so a generated schedule is
// exactly what runs: one interrupt raised at most, one replacement at most, and one outcome naming the first stop and
// the memory guard when it took part (the kill, or memory that stayed above the limit, is what replaced the worker).
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChannelWorker } from './channel-worker.js';
import type { MemorySampler } from './memory-watch.js';
import { Runtime } from './runtime.js';
import type { InterruptionKind, OperationOutcome } from './runtime-types.js';
import { InMemoryChannel } from './worker-channel.js';

const MIB = 2 ** 20;
const LIMIT_MB = 100;
const LIMIT = LIMIT_MB * MIB;
/** limit + max(limit / 4, 64 MiB) */
const HARD = LIMIT + 64 * MIB;
const GRACE_MS = 40;
const WATCH_MS = 5;

/** One generated schedule: when each stop comes (ms from dispatch; null: never) and how the cell behaves. */
interface Schedule {
  deadlineMs: number;
  cancelMs: number | null;
  jobStop: boolean;
  /** When the runtime is closed under the operation (a shutdown stop). */
  shutdownMs: number | null;
  softMs: number | null;
  hardMs: number | null;
  /** How long the cell's clean-up takes after its KeyboardInterrupt; null: it ignores the interrupt. */
  cleanupMs: number | null;
  /** Whether what pushed memory over is freed by the worker's release (memory held by the stopped code only). */
  freeable: boolean;
}

type Message = Record<string, unknown> & { type: string };

/** The worker's end: a cell that runs until interrupted, then takes `cleanupMs`, as a real worker answers it. */
class FakeCell {
  readonly interrupts: Message[] = [];
  raised = 0;
  released = false;
  private active: number | undefined;
  private memoryReason = false;
  dispatchedAt: number | undefined;

  constructor(
    private readonly channel: InMemoryChannel,
    private readonly schedule: Schedule,
  ) {
    channel.onmessage = (raw) => this.onMessage(raw as Message);
  }

  private onMessage(message: Message): void {
    const id = message.id as number;
    if (message.type === 'shutdown') this.channel.close();
    if (message.type === 'request') {
      if (message.op !== 'execute' || (message.params as { code?: string }).code === 'fine') {
        this.channel.send({ type: 'response', id, ok: true, result: {} });
        return;
      }
      this.active = id;
      this.dispatchedAt = performance.now();
    }
    if (message.type !== 'interrupt' || message.id !== this.active) return;
    this.interrupts.push(message);
    if (message.reason === 'memory_limit') this.memoryReason = true;
    // As the worker's interrupter: one KeyboardInterrupt per request; a later memory note only changes the answer.
    if (this.raised++ > 0 || this.schedule.cleanupMs === null) return;
    setTimeout(() => {
      if (this.active !== id) return;
      this.active = undefined;
      if (this.memoryReason && this.schedule.freeable) this.released = true;
      const error = this.memoryReason ? { code: 'memory_limit', message: 'stopped by the memory guard', details: { trigger: 'watch' } } : { code: 'operation_cancelled', message: 'interrupted' };
      this.channel.send({ type: 'response', id, ok: false, error });
    }, this.schedule.cleanupMs);
  }

  /** The worker tree's size now, by the schedule. */
  bytes(): number {
    const at = this.dispatchedAt === undefined ? -1 : performance.now() - this.dispatchedAt;
    const { softMs, hardMs } = this.schedule;
    if (hardMs !== null && at >= hardMs) return HARD + MIB;
    if (this.released) return LIMIT / 2;
    if (softMs !== null && at >= softMs) return LIMIT + MIB;
    return LIMIT / 4;
  }
}

interface Run {
  outcome: OperationOutcome;
  cell: FakeCell;
  /** When each stop actually came, from dispatch (memory: the read that first saw the line crossed). */
  came: Partial<Record<'timeout' | 'cancelled' | 'shutdown' | 'memory_limit' | 'hard', number>>;
  workers: number;
  epoch: number;
  runtime: Runtime;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

async function play(schedule: Schedule): Promise<Run> {
  const cells: FakeCell[] = [];
  const came: Run['came'] = {};
  let probes = 0;
  const probe = (worker: unknown): MemorySampler => {
    const cell = cells[workers.indexOf(worker as ChannelWorker)];
    // The first sampler of the first worker is the operation's watch (nothing else reads memory before it); the
    // others are the fresh reads after a stop, which measure but trip nothing.
    const watching = cell === cells[0] && probes++ === 0;
    return {
      sample: () => {
        if (cell === undefined || cell !== cells[0] || cell.dispatchedAt === undefined) return LIMIT / 4;
        const bytes = cell.bytes();
        const at = performance.now() - cell.dispatchedAt;
        if (watching && bytes >= LIMIT && came.memory_limit === undefined) came.memory_limit = at;
        if (watching && bytes >= HARD && came.hard === undefined) came.hard = at;
        return bytes;
      },
    };
  };
  const workers: ChannelWorker[] = [];
  const runtime = new Runtime({
    python: 'unused',
    warmStandby: false,
    memoryLimitMb: LIMIT_MB,
    memoryProbe: { read: probe, intervalMs: WATCH_MS },
    operationTimeoutMs: schedule.deadlineMs,
    interruptionGraceMs: GRACE_MS,
    backend: {
      name: 'scripted',
      capabilities: new Set(['memoryGuard']),
      start: () => {
        const [near, far] = InMemoryChannel.createLinkedPair();
        cells.push(new FakeCell(far, schedule));
        const worker = new ChannelWorker(near);
        workers.push(worker);
        return worker;
      },
    },
  });
  runtime.start();
  const controller = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  /** Does `what` at `ms` from dispatch, once the request is dispatched (the fake cell notes it). */
  const at = (ms: number, what: (cell: FakeCell) => void): void => {
    const arm = (): void => {
      const cell = cells[0];
      if (cell?.dispatchedAt === undefined) {
        timers.push(setTimeout(arm, 0));
        return;
      }
      timers.push(setTimeout(() => what(cell), ms - (performance.now() - cell.dispatchedAt)));
    };
    arm();
  };
  const since = (cell: FakeCell): number => performance.now() - (cell.dispatchedAt ?? 0);
  if (schedule.cancelMs !== null) {
    at(schedule.cancelMs, (cell) => {
      came.cancelled = since(cell);
      controller.abort(schedule.jobStop ? new Error('stopped by the job tool') : undefined);
    });
  }
  if (schedule.shutdownMs !== null) {
    at(schedule.shutdownMs, (cell) => {
      came.shutdown = since(cell);
      void runtime.close();
    });
  }
  const pending = runtime.run('execute', { code: 'import time\ntime.sleep(10**6)' }, { signal: controller.signal });
  let outcome: OperationOutcome | undefined;
  void pending.then((value) => {
    outcome = value;
  });
  for (let spent = 0; outcome === undefined && spent < 10_000; spent += 1) await vi.advanceTimersByTimeAsync(1);
  if (outcome === undefined) throw new Error('no outcome');
  for (const timer of timers) clearTimeout(timer);
  came.timeout = schedule.deadlineMs;
  return { outcome, cell: cells[0] as FakeCell, came, workers: workers.length, epoch: runtime.epoch, runtime };
}

const schedules = fc.record<Schedule>({
  deadlineMs: fc.integer({ min: 10, max: 40 }),
  cancelMs: fc.option(fc.integer({ min: 0, max: 80 }), { nil: null }),
  jobStop: fc.boolean(),
  shutdownMs: fc.option(fc.integer({ min: 0, max: 80 }), { nil: null, freq: 4 }),
  softMs: fc.option(fc.integer({ min: 0, max: 80 }), { nil: null }),
  hardMs: fc.option(fc.integer({ min: 0, max: 80 }), { nil: null }),
  cleanupMs: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
  freeable: fc.boolean(),
});

describe('stops of one operation, in any order and at any gap', () => {
  it('compose: at most one interrupt raised, one replacement at most, one outcome naming the first stop and the memory guard', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const { outcome, cell, came, workers, epoch, runtime } = await play(schedule);
        try {
          expect(outcome.ok).toBe(false);
          if (outcome.ok) return;
          const kind = outcome.meta.interruption as InterruptionKind;
          // The first stop is the one named (ties: either of those that came at that instant).
          const firsts: Record<string, number> = {};
          if (came.timeout !== undefined) firsts.timeout = came.timeout;
          if (came.cancelled !== undefined) firsts.cancelled = came.cancelled;
          if (came.shutdown !== undefined) firsts.shutdown = came.shutdown;
          if (came.memory_limit !== undefined) firsts.memory_limit = came.memory_limit;
          const earliest = Math.min(...Object.values(firsts));
          const candidates = Object.keys(firsts).filter((name) => (firsts[name] ?? Infinity) <= earliest);
          expect(candidates).toContain(kind);
          // One interrupt raised; a second frame only ever notes a memory stop after a plain one.
          expect(cell.interrupts.length).toBeLessThanOrEqual(2);
          if (cell.interrupts.length === 2) {
            expect(cell.interrupts[0]?.reason).toBeUndefined();
            expect(cell.interrupts[1]?.reason).toBe('memory_limit');
          }
          // One replacement at most, and the epoch says whether it happened (none once the runtime is closing).
          const reset = outcome.meta.namespace === 'reset';
          const closing = came.shutdown !== undefined;
          expect(workers).toBeLessThanOrEqual(2);
          if (!closing) {
            expect(workers).toBe(reset ? 2 : 1);
            expect(epoch).toBe(reset ? 2 : 1);
            expect(outcome.meta.epoch).toBe(epoch);
          }
          const killed = came.hard !== undefined && cell.dispatchedAt !== undefined && came.hard <= (outcome.meta.durationMs + 1);
          const memoryTookPart = came.memory_limit !== undefined && came.memory_limit <= outcome.meta.durationMs + 1;
          if (killed) expect(outcome.meta.namespace).toBe('reset');
          if (kind === 'memory_limit') {
            expect(outcome.error.code).toBe('memory_limit');
            expect(outcome.error.message).toContain(`memory limit (${LIMIT_MB} MB)`);
          } else {
            expect(outcome.error.code).toBe({ timeout: 'operation_timeout', cancelled: 'operation_cancelled', shutdown: 'runtime_closed' }[kind as string]);
            expect(outcome.error.message).toMatch({ timeout: /^the operation passed its deadline/, cancelled: /^the operation was cancelled/, shutdown: /^the operation was stopped by shutdown/ }[kind as string] ?? /^$/);
            const memory = (outcome.error.details as { memory?: Record<string, unknown> } | undefined)?.memory;
            if (memoryTookPart) {
              // The memory guard tripped during this stop's grace: the outcome says so, with the limit and the peak.
              expect(outcome.error.message).toContain('while it was being stopped');
              expect(memory).toMatchObject({ limit_mb: LIMIT_MB });
              expect(memory?.peak_mb).toBeGreaterThanOrEqual(LIMIT_MB);
              if (killed) {
                expect(memory).toMatchObject({ trigger: 'hard', replaced_worker: true });
                expect(outcome.error.message).toContain('was killed');
              }
              if (outcome.meta.namespace === 'preserved') expect(memory?.replaced_worker).toBe(false);
            } else {
              expect(memory).toBeUndefined();
            }
          }
          // Memory that went over and was not freed never leaves a preserved namespace behind.
          if (memoryTookPart && !cell.released) expect(outcome.meta.namespace).not.toBe('preserved');
          if (closing) return;
          expect(runtime.status().lastInterruption).toEqual({ kind, namespace: outcome.meta.namespace, epoch });
          // The runtime keeps answering.
          const next = runtime.run('execute', { code: 'fine' });
          let answered: OperationOutcome | undefined;
          void next.then((value) => {
            answered = value;
          });
          for (let spent = 0; answered === undefined && spent < 1000; spent += 1) await vi.advanceTimersByTimeAsync(1);
          expect(answered?.ok).toBe(true);
        } finally {
          const closed = runtime.close();
          for (let spent = 0; spent < 100; spent += 5) await vi.advanceTimersByTimeAsync(5);
          await closed;
        }
      }),
      {
        numRuns: 300,
        // Found by the property: the hard line reached only by the fresh read after the cell answered (memory kept
        // the worker from being kept; nothing killed it).
        examples: [[{ deadlineMs: 33, cancelMs: null, jobStop: false, shutdownMs: null, softMs: 31, hardMs: 71, cleanupMs: 38, freeable: false }]],
      },
    );
  }, 120_000);
});

/**
 * Where the guard runs beside the worker (a Jupyter kernel's machine guard; the runtime measures nothing), only the
 * worker's answer says what memory did: `after_interrupt` when the limit was crossed after this stop's interrupt,
 * absent when the guard had stopped the cell first and this stop landed during that stop's grace.
 */
describe('a guard beside the worker, as its answer tells it', () => {
  async function answered(details: Record<string, unknown>): Promise<OperationOutcome> {
    const runtime = new Runtime({
      python: 'unused',
      warmStandby: false,
      operationTimeoutMs: 20,
      interruptionGraceMs: 200,
      backend: {
        name: 'scripted',
        capabilities: new Set(),
        start: () => {
          const [near, far] = InMemoryChannel.createLinkedPair();
          far.onmessage = (raw) => {
            const message = raw as Message;
            if (message.type === 'request' && message.op === 'health') far.send({ type: 'response', id: message.id, ok: true, result: {} });
            if (message.type === 'interrupt') far.send({ type: 'response', id: message.id, ok: false, error: { code: 'memory_limit', message: 'stopped by the memory guard', details } });
            if (message.type === 'shutdown') far.close();
          };
          return new ChannelWorker(near);
        },
      },
    });
    runtime.start();
    const pending = runtime.run('execute', { code: 'import time\ntime.sleep(10**6)' });
    let outcome: OperationOutcome | undefined;
    void pending.then((value) => {
      outcome = value;
    });
    for (let spent = 0; outcome === undefined && spent < 1000; spent += 1) await vi.advanceTimersByTimeAsync(1);
    const closed = runtime.close();
    await vi.advanceTimersByTimeAsync(100);
    await closed;
    if (outcome === undefined) throw new Error('no outcome');
    return outcome;
  }

  it('the limit crossed after the deadline: the deadline first, then memory, the namespace kept', async () => {
    const outcome = await answered({ trigger: 'watch', after_interrupt: true, limit_mb: 400 });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.meta).toMatchObject({ interruption: 'timeout', namespace: 'preserved', epoch: 1 });
    expect(outcome.error.code).toBe('operation_timeout');
    expect(outcome.error.message).toBe('the operation passed its deadline; then, while it was being stopped, it grew past the memory limit (400 MB); state was preserved');
    expect(outcome.error.details).toEqual({ memory: { trigger: 'watch', limit_mb: 400, peak_mb: null, memory_mb_after: null, replaced_worker: false } });
  });

  it('the guard stopped the cell first and the deadline landed in its grace: memory is the first cause', async () => {
    const outcome = await answered({ trigger: 'watch', limit_mb: 400 });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.meta).toMatchObject({ interruption: 'memory_limit', namespace: 'preserved', epoch: 1 });
    expect(outcome.error.code).toBe('memory_limit');
    expect(outcome.error.message).toBe('the operation grew past the memory limit (400 MB) and was stopped; state was preserved');
  });
});
