import type { CodecName, StateReport, ToolCall, WorkerEvent } from '@ipython-mcp/protocol';
import type { OperationFailure, OtherClientAction, ToolAnswer } from './runtime-types.js';

// What the runtime needs of one worker, and the types of its answers: apart from any one implementation (the
// process in worker-process.ts, the channel worker in channel-worker.ts, an embedder's own).

/** What a successful handshake tells the parent. */
export interface WorkerInfo {
  pid: number;
  python: string;
  ipython: string;
  codec: CodecName;
  protectedNames: string[];
  startupMs: number;
  /** The restore of the namespace snapshot (`--state`), when this worker was told to restore one. */
  stateRestore?: StateReport | undefined;
  /**
   * Set by a backend whose new worker serves the very namespace the one it replaces served (a Jupyter kernel that
   * was attached to again, still the same process): the replacement keeps the epoch.
   */
  namespaceKept?: boolean | undefined;
}

/**
 * What a worker over a shared kernel (a Jupyter kernel other clients use too) says about who did what to a request:
 * absent from a local worker's replies.
 */
export interface SharedKernelFacts {
  /** Whether the request reached the kernel (false: withdrawn while it waited for another client's request). */
  ran: boolean;
  /** How long it waited, before it was sent or withdrawn, for the kernel busy with other clients' requests. */
  waitedMs: number;
  /** Whose request it waited behind last: a person's client, or another ipython-mcp's; null when it never waited. */
  behind: 'person' | 'agent' | null;
  /** Set when the kernel's other client (the person's stop button) interrupted it, and this worker sent no interrupt. */
  stoppedBy?: 'other_client' | undefined;
}

/**
 * A request's answer from the worker. `catalogRevision` is the worker's registry revision after the operation,
 * when the worker sent one (the shared wire contract: absent means "not known", never "unchanged").
 */
export type WorkerReply =
  | { ok: true; result: Record<string, unknown>; catalogRevision?: number | undefined; shared?: SharedKernelFacts | undefined }
  | {
      ok: false;
      error: OperationFailure;
      catalogRevision?: number | undefined;
      shared?: SharedKernelFacts | undefined;
      /**
       * Set when the worker withdrew the request before Python ever saw it (it was interrupted while it waited for
       * the worker to be free): nothing ran, so the namespace is as it was and needs no verification.
       */
      withdrawn?: true | undefined;
    };

/** Hooks for one in-flight request. */
export interface RequestHooks {
  onEvent?: ((event: WorkerEvent) => void) | undefined;
  onToolCall?: ((call: ToolCall) => void) | undefined;
  /**
   * The worker says the request's code has ended and it is finishing the answer (a Jupyter kernel's spill files
   * being fetched): `true` pauses the deadline, `false` resumes it. A stop meanwhile still reaches `interrupt`.
   */
  onPaused?: ((paused: boolean) => void) | undefined;
}

/**
 * What the runtime needs of one worker: a `WorkerProcess` (a real Python process), or a worker over any
 * `WorkerChannel` without a process (unit tests, embedders).
 */
export interface WorkerHandle {
  /** Resolves after the handshake; rejects with `WorkerStartupError`. */
  readonly ready: Promise<WorkerInfo>;
  /** Resolves when the worker has ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly pid: number | undefined;
  /** The pid the worker reported about itself, in its own pid namespace (differs from `pid` behind a launch wrapper); optional. */
  readonly reportedPid?: number | undefined;
  readonly alive: boolean;
  request(op: string, params: Record<string, unknown>, hooks?: RequestHooks): { id: number; reply: Promise<WorkerReply> };
  interrupt(id: number, reason?: 'memory_limit'): void;
  sendToolResult(callId: number, result: ToolAnswer): void;
  kill(): void;
  shutdown(graceMs: number): Promise<void>;
  setHeld(held: boolean): void;
  /** Called with each save of the namespace snapshot the worker reports (`--state`); optional for embedders. */
  onStateReport?: ((report: StateReport) => void) | undefined;
  /**
   * Optional check, before an operation is dispatched, that the worker still serves its namespace (a Jupyter kernel
   * another client restarted has lost it). A worker that finds it does not ends itself; the runtime then replaces it
   * before the operation is sent. A worker that cannot be reached for now but is not lost (a Jupyter kernel whose
   * server or proxy is away) resolves with the failure the call answers instead; nothing is sent. Resolves without
   * an answer rather than hang.
   */
  check?(): Promise<void | OperationFailure>;
  /**
   * Optional, for a worker over a shared kernel: who did what to request `id` however it ended, answered or not (the
   * kernel died or was restarted under it, its deadline passed while the kernel was stuck), so every outcome of a
   * request it was given carries the facts, not only an answered one. Undefined for an id it does not know.
   */
  sharedFacts?(id: number): SharedKernelFacts | undefined;
  /**
   * Optional, for a worker over a shared kernel: set once the worker ended because another client of the kernel
   * restarted or shut it down on purpose (not a failure of the worker), so the runtime names it `other_client`.
   */
  readonly endedByOtherClient?: OtherClientAction | undefined;
}
