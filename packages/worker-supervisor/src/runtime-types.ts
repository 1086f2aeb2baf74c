import type { ErrorCode, StateReport, ToolCall, WorkerEvent } from '@ipython-mcp/protocol';

/** Control-plane state, as runtime_status reports it. */
export type RuntimeState = 'starting' | 'ready' | 'busy' | 'recovering' | 'unavailable' | 'closed';
/**
 * Why an operation stopped early, or a worker was replaced. `other_client`: another client of a shared kernel ended
 * the kernel process on purpose (the person's Restart Kernel or Shut Down in Jupyter, a REST restart or delete), which
 * is not the worker's failure (`crash`).
 */
export type InterruptionKind = 'timeout' | 'cancelled' | 'crash' | 'shutdown' | 'memory_limit' | 'other_client';

/** What another client of a shared kernel did to it: restarted it, or shut it down (`other_client`). */
export type OtherClientAction = 'restart' | 'shutdown';
/** What became of the namespace after an interruption. */
export type NamespaceOutcome = 'preserved' | 'reset' | 'unknown';

/**
 * A step of the verification after a cooperative interruption: when {@link needed}, the runtime runs the read-only
 * `operation` on the same worker (within the verification bound) and hands its result to {@link accept}. A failed
 * operation, a throw or `false` makes the namespace `unknown`: the worker is replaced.
 */
export interface AfterInterruptPolicy {
  /** The worker operation to run (read-only, e.g. `discover`). */
  readonly operation: string;
  /** Its parameters, read when it runs. */
  params(): Record<string, unknown>;
  /** Whether the step must run now. */
  needed(): boolean;
  /** Takes the operation's result; false when it is unusable. */
  accept(result: Record<string, unknown>, epoch: number): boolean;
}

/** The answer to a nested tool call: the value as JSON text for Python (`toPythonJson`), or a failure message. */
export type ToolAnswer = { ok: true; valueJson: string } | { ok: false; message: string };

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
  /** The worker registry's revision after the operation, when the worker sent one (`catalog_revision`). */
  catalogRevision?: number | undefined;
  /**
   * On a kernel other clients share (a Jupyter kernel), who did what: whether the operation reached the kernel, how
   * long and behind whom it waited for it, and whether another client stopped it. Absent on a local worker.
   */
  shared?: { ran: boolean; waitedMs: number; behind: 'person' | 'agent' | null; stoppedBy: 'other_client' | null } | undefined;
  /**
   * Set when the epoch the operation ran in began because another client of a shared kernel restarted or shut down
   * the kernel (the person's Restart Kernel), so the answer that first shows the new epoch says who ended the old one.
   */
  epochReason?: { kind: 'other_client'; action: OtherClientAction } | undefined;
}

/** A structured failure of an operation. */
export interface OperationFailure {
  code: ErrorCode;
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
  lastInterruption: { kind: InterruptionKind; namespace: NamespaceOutcome; epoch: number; action?: OtherClientAction | undefined } | null;
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
  /** `--state FILE`: the snapshot file, its first worker's restore and the latest save; null without `--state`. */
  snapshot: { file: string; lastRestore: StateReport | null; lastSave: StateReport | null } | null;
  /**
   * The operation running now: ms since its dispatch, and its deadline in ms from dispatch (`null`: none; Code Mode
   * moves it later by the time spent in nested tool calls). `null` while nothing runs.
   */
  activeOperation: { elapsedMs: number; deadlineMs: number | null } | null;
}

/** Why the namespace was replaced. */
export interface EpochChange {
  epoch: number;
  reason: InterruptionKind | 'reset';
}
