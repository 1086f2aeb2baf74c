import type { ErrorCode, Settings, ToolCall, WorkerEvent } from '@ipython-mcp/protocol';
import type { Logger } from './logger.js';
import type { ToolAnswer, WorkerHandle, WorkerReply, WorkerSpawnOptions } from './worker-process.js';
// For the TSDoc links only.
import type { ChannelWorker } from './channel-worker.js';
import type { WorkerProcess } from './worker-process.js';

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
  /**
   * Starts one worker (default: a {@link WorkerProcess}, a real Python process). A seam for tests and embedders: a
   * {@link ChannelWorker} over an in-memory channel runs the runtime without Python.
   */
  spawnWorker?: ((options: WorkerSpawnOptions) => WorkerHandle) | undefined;
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

/** The outcome of {@link Runtime.run}: it never throws. */
export type OperationOutcome =
  | { ok: true; result: Record<string, unknown>; meta: OperationMeta }
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
