import { totalmem } from 'node:os';
import { Alarm, type AlarmClock, runtimeClock } from './alarm-clock.js';
import { ProcessTreeMemory, procAvailable } from './process-tree-memory.js';

const MIB = 2 ** 20;
const GIB = 2 ** 30;
/** How often a running operation's memory is read: at ~1.5 GB/s of page faults, ~30 MB between two reads. */
export const MEMORY_WATCH_INTERVAL_MS = 20;
/** The share of physical memory the memory guard allows by default. */
export const DEFAULT_MEMORY_SHARE = 0.5;
/** The largest memory limit accepted, in MiB (1 PiB): far past any machine, and exact as bytes. */
export const MAX_MEMORY_LIMIT_MB = 1024 ** 3;

/**
 * The default memory limit: half of the memory this process may use, in MiB. That is physical memory, or a smaller
 * cgroup limit (a container's `--memory`) where Node reports one.
 */
export function defaultMemoryLimitMb(): number {
  let bytes = totalmem();
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  if (typeof constrained === 'number' && constrained > 0 && constrained < bytes) bytes = constrained;
  return Math.max(1, Math.floor((bytes * DEFAULT_MEMORY_SHARE) / 2 ** 20));
}

/** The memory guard's three lines, in bytes. */
export interface MemoryBounds {
  /** The limit: an operation that grows past it is interrupted. */
  limitBytes: number;
  /** The hard margin: past it the worker is killed at once and replaced (limit + max(limit / 4, 64 MiB)). */
  hardBytes: number;
  /**
   * The worker's soft RLIMIT_DATA, the allocation backstop: max(2 × limit, limit + 1 GiB). RLIMIT_DATA counts
   * virtual writable memory (8 MiB per thread stack, untouched pages of zeroed arrays), so it sits well above the
   * limit and only turns allocations far past the limit into MemoryError.
   */
  backstopBytes: number;
}

/** The bounds for a limit in MiB; undefined when the guard is off (`null`). */
export function memoryBounds(limitMb: number | null): MemoryBounds | undefined {
  if (limitMb === null) return undefined;
  const limitBytes = limitMb * MIB;
  return {
    limitBytes,
    hardBytes: limitBytes + Math.max(Math.floor(limitBytes / 4), 64 * MIB),
    backstopBytes: Math.max(2 * limitBytes, limitBytes + GIB),
  };
}

/** Why the guard stopped an operation. */
export type MemoryTrigger = 'watch' | 'hard' | 'allocation';

/** Where the process being watched can be found (a WorkerProcess). */
export interface WatchedProcess {
  readonly pid: number | undefined;
  readonly alive: boolean;
  /**
   * The pid the worker reported about itself once started: its number in its own pid namespace, which differs from
   * `pid` when a launch wrapper (the sandbox engine) stands between them. Undefined: `pid` is the worker.
   */
  readonly reportedPid?: number | undefined;
  /** Settles when the process has exited: its open /proc files are closed then. */
  readonly exited?: Promise<unknown> | undefined;
}

/** What the guard reads: the resident bytes of a worker's tree (`discover`: look for new descendants too). */
export interface MemorySampler {
  /** Bytes now; undefined when the tree is gone (the watch then stops). */
  sample(discover: boolean): number | undefined;
}

/**
 * Where a runtime reads its workers' memory: by default a {@link ProcessTreeMemory} over /proc. Tests (and an
 * embedder whose workers are measured some other way) pass their own; undefined: the worker is not measurable.
 */
export type MemoryProbe = (worker: WatchedProcess) => MemorySampler | undefined;

/** Bytes to MiB, rounded, for the control-plane numbers. */
export function toMb(bytes: number | undefined | null): number | null {
  return bytes === undefined || bytes === null ? null : Math.round(bytes / MIB);
}

/**
 * The memory of one running operation, read from dispatch to its answer: the first read at once (the baseline, the
 * root's and the known descendants' resident counts without a /proc scan: a few µs), then every
 * {@link MEMORY_WATCH_INTERVAL_MS} on an {@link Alarm} of the runtimes' shared clock, so an operation shorter than
 * that touches no timer (a timeout of its own, with the wake-ups it caused, cost more than the read). It calls
 * `onTrip('watch')` once when the tree grows past
 * the limit and `onTrip('hard')` once past the hard margin. An operation that starts above the limit (memory that
 * grew between operations) is not stopped for what it started with: only growth past max(hard, baseline + margin)
 * stops it, so `del big` and other light work still run.
 */
export class OperationMemoryWatch {
  /** Highest tree size seen. */
  peakBytes = 0;
  /** The first read, at dispatch. */
  baselineBytes: number | undefined;
  /** The first line crossed, if any. */
  tripped: 'watch' | 'hard' | undefined;
  /** When the limit was first seen crossed (performance.now()). */
  crossedAt: number | undefined;
  /** The size at that read. */
  crossedBytes: number | undefined;

  private readonly tree: MemorySampler;
  private readonly bounds: MemoryBounds;
  private readonly onTrip: (trigger: 'watch' | 'hard') => void;
  private hardLine: number;
  private startedAbove = false;
  private readonly alarm: Alarm;
  private stopped = false;

  constructor(
    tree: MemorySampler,
    bounds: MemoryBounds,
    onTrip: (trigger: 'watch' | 'hard') => void,
    private readonly intervalMs = MEMORY_WATCH_INTERVAL_MS,
    private readonly clock: AlarmClock = runtimeClock,
  ) {
    this.tree = tree;
    this.bounds = bounds;
    this.onTrip = onTrip;
    this.hardLine = bounds.hardBytes;
    // Not held: a watch alone never keeps the process alive.
    this.alarm = new Alarm(() => this.ring(), false);
    this.tick(false);
    this.scheduleNext();
  }

  /** Whether the operation started with the tree already above the limit. */
  get startedAboveLimit(): boolean {
    return this.startedAbove;
  }

  /** Ends the watch (idempotent). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.clock.cancel(this.alarm);
  }

  private ring(): void {
    this.tick(true);
    this.scheduleNext();
  }

  /** The next read, one interval from now, unless the watch has stopped (or the root is gone). */
  private scheduleNext(): void {
    if (!this.stopped) this.clock.set(this.alarm, performance.now() + this.intervalMs);
  }

  private tick(discover: boolean): void {
    if (this.stopped) return;
    const bytes = this.tree.sample(discover);
    if (bytes === undefined) {
      this.stop();
      return;
    }
    if (bytes > this.peakBytes) this.peakBytes = bytes;
    const { limitBytes, hardBytes } = this.bounds;
    if (this.baselineBytes === undefined) {
      this.baselineBytes = bytes;
      this.startedAbove = bytes >= limitBytes;
      if (this.startedAbove) this.hardLine = Math.max(hardBytes, bytes + (hardBytes - limitBytes));
    }
    if (bytes >= this.hardLine && this.tripped !== 'hard') {
      this.mark(bytes);
      this.tripped = 'hard';
      this.onTrip('hard');
    } else if (!this.startedAbove && bytes >= limitBytes && this.tripped === undefined) {
      this.mark(bytes);
      this.tripped = 'watch';
      this.onTrip('watch');
    }
  }

  private mark(bytes: number): void {
    if (this.crossedAt !== undefined) return;
    this.crossedAt = performance.now();
    this.crossedBytes = bytes;
  }
}

/**
 * The memory guard of one runtime: its bounds (undefined when off), one {@link ProcessTreeMemory} per live worker,
 * a watch per operation, and the current figure for runtime_status (reported even with the guard off).
 */
export class WorkerMemory {
  /** The guard's bounds; undefined when it is off. */
  readonly bounds: MemoryBounds | undefined;
  /**
   * The RLIMIT_DATA backstop to configure workers with: only where the watch works too (Linux /proc), so the
   * guard is either whole or absent.
   */
  readonly backstopBytes: number | undefined;
  private readonly trees = new Map<WatchedProcess, ProcessTreeMemory>();

  /**
   * @param probe reads a worker's memory some other way than /proc (tests): the backstop is then not configured.
   * @param intervalMs how often a running operation's memory is read.
   */
  constructor(
    limitMb: number | null,
    private readonly probe?: MemoryProbe | undefined,
    private readonly intervalMs = MEMORY_WATCH_INTERVAL_MS,
  ) {
    this.bounds = memoryBounds(limitMb);
    this.backstopBytes = this.bounds !== undefined && probe === undefined && procAvailable() ? this.bounds.backstopBytes : undefined;
  }

  /** Starts watching one operation on `worker`; undefined when the guard is off or /proc cannot be read. */
  watch(worker: WatchedProcess, onTrip: (trigger: 'watch' | 'hard') => void): OperationMemoryWatch | undefined {
    if (this.bounds === undefined) return undefined;
    const tree = this.treeOf(worker);
    return tree === undefined ? undefined : new OperationMemoryWatch(tree, this.bounds, onTrip, this.intervalMs);
  }

  /** Bytes resident in the worker's tree now; undefined when it is not running or not measurable. */
  current(worker: WatchedProcess | undefined): number | undefined {
    if (worker === undefined) return undefined;
    return this.treeOf(worker)?.sample(true);
  }

  /** Whether the worker's tree is back below the limit (a fresh read, descendants included). */
  belowLimit(worker: WatchedProcess): boolean {
    const bytes = this.current(worker);
    return this.bounds !== undefined && bytes !== undefined && bytes < this.bounds.limitBytes;
  }

  private treeOf(worker: WatchedProcess): MemorySampler | undefined {
    if (this.probe !== undefined) return worker.alive ? this.probe(worker) : undefined;
    for (const [known, tree] of this.trees) {
      if (!known.alive || !tree.open) {
        tree.close();
        this.trees.delete(known);
      }
    }
    if (!worker.alive || worker.pid === undefined) return undefined;
    let tree = this.trees.get(worker);
    if (tree === undefined) {
      const created = new ProcessTreeMemory(worker.pid, worker.reportedPid);
      if (!created.open) return undefined;
      this.trees.set(worker, created);
      void worker.exited?.then(() => {
        created.close();
        if (this.trees.get(worker) === created) this.trees.delete(worker);
      });
      tree = created;
    }
    return tree;
  }
}

/** Facts of one memory stop, for the operation's error. */
export interface MemoryStop {
  trigger: MemoryTrigger;
  bounds: MemoryBounds | undefined;
  watch: OperationMemoryWatch | undefined;
  /** The tree after the operation stopped, when it was measured. */
  afterBytes: number | undefined;
  /** The limit in MiB when the guard is not this process's (a kernel's machine guard reports it); else from `bounds`. */
  limitMb?: number | undefined;
}

/**
 * The memory_limit error's message and control-plane details (no values). `after`: another stop (a deadline, a
 * cancel) came first and the guard tripped during its grace; the words then say it happened while the operation was
 * being stopped, as the second half of that stop's message.
 */
export function describeMemoryStop(stop: MemoryStop, outcome: string, after = false): { message: string; details: Record<string, unknown> } {
  const limitMb = stop.bounds === undefined ? (stop.limitMb ?? null) : toMb(stop.bounds.limitBytes);
  const peakMb = stop.watch && stop.watch.peakBytes > 0 ? toMb(stop.watch.peakBytes) : null;
  const limit = limitMb === null ? 'the memory limit' : `the memory limit (${limitMb} MB)`;
  const peak = peakMb === null ? '' : ` (peak ${peakMb} MB)`;
  const hard = stop.bounds === undefined ? '' : ` (${toMb(stop.bounds.hardBytes)} MB)`;
  const how =
    stop.trigger === 'allocation'
      ? `an allocation failed under the memory limit's backstop${limitMb === null ? '' : ` (limit ${limitMb} MB)`}`
      : stop.trigger === 'hard'
        ? `the worker passed ${limit} by more than its hard margin${hard} and was killed${peak}`
        : after
          ? `it grew past ${limit}${peak}`
          : `the operation grew past ${limit} and was stopped${peak}`;
  return {
    message: `${after ? `then, while it was being stopped, ${how}` : how}; ${outcome}`,
    details: {
      trigger: stop.trigger,
      limit_mb: limitMb,
      peak_mb: peakMb,
      memory_mb_after: toMb(stop.afterBytes),
    },
  };
}
