import { DEFAULT_WORKER_LIMITS, type WorkerLimits } from '@ipython-mcp/protocol';
import type { Logger } from './logger.js';
import { defaultMemoryLimitMb, type MemoryProbe } from './memory-watch.js';
import type { AfterInterruptPolicy } from './runtime-types.js';
import type { WorkerLaunch } from './worker-launch.js';
import { localProcessBackend } from './local-process-backend.js';
import type { WorkerBackend } from './worker-backend.js';
// For the TSDoc links only.
import type { ChannelWorker } from './channel-worker.js';

/** What each worker is started with (the `configure` message); every field defaults. */
export interface WorkerConfiguration {
  /** Limits the worker enforces; each one left out takes its {@link DEFAULT_WORKER_LIMITS} value. */
  limits?: Partial<WorkerLimits> | undefined;
  /** Trusted library directories put in front of `sys.path`. */
  libraryPaths?: readonly string[] | undefined;
  /** Modules imported at worker start. */
  preloadModules?: readonly string[] | undefined;
  /** Module name → namespace alias, imported at worker start. */
  moduleAliases?: Readonly<Record<string, string>> | undefined;
}

/**
 * `--state FILE`: the namespace snapshot. The first worker of the runtime's lifespan restores it before `ready`
 * (its start-up bound grows by `saveTimeoutMs`, which also bounds the restore); a replacement or standby never
 * restores. The active worker saves it when the runtime closes (the shutdown grace grows by `saveTimeoutMs`).
 */
export interface StateOptions {
  /** The snapshot file. A server holding several named runtimes derives one per name: {@link statePathFor}. */
  path: string;
  /** Size cap of one snapshot, in bytes (names are saved smallest first until it). */
  maxBytes: number;
  /** Time cap of one save (and of the restore), in ms. */
  saveTimeoutMs: number;
}

/**
 * The snapshot file of the runtime named `name` when one server holds several: `name` goes before the
 * extension of `path` (`ns.state` → `ns.NAME.state`; `ns` → `ns.NAME`). The unnamed (default) runtime uses
 * `path` itself.
 */
export function statePathFor(path: string, name: string | undefined): string {
  if (name === undefined || name === '') return path;
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  // A dot that starts the base name (".state") is not an extension.
  if (dot <= slash + 1) return `${path}.${name}`;
  return `${path.slice(0, dot)}.${name}${path.slice(dot)}`;
}

/** Options of a `Runtime`. All durations are in milliseconds. */
export interface RuntimeOptions {
  /** Python interpreter for the workers. */
  python: string;
  /** What each worker is configured with: limits, library paths, preloads, aliases (defaults for what is left out). */
  worker?: WorkerConfiguration | undefined;
  /** Deadline of an operation from dispatch, in ms (default 30 000); a call may override it. */
  operationTimeoutMs?: number | undefined;
  /** Time a cooperative interruption gets before the worker is replaced, in ms (default 2 000). */
  interruptionGraceMs?: number | undefined;
  /** Bound on a worker's start-up (spawn → ready), in ms (default 10 000). */
  startupTimeoutMs?: number | undefined;
  /** Pending FIFO capacity, not counting the active operation (default 32). */
  maxPendingOperations?: number | undefined;
  /** Longest time an operation may wait for dispatch, in ms (default 30 000). */
  queueWaitTimeoutMs?: number | undefined;
  /**
   * The memory guard's limit in MiB for the worker and the processes it started; `null` is off (default: half of
   * the memory this process may use, {@link defaultMemoryLimitMb}).
   */
  memoryLimitMb?: number | null | undefined;
  /**
   * How the memory guard reads a worker's memory, and how often while an operation runs (default: the worker's
   * process tree from /proc, every 20 ms). A probe of its own (tests: a scripted size)
   * leaves out the allocation backstop, which only a real process has.
   */
  memoryProbe?: { read: MemoryProbe; intervalMs?: number | undefined } | undefined;
  /** `--state FILE`: save the namespace at close, restore it at start (default: none). */
  state?: StateOptions | undefined;
  /**
   * Bytes of spill files execute may keep (the whole text of truncated stdout/stderr, in a 0700 directory of this
   * runtime, removed when it closes); `null` or 0 is off (default: off; the server's default is 256 MiB).
   */
  outputSpillBytes?: number | null | undefined;
  /**
   * Where the spill directory is made (default: the system's temporary directory). An isolation engine whose workers
   * may write only in its own directory, and may not see this process's pid, passes that directory: the engine then
   * owns its clean-up after a SIGKILL of this process, and the worker is not asked to watch this pid for it.
   */
  outputSpillParent?: string | undefined;
  /** Tool names the worker must refuse for dynamic registrations (the stable tools). */
  reservedToolNames?: string[] | undefined;
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  logger?: Logger | undefined;
  /** Keep a started, configured spare worker for fast replacement (default true). */
  warmStandby?: boolean | undefined;
  /**
   * Wraps each worker's launch in an isolation engine (the opt-in sandbox). The runtime does not know which: it
   * only spawns what this returns.
   */
  launch?: WorkerLaunch | undefined;
  /** Send JSON frames even when msgpack is available. */
  forceJsonCodec?: boolean | undefined;
  /**
   * Let the workers keep Node's event loop alive only while an operation is admitted or the runtime closes
   * (default false: always). A library user that forgets `Runtime.close()` then does not hang its program;
   * the workers still exit with it (pipe EOF).
   */
  unrefWhenIdle?: boolean | undefined;
  /**
   * What must be re-read after a cooperative interruption, before the namespace is reported preserved (the
   * dynamic catalog's registry reconciliation). A policy object handed down, so the runtime never calls up into
   * the server.
   */
  afterInterrupt?: AfterInterruptPolicy | undefined;
  /**
   * Where the workers run (default: {@link localProcessBackend}, a real Python process each). The seam for other
   * homes of a namespace, tests and embedders: a backend whose workers are {@link ChannelWorker}s over in-memory
   * channels runs the runtime without Python. What the backend lacks (its capabilities) turns the memory guard
   * off, and makes `state` or `launch` a start-up failure.
   */
  backend?: WorkerBackend | undefined;
}

/** {@link RuntimeOptions} with every default filled in: all durations in ms. */
export interface ResolvedRuntimeOptions extends RuntimeOptions {
  backend: WorkerBackend;
  limits: WorkerLimits;
  libraryPaths: string[];
  preloadModules: string[];
  moduleAliases: Record<string, string>;
  operationTimeoutMs: number;
  interruptionGraceMs: number;
  startupTimeoutMs: number;
  maxPendingOperations: number;
  queueWaitTimeoutMs: number;
  memoryLimitMb: number | null;
}

/** The defaults of the runtime's own options (the server's settings default to the same values). */
export const RUNTIME_DEFAULTS = Object.freeze({
  operationTimeoutMs: 30_000,
  interruptionGraceMs: 2_000,
  startupTimeoutMs: 10_000,
  maxPendingOperations: 32,
  queueWaitTimeoutMs: 30_000,
});

/** Fills in every default, once. */
export function resolveRuntimeOptions(options: RuntimeOptions): ResolvedRuntimeOptions {
  const worker = options.worker ?? {};
  const backend = options.backend ?? localProcessBackend;
  return {
    ...options,
    backend,
    limits: { ...DEFAULT_WORKER_LIMITS, ...definedOnly(worker.limits ?? {}) },
    libraryPaths: [...(worker.libraryPaths ?? [])],
    preloadModules: [...(worker.preloadModules ?? [])],
    moduleAliases: { ...worker.moduleAliases },
    operationTimeoutMs: options.operationTimeoutMs ?? RUNTIME_DEFAULTS.operationTimeoutMs,
    interruptionGraceMs: options.interruptionGraceMs ?? RUNTIME_DEFAULTS.interruptionGraceMs,
    startupTimeoutMs: options.startupTimeoutMs ?? RUNTIME_DEFAULTS.startupTimeoutMs,
    maxPendingOperations: options.maxPendingOperations ?? RUNTIME_DEFAULTS.maxPendingOperations,
    queueWaitTimeoutMs: options.queueWaitTimeoutMs ?? RUNTIME_DEFAULTS.queueWaitTimeoutMs,
    memoryLimitMb: resolveMemoryLimit(backend, options.memoryLimitMb),
  };
}

/** A backend without a measurable local process cannot guard memory: the guard is off rather than blind. */
function resolveMemoryLimit(backend: WorkerBackend, limitMb: number | null | undefined): number | null {
  if (!backend.capabilities.has('memoryGuard')) return null;
  return limitMb === undefined ? defaultMemoryLimitMb() : limitMb;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, each]) => each !== undefined)) as Partial<T>;
}
