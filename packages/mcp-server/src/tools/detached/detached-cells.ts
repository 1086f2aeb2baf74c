import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { WorkerEvent } from '@ipython-mcp/protocol';
import type { OperationFailure } from '@ipython-mcp/worker-supervisor';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { hasOwnArgument, takeSeconds, withArgument } from '../call-deadline.js';

/**
 * Detached cells: a call (`execute`, `call_function` or a dynamic tool) that asks for `detach_after_seconds` and is
 * still running then returns a handle (`status: "running"`, `job`, the output so far) instead of its result, and the
 * call goes on in the worker, in its place in the queue. The `job` tool looks at it, waits for it (and then returns
 * the whole result, exactly as the call would have), or stops it (an interrupt: the namespace is kept). A finished
 * result is kept until it is read, within a count and a byte bound; one dropped to stay within them says so when
 * asked for.
 */

/** The argument's name. */
export const DETACH_ARGUMENT = 'detach_after_seconds';

/**
 * The JSON Schema of the argument. No description (execute's says what it does) and no maximum: the tool list goes
 * out with every model request, and a value past the deadline's bound is refused with an error that names it.
 */
export function detachProperty(): Record<string, unknown> {
  return { type: 'number', exclusiveMinimum: 0 };
}

/**
 * A dynamic tool's `inputSchema` with the `detach_after_seconds` property added. A function with a parameter of that
 * name keeps it: the argument is the function's, and that tool does not detach (as with `timeout_seconds`).
 */
export function withDetachProperty(schema: Tool['inputSchema']): Tool['inputSchema'] {
  return withArgument(schema, DETACH_ARGUMENT, detachProperty());
}

/** Whether a dynamic tool's own schema has a `detach_after_seconds` parameter (then the tool does not detach). */
export function takesOwnDetach(schema: { properties?: unknown }): boolean {
  return hasOwnArgument(schema, DETACH_ARGUMENT);
}

/** What {@link takeDetach} found: the other arguments and when to detach (ms), or the problem. */
export type TakenDetach =
  | { ok: true; args: Record<string, unknown>; detachMs: number | undefined }
  | { ok: false; message: string; details: Record<string, unknown> };

/** Takes `detach_after_seconds` out of `args` and checks it: a finite number above 0 and at most `maxSeconds`. */
export function takeDetach(args: Record<string, unknown>, maxSeconds: number): TakenDetach {
  const taken = takeSeconds(args, DETACH_ARGUMENT, maxSeconds);
  return taken.ok ? { ok: true, args: taken.args, detachMs: taken.ms } : taken;
}

/** Characters of each stream a look at a running cell shows: its end, where the latest lines are. */
export const TAIL_CHARS = 2000;

/** The last {@link TAIL_CHARS} characters of a running cell's stdout and stderr, and how many came before them. */
export class OutputTail {
  private readonly text = { stdout: '', stderr: '' };
  private readonly dropped = { stdout: 0, stderr: 0 };

  add(event: Pick<WorkerEvent, 'kind' | 'text'>): void {
    const joined = this.text[event.kind] + event.text;
    const cut = Math.max(0, joined.length - TAIL_CHARS);
    this.dropped[event.kind] += cut;
    this.text[event.kind] = joined.slice(cut);
  }

  /** The tail as execute's fields: `stdout`/`stderr`, with `*_omitted_chars` when the start was left out. */
  fields(): Record<string, unknown> {
    const fields: Record<string, unknown> = {};
    for (const kind of ['stdout', 'stderr'] as const) {
      if (this.text[kind].length > 0) fields[kind] = this.text[kind];
      if (this.dropped[kind] > 0) fields[`${kind}_omitted_chars`] = this.dropped[kind];
    }
    return fields;
  }
}

/** Who stopped a detached cell: the client cancelling the request that started it, the `job` tool, or `tasks/cancel`. */
export type StopCause = 'client' | 'job' | 'task';

/**
 * The reason a detached cell's own signal is aborted with: who stopped it, in words a result and a task's status
 * put first (`cancelled by the client (request 7)`). A cancelled call's failure says it (see {@link withStopCause}).
 */
export class CellStop extends Error {
  constructor(
    readonly by: StopCause,
    message: string,
  ) {
    super(message);
    this.name = 'CellStop';
  }

  /** The client cancelled request `requestId` (`notifications/cancelled`, its HTTP stream closed): its `reason`, bounded, if it gave one. */
  static byClient(requestId: string | number, reason?: unknown): CellStop {
    const id = typeof requestId === 'string' ? JSON.stringify(requestId.slice(0, 64)) : String(requestId);
    const why = typeof reason === 'string' && reason.trim().length > 0 ? `: ${reason.trim().slice(0, 200)}` : '';
    return new CellStop('client', `cancelled by the client (request ${id}${why})`);
  }

  static byJobTool(): CellStop {
    return new CellStop('job', 'stopped by the job tool');
  }

  static byTaskCancel(): CellStop {
    return new CellStop('task', 'cancelled by tasks/cancel');
  }
}

/** Who stopped the call whose signal this is, when a {@link CellStop} did. */
export function stopCauseOf(signal: AbortSignal | undefined): CellStop | undefined {
  const reason = signal?.aborted === true ? (signal.reason as unknown) : undefined;
  return reason instanceof CellStop ? reason : undefined;
}

/** Who stopped a detached cell, in the words a task's status message begins with (`cancelled` when not known). */
export function stoppedBy(signal: AbortSignal): string {
  return stopCauseOf(signal)?.message ?? 'cancelled';
}

/**
 * A cancelled call's failure (`operation_cancelled`: interrupted, or dropped from the queue) with who stopped it put
 * first in its message and in `details.stopped_by`; any other failure as it was.
 */
export function withStopCause(failure: OperationFailure, stop: CellStop | undefined): OperationFailure {
  if (stop === undefined || failure.code !== 'operation_cancelled') return failure;
  return { ...failure, message: `${stop.message}: ${failure.message}`, details: { ...failure.details, stopped_by: stop.by } };
}

/** The bounds on finished results kept unread. */
export interface DetachedLimits {
  /** Finished, unread results kept at most; the oldest goes first. */
  maxResults: number;
  /** Their JSON size together, at most. */
  maxBytes: number;
}

export const DEFAULT_DETACHED_LIMITS: DetachedLimits = Object.freeze({ maxResults: 32, maxBytes: 32 * 1024 * 1024 });

/** The wait a look suggests when the call's detach time is not known: below the common client timeouts. */
const SUGGESTED_WAIT_SECONDS = 30;

/** Handles a namespace remembers after their results were read or dropped, to say which (older ones are unknown). */
const REMEMBERED_ENDS = 1024;

type Ending = 'read' | 'dropped';

interface Job {
  readonly id: string;
  readonly startedAt: number;
  readonly tail: OutputTail;
  readonly stop: AbortController;
  /** The wait a look suggests: the call's own detach time, which its caller chose below its client's timeout. */
  readonly waitSeconds: number;
  /** Settles with the call's result (a failure result included); never rejects. */
  readonly done: Promise<CallToolResult>;
  result?: CallToolResult;
  /** When the call settled (performance.now()). */
  endedAt?: number;
  bytes: number;
}

/** A detached call as {@link DetachedCells.peek} shows it, without reading its result. */
export type DetachedJob = Readonly<Pick<Job, 'id' | 'startedAt' | 'stop' | 'done' | 'result' | 'endedAt'>>;

/** What `job` was asked: a handle, how long to wait for the end (0: just look), and whether to stop the cell. */
export interface JobRequest {
  job: string;
  wait_seconds?: number | undefined;
  stop?: boolean | undefined;
}

/** The answer to a `job` call: the finished call's own result, a look at the running cell, or a refusal. */
export type JobAnswer = { kind: 'result'; result: CallToolResult } | { kind: 'running'; structured: Record<string, unknown>; text: string } | { kind: 'refused'; failure: OperationFailure };

/** A handle: the namespace's name, the epoch the cell started in and a sequence number (`default-1-7`). */
const HANDLE = /^([a-z0-9-]{1,32})-(\d{1,9})-(\d{1,9})$/;

/**
 * The detached cells of one namespace. Every handle names its namespace and the epoch its cell started in, so a
 * handle from elsewhere gets an answer that says so.
 */
export class DetachedCells {
  private readonly jobs = new Map<string, Job>();
  private readonly ended = new Map<string, Ending>();
  private sequence = 0;

  constructor(
    private readonly namespace: string,
    private readonly limits: DetachedLimits = DEFAULT_DETACHED_LIMITS,
  ) {}

  /** Running and finished-unread cells. */
  get size(): number {
    return this.jobs.size;
  }

  /** Takes over a call that is still running at its detach time (`detachSeconds`); returns its handle. */
  adopt(options: { epoch: number; startedAt: number; tail: OutputTail; stop: AbortController; running: Promise<CallToolResult>; detachSeconds?: number }): string {
    this.sequence += 1;
    const id = `${this.namespace}-${options.epoch}-${this.sequence}`;
    const done = options.running.then(
      (result) => result,
      (error: unknown): CallToolResult => ({
        isError: true,
        content: [{ type: 'text', text: `internal_error: the detached call failed: ${error instanceof Error ? error.name : 'unknown error'}` }],
      }),
    );
    const waitSeconds = options.detachSeconds ?? SUGGESTED_WAIT_SECONDS;
    const job: Job = { id, startedAt: options.startedAt, tail: options.tail, stop: options.stop, waitSeconds, done, bytes: 0 };
    this.jobs.set(id, job);
    void done.then((result) => {
      job.result = result;
      job.endedAt = performance.now();
      job.bytes = Buffer.byteLength(JSON.stringify(result));
      this.keepWithinBounds();
    });
    return id;
  }

  /**
   * A look at a running cell, in execute's fields. `next` says in one sentence what to call, with a wait no longer
   * than the detach the caller chose: Codex and Claude Code hand a model the structured content of a success, not
   * the text block, so the sentence is in both.
   */
  running(id: string): { structured: Record<string, unknown>; text: string } {
    const job = this.jobs.get(id) as Job;
    const elapsed = Math.round((performance.now() - job.startedAt) / 100) / 10;
    const next =
      `call the job tool with {"job": ${JSON.stringify(id)}, "wait_seconds": ${job.waitSeconds}} for its result, ` +
      'or with "stop": true to interrupt it (the namespace is kept)';
    const structured: Record<string, unknown> = { status: 'running', job: id, elapsed_s: elapsed, next, ...job.tail.fields() };
    const tail = [structured.stdout, structured.stderr].filter((part): part is string => typeof part === 'string' && part.length > 0).join('\n');
    const text = `Still running after ${elapsed} s (job ${JSON.stringify(id)}): ${next}.${tail.length > 0 ? `\nOutput so far (end):\n${tail}` : ''}`;
    return { structured, text };
  }

  /** Answers a `job` call: waits up to `wait_seconds` (stops the cell first when asked), then the result or a look. */
  async answer(request: JobRequest, currentEpoch: number, signal: AbortSignal): Promise<JobAnswer> {
    const job = this.jobs.get(request.job);
    if (job === undefined) return { kind: 'refused', failure: this.unknown(request.job, currentEpoch) };
    if (request.stop === true && job.result === undefined) job.stop.abort(CellStop.byJobTool());
    const waitMs = request.stop === true ? Number.POSITIVE_INFINITY : (request.wait_seconds ?? 0) * 1000;
    if (job.result === undefined && waitMs > 0) await settledWithin(job.done, waitMs, signal);
    if (job.result === undefined) return { kind: 'running', ...this.running(job.id) };
    this.jobs.delete(job.id);
    this.remember(job.id, 'read');
    return { kind: 'result', result: job.result };
  }

  /** A running or finished-unread call, without reading it (MCP tasks report its state: cell-tasks.ts). */
  peek(id: string): DetachedJob | undefined {
    return this.jobs.get(id);
  }

  /** The handles of the running and finished-unread calls, oldest first. */
  handles(): string[] {
    return [...this.jobs.keys()];
  }

  /** Forgets every cell (the namespace closed: the runtime answered the running ones runtime_closed). */
  close(): void {
    this.jobs.clear();
  }

  /** Why `handle` names no job here (unknown, read, dropped, another namespace's, malformed). */
  unknown(handle: string, currentEpoch: number): OperationFailure {
    const shown = handle.slice(0, 80);
    const ending = this.ended.get(handle);
    const failure = (reason: string, message: string): OperationFailure => ({ code: 'job_not_found', message, details: { job: shown, reason } });
    if (ending === 'read') return failure('read', `job ${JSON.stringify(shown)} was already read: a result is returned once`);
    if (ending === 'dropped') {
      return failure(
        'dropped',
        `job ${JSON.stringify(shown)} finished, but its result was dropped unread: at most ${this.limits.maxResults} results (${this.limits.maxBytes} bytes) are kept`,
      );
    }
    const parts = HANDLE.exec(handle);
    if (parts === null) return failure('malformed', `${JSON.stringify(shown)} is not a job handle (a handle looks like "${this.namespace}-1-1")`);
    if (parts[1] !== this.namespace) return failure('other_namespace', `job ${JSON.stringify(shown)} belongs to namespace ${JSON.stringify(parts[1])}, not ${JSON.stringify(this.namespace)}`);
    if (Number(parts[2]) > currentEpoch || Number(parts[3]) > this.sequence) return failure('unknown', `no job ${JSON.stringify(shown)} was started here`);
    return failure('unknown', `job ${JSON.stringify(shown)} is not known here (the server was restarted since, or it was never started)`);
  }

  private remember(id: string, ending: Ending): void {
    this.ended.set(id, ending);
    if (this.ended.size > REMEMBERED_ENDS) this.ended.delete(this.ended.keys().next().value as string);
  }

  /** Drops the oldest finished, unread results until the rest fit the bounds. */
  private keepWithinBounds(): void {
    const finished = [...this.jobs.values()].filter((job) => job.result !== undefined);
    let bytes = finished.reduce((total, job) => total + job.bytes, 0);
    let count = finished.length;
    for (const job of finished) {
      if (count <= this.limits.maxResults && bytes <= this.limits.maxBytes) break;
      this.jobs.delete(job.id);
      this.remember(job.id, 'dropped');
      count -= 1;
      bytes -= job.bytes;
    }
  }
}

/** Resolves when `promise` settles, `ms` pass, or `signal` aborts, whichever comes first. */
function settledWithin(promise: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done(): void {
      if (timer !== undefined) clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    if (signal.aborted) return done();
    signal.addEventListener('abort', done, { once: true });
    promise.then(done, done);
  });
}
