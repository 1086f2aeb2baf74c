import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { OperationName, OperationParams } from '@ipython-mcp/protocol';
import type { OperationMeta, RunOptions, Runtime } from '@ipython-mcp/worker-supervisor';
import { takeTimeout } from './call-deadline.js';
import { dynamicCallable, stableCallable, staleOrUnknown, type CallableTool } from './callable-tool.js';
import { CellStop, DetachedCells, OutputTail, stopCauseOf, takeDetach, withStopCause, type DetachedLimits, type JobRequest } from './detached/detached-cells.js';
import type { RequestJobs } from './detached/request-jobs.js';
import type { DynamicCatalog } from './dynamic-catalog.js';
import type { DocumentTools, JournalRecorder } from '../resources/index.js';
import { progressReporter } from './progress.js';
import { STABLE_TOOLS } from './stable-tools.js';
import type { RestoreFollowUp } from './state-notice.js';
import type { CatalogEffect } from './tool-definition.js';
import type { ResultWriter } from '../results/index.js';

/** What a namespace's tool caller acts on. */
export interface ToolCallerParts {
  runtime: Runtime;
  catalog: DynamicCatalog;
  journal: JournalRecorder | undefined;
  restore: RestoreFollowUp;
  /** runtime_status's answer, which the server gives itself. */
  status: () => Record<string, unknown>;
  /** The largest `timeout_seconds` a call may ask for. */
  maxTimeoutSeconds: number;
  /** The namespace's name: every detached cell's handle starts with it. */
  namespace: string;
  /** Bounds on detached cells' results kept unread (defaults: detached-cells.ts). */
  detachedLimits?: DetachedLimits | undefined;
  /** The backend's document tools (the notebook tool): their calls run cells as this caller's execute. */
  documentTools?: DocumentTools | undefined;
}

/** One tools/call as the session received it. */
export interface ToolCallRequest {
  name: string;
  args: Record<string, unknown>;
  signal: AbortSignal;
  requestId: string | number;
  progressToken: string | number | undefined;
  sendNotification: (notification: ServerNotification) => Promise<void>;
  /** The session's result writer (it remembers which epoch that session last saw). */
  results: ResultWriter;
  /**
   * Set for a call that runs as an MCP task (see {@link ToolCaller.start}): its output's tail is kept here, and it
   * never detaches on its own, since the task is already its handle.
   */
  tail?: OutputTail | undefined;
  /**
   * The connection's detached cells by request id: a call that detaches (or starts as a task) is held there, so
   * that the client's cancel of this request stops its cell after the answer too. None: only the signal stops it.
   */
  calls?: RequestJobs | undefined;
}

/**
 * Runs every tool call of one namespace, stable and dynamic alike, through the same steps: find the tool → take
 * the deadline → check the arguments → admit and run the operation → reconcile the dynamic catalog → write the
 * result → record it in the journal. What differs between tools lives in their {@link CallableTool}.
 */
export class ToolCaller {
  /** The stable tools, made callable once: a call allocates nothing to find one. */
  private readonly stable: ReadonlyMap<string, CallableTool>;

  /** The cells detached from this namespace's calls, and their results until read. */
  readonly detached: DetachedCells;

  constructor(private readonly parts: ToolCallerParts) {
    this.stable = new Map(STABLE_TOOLS.map((tool) => [tool.name, stableCallable(tool, parts.catalog)]));
    this.detached = new DetachedCells(parts.namespace, parts.detachedLimits);
  }

  async call(request: ToolCallRequest): Promise<CallToolResult> {
    const { results } = request;
    const document = this.stable.has(request.name) ? undefined : this.parts.documentTools?.call(request.name, request.args, (code, timeoutSeconds) => this.executeFor(request, code, timeoutSeconds));
    if (document !== undefined) return document;
    const tool = await this.find(request);
    if ('content' in tool) return tool;
    const runOptions: RunOptions = { signal: request.signal, requestId: request.requestId };
    let args = request.args;
    if (tool.takesDeadline) {
      const taken = takeTimeout(args, this.parts.maxTimeoutSeconds);
      if (!taken.ok) {
        const message = `invalid arguments for ${tool.name.slice(0, 200)}: ${taken.message}`;
        return results.failure(tool.rules, { code: 'invalid_arguments', message, details: taken.details });
      }
      args = taken.args;
      if (taken.timeoutMs !== undefined) runOptions.timeoutMs = taken.timeoutMs;
    }
    let detachMs: number | undefined;
    if (tool.detachable) {
      const taken = takeDetach(args, this.parts.maxTimeoutSeconds);
      if (!taken.ok) return results.failure(tool.rules, { code: 'invalid_arguments', message: `invalid arguments for ${tool.name}: ${taken.message}`, details: taken.details });
      args = taken.args;
      detachMs = request.tail === undefined ? taken.detachMs : undefined;
    }
    const checked = tool.check(args);
    if (!checked.ok) return results.failure(tool.rules, checked.failure);
    if (tool.op === null) {
      if (tool.answeredFrom === 'detached') return this.answerJob(tool, checked.data as unknown as JobRequest, request);
      return results.success(tool.rules, this.parts.status());
    }
    const progress = tool.streams ? progressReporter(request.progressToken, request.sendNotification) : undefined;
    if (progress) runOptions.onEvent = progress.onEvent;
    // The output's tail is kept for a call that may be looked at while it runs: a task's, or one that may detach.
    const tail = request.tail ?? (detachMs !== undefined ? new OutputTail() : undefined);
    if (tail !== undefined) {
      runOptions.onEvent = (event) => {
        tail.add(event);
        progress?.onEvent(event);
      };
    }
    try {
      if (detachMs !== undefined && tail !== undefined) return await this.runDetachable(tool, checked.data, runOptions, { request, detachMs, tail });
      return await this.run(tool, checked.data, runOptions, results);
    } finally {
      if (progress) await progress.settle();
    }
  }

  /** An execute of `code` on behalf of a document tool's call (a notebook cell run): the same pipeline as the model's. */
  private executeFor(request: ToolCallRequest, code: string, timeoutSeconds: number | undefined): Promise<CallToolResult> {
    const args = timeoutSeconds === undefined ? { code } : { code, timeout_seconds: timeoutSeconds };
    return this.call({ ...request, name: 'execute', args, tail: undefined });
  }

  /**
   * Starts a call that answers only through its handle (an MCP task): it runs as {@link call} runs it, on a signal
   * of its own (only the handle stops it), with its output's tail kept, and is a detached cell from the start, so it
   * shares their queue place, bounds and handles. Returns the handle.
   */
  start(request: Omit<ToolCallRequest, 'signal' | 'progressToken' | 'tail'>): string {
    const stop = new AbortController();
    const tail = new OutputTail();
    const startedAt = performance.now();
    const epoch = this.parts.runtime.epoch;
    const running = this.call({ ...request, signal: stop.signal, progressToken: undefined, tail });
    const job = this.detached.adopt({ epoch, startedAt, tail, stop, running });
    // The task is the handle, but a cancel of the request can cross its answer (the SDK then drops the task).
    this.hold(request, job);
    return job;
  }

  /** The runtime's current epoch: a handle from an earlier one is refused with that reason. */
  get epoch(): number {
    return this.parts.runtime.epoch;
  }

  /**
   * Runs a call that may detach: it runs on a signal of its own, with its output's tail kept. Finished within
   * `detachMs`, its result is the answer; otherwise the answer is a handle and a look at it, and the call goes on.
   * The client's cancel of the request stops it whenever it comes: before the detach through the request's signal,
   * from the detach on (while the handle is answered, and after) through the connection's {@link RequestJobs}; the
   * `job` tool and `tasks/cancel` stop it too.
   */
  private async runDetachable(
    tool: CallableTool,
    data: Record<string, unknown>,
    runOptions: RunOptions,
    context: { request: ToolCallRequest; detachMs: number; tail: OutputTail },
  ): Promise<CallToolResult> {
    const { request, detachMs, tail } = context;
    const stop = new AbortController();
    const cancel = () => stop.abort(CellStop.byClient(request.requestId, request.signal.reason));
    request.signal.addEventListener('abort', cancel, { once: true });
    // A cancel read in the same chunk as the call aborted the signal before this point (the SDK reads on while the
    // handler awaits): no event comes for it.
    if (request.signal.aborted) cancel();
    const startedAt = performance.now();
    const epoch = this.parts.runtime.epoch;
    runOptions.signal = stop.signal;
    const running = this.run(tool, data, runOptions, request.results);
    let timer: NodeJS.Timeout | undefined;
    const detachAt = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, detachMs, undefined);
    });
    try {
      const finished = await Promise.race([running, detachAt]);
      if (finished !== undefined) return finished;
      // Cancelled before its detach time: no handle (the SDK answers nothing to a cancelled request); the call ends
      // once its interrupt lands.
      if (request.signal.aborted) return await running;
    } finally {
      clearTimeout(timer);
      // The signal stops the call only until its detach: the SDKs also abort it when the connection or the
      // per-request server closes (a stateless HTTP request's closes right after its answer), and neither may stop a
      // detached cell, which a reconnecting client reads from another session.
      request.signal.removeEventListener('abort', cancel);
    }
    // From here the client's cancel reaches the cell through the connection's RequestJobs, which sees every client
    // message before the SDK does: one that came before this point has already aborted the signal (the SDK aborts in
    // the same turn it reads the message), one that comes after finds the cell held.
    const job = this.detached.adopt({ epoch, startedAt, tail, stop, running, detachSeconds: detachMs / 1000 });
    this.hold(request, job);
    const look = this.detached.running(job);
    return { content: [{ type: 'text', text: look.text }], structuredContent: look.structured };
  }

  /** Holds a detached cell in the connection's map by its request's id, until it ends (see {@link RequestJobs}). */
  private hold(request: Pick<ToolCallRequest, 'calls' | 'requestId'>, job: string): void {
    const detached = request.calls === undefined ? undefined : this.detached.peek(job);
    if (detached !== undefined) request.calls?.hold(request.requestId, detached);
  }

  /** The job tool: a look at a detached cell, its whole result once done, or a refusal for a bad handle. */
  private async answerJob(tool: CallableTool, job: JobRequest, request: ToolCallRequest): Promise<CallToolResult> {
    const answer = await this.detached.answer(job, this.parts.runtime.epoch, request.signal);
    if (answer.kind === 'result') return answer.result;
    if (answer.kind === 'refused') return request.results.failure(tool.rules, answer.failure);
    return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
  }

  /** The tool by its name: a stable tool, a dynamic one from the catalog snapshot, or the answer for a stale one. */
  private async find(request: ToolCallRequest): Promise<CallableTool | CallToolResult> {
    const { catalog, runtime } = this.parts;
    const stable = this.stable.get(request.name);
    if (stable !== undefined) return stable;
    if (catalog.get(request.name) === undefined && catalog.needsDiscovery) await catalog.refresh(runtime, request.signal);
    const entry = catalog.get(request.name);
    if (entry === undefined) return staleOrUnknown(catalog, request.name, request.results);
    return dynamicCallable(entry, request.name, catalog, runtime);
  }

  private async run(tool: CallableTool, data: Record<string, unknown>, runOptions: RunOptions, results: ResultWriter): Promise<CallToolResult> {
    const { runtime, catalog, journal, restore } = this.parts;
    let outcome = await runtime.run(tool.op as OperationName, tool.params(data) as OperationParams<OperationName>, runOptions);
    // A detached cell someone stopped: its result (and the journal) says who.
    const stop = outcome.ok ? undefined : stopCauseOf(runOptions.signal);
    if (stop !== undefined && !outcome.ok) outcome = { ...outcome, error: withStopCause(outcome.error, stop) };
    if (outcome.ok && mustReconcile(tool.catalogEffect, outcome.meta, catalog, runtime)) {
      // A result that waits has list_changed (with the new revision) go out before it. One that does not is joined
      // to any refresh in flight, so a burst of calls adds at most one discover to the queue.
      if (tool.resultWaitsForCatalog) await catalog.reconcileAfter(runtime);
      else void catalog.reconcileAfter(runtime);
    }
    const result = await tool.result(outcome, results);
    if (tool.rules.cellContent === true) prependLine(result, restore.takeLine(outcome.meta.epoch));
    if (journal) tool.record(journal, data, outcome);
    return result;
  }
}

/**
 * Whether a successful call must be followed by a `discover`, by the tool's declared catalog effect. When the
 * worker sent its registry revision (`catalog_revision`) for the current epoch, only a revision the snapshot does
 * not reflect needs one: an execute that touched no registration costs no second round trip. Without it (an older
 * worker, or one holding no registrations): registry operations always reconcile, namespace mutations when there
 * are registrations that they could have made stale.
 */
function mustReconcile(effect: CatalogEffect, meta: OperationMeta, catalog: DynamicCatalog, runtime: Runtime): boolean {
  if (effect === 'none') return false;
  const revision = meta.catalogRevision;
  if (revision !== undefined && meta.epoch === runtime.epoch) return !catalog.reflects(revision, meta.epoch);
  return effect === 'changes' || catalog.size > 0;
}

/** Puts `line` first in the result's text block (a text block of its own when it has none). */
function prependLine(result: CallToolResult, line: string | undefined): void {
  if (line === undefined) return;
  const first = result.content[0];
  if (first?.type === 'text') result.content[0] = { ...first, text: `${line}\n${first.text}` };
  else result.content.unshift({ type: 'text', text: line });
}
