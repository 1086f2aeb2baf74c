import { ProtocolError, Server as ModernServer, type ServerContext } from '@modelcontextprotocol/server';
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { CellStop, DETACH_ARGUMENT, STABLE_TOOLS, findStableTool, runsAsTask, stoppedBy, takesOwnDetach, toMcpTool, withTaskSupport } from '../tools/index.js';
import { INSTRUCTIONS, listTools, type SessionServerParts } from './server.js';
import { listResources, readResource } from '../resources/index.js';
import { ResultWriter } from '../results/index.js';

/**
 * The session server of protocol 2026-07-28 (`server/discover`, a per-request `_meta` envelope, no `initialize`),
 * on the SDK's v2 `Server`: the same tools, resources and tool caller as the 2025-era server (server.ts), which
 * stays on `@modelcontextprotocol/sdk` v1 with its 2025-11-25 tasks. See docs/decisions (mcp-2026-07-28).
 *
 * Tasks (the `io.modelcontextprotocol/tasks` extension): the server decides. A call from a client that declares the
 * extension in its request envelope runs as a call that may detach (its own `detach_after_seconds`, or
 * {@link TASK_DETACH_SECONDS}); when it outlives that, it answers with a task whose id is the detached cell's job
 * handle, and `tasks/get` and `tasks/cancel` read and stop that cell. A client without the extension gets the
 * `job` handle as before.
 */

/** The tasks extension's identifier (capabilities.extensions, and the client's envelope). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Seconds a call of a task-taking client runs before it becomes a task, when it does not name its own
 * `detach_after_seconds`. Short enough that a long cell goes to the background while the person still waits for it
 * (Claude Code backgrounds a task at once), long enough that the common short cell answers inline with no polling.
 */
export const TASK_DETACH_SECONDS = 10;

/** How often a client should ask `tasks/get` (ms). */
const TASK_POLL_INTERVAL_MS = 500;

/** Characters of a status message's quoted output line. */
const STATUS_LINE_CHARS = 200;

/** Finished task results kept after their first `tasks/get` (a client may ask again; the detached cell is read). */
const KEPT_RESULTS = 64;

/** What the tasks of one namespace remember past their detached cell: results already handed to `tasks/get`. */
export class ModernTasks {
  private readonly results = new Map<string, { result: CallToolResult; endedAt: number; startedAt: number }>();

  constructor(private readonly parts: Pick<SessionServerParts, 'caller'>) {}

  /** The task's state for `tasks/get` (the detached cell read once it finished), or a JSON-RPC error. */
  async get(taskId: string): Promise<Record<string, unknown>> {
    const kept = this.results.get(taskId);
    if (kept !== undefined) return finishedTask(taskId, kept.result, kept.startedAt, kept.endedAt);
    const { caller } = this.parts;
    const job = caller.detached.peek(taskId);
    if (job === undefined) throw unknownTask(caller.detached.unknown(taskId, caller.epoch));
    const base = { taskId, createdAt: isoTime(job.startedAt), ttlMs: null, pollIntervalMs: TASK_POLL_INTERVAL_MS };
    if (job.result === undefined) {
      if (job.stop.signal.aborted) return { ...base, status: 'working', lastUpdatedAt: isoTime(job.startedAt), statusMessage: `${stoppedBy(job.stop.signal)}; the interrupt is on its way` };
      return { ...base, status: 'working', lastUpdatedAt: isoTime(job.startedAt), statusMessage: this.runningLine(taskId) };
    }
    const answer = await caller.detached.answer({ job: taskId }, caller.epoch, new AbortController().signal);
    if (answer.kind !== 'result') throw unknownTask(answer.kind === 'refused' ? answer.failure : { message: `task ${taskId} has not ended`, details: {} });
    const endedAt = job.endedAt ?? job.startedAt;
    this.results.set(taskId, { result: answer.result, startedAt: job.startedAt, endedAt });
    while (this.results.size > KEPT_RESULTS) this.results.delete(this.results.keys().next().value as string);
    if (job.stop.signal.aborted) return { ...base, status: 'cancelled', lastUpdatedAt: isoTime(endedAt), statusMessage: `${stoppedBy(job.stop.signal)}: the call was interrupted (the namespace is kept)` };
    return finishedTask(taskId, answer.result, job.startedAt, endedAt);
  }

  /** `tasks/cancel`: interrupts the cell (the namespace is kept); idempotent once it ended. */
  cancel(taskId: string): Record<string, never> {
    const { caller } = this.parts;
    const job = caller.detached.peek(taskId);
    if (job === undefined) {
      if (this.results.has(taskId)) return {};
      throw unknownTask(caller.detached.unknown(taskId, caller.epoch));
    }
    if (job.result === undefined) job.stop.abort(CellStop.byTaskCancel());
    return {};
  }

  private runningLine(taskId: string): string {
    const look = this.parts.caller.detached.running(taskId).structured;
    const output = typeof look.stdout === 'string' ? look.stdout : typeof look.stderr === 'string' ? look.stderr : '';
    const last = output.trimEnd().split('\n').pop() ?? '';
    return `running for ${String(look.elapsed_s)} s${last.length > 0 ? `; output so far ends: ${last.slice(-STATUS_LINE_CHARS)}` : ''}`;
  }
}

/** One session's server for protocol 2026-07-28 (a fresh one per HTTP request is fine: state lives in `parts`). */
export function createModernSessionServer(parts: SessionServerParts, tasks: ModernTasks): ModernServer {
  const server = new ModernServer(
    { name: 'ipython-mcp', version: parts.version },
    { capabilities: { tools: { listChanged: true }, resources: {}, logging: {}, extensions: { [TASKS_EXTENSION]: {} } }, instructions: INSTRUCTIONS },
  );
  const results = new ResultWriter({ checkResults: parts.checkResults, outputs: parts.outputs });
  const publishedStableTools = withTaskSupport(STABLE_TOOLS.map((tool) => toMcpTool(tool, parts.maxTimeoutSeconds)));

  server.setRequestHandler('tools/list', async (_request, ctx) => ({ tools: (await listTools(parts, publishedStableTools, ctx.mcpReq.signal)) as never }));

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const name = request.params.name;
    const takesTasks = clientTakesTasks(ctx) && runsAsTask(name);
    let args = (request.params.arguments ?? {}) as Record<string, unknown>;
    if (takesTasks && !(DETACH_ARGUMENT in args) && detaches(parts, name)) args = { ...args, [DETACH_ARGUMENT]: TASK_DETACH_SECONDS };
    const mark = parts.relist.mark();
    const result = await parts.caller.call({
      name,
      args,
      requestId: ctx.mcpReq.id,
      signal: ctx.mcpReq.signal,
      progressToken: request.params._meta?.progressToken,
      sendNotification: (notification: ServerNotification) => ctx.mcpReq.notify(notification as never),
      results,
      calls: parts.calls,
    });
    if (parts.relist.holds(mark)) await parts.relist.settle(mark);
    const handle = takesTasks ? detachedHandle(parts, result) : undefined;
    if (handle !== undefined) return (await taskCreated(tasks, handle)) as never;
    return result as never;
  });

  server.setRequestHandler('resources/list', async (request) => (await listResources(parts.outputs, parts.journal, request.params?.cursor, parts.documents)) as never);
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: parts.outputs.templates() as never }));
  server.setRequestHandler('resources/read', async (request) => (await readResource(parts.outputs, parts.journal, request.params.uri, parts.documents)) as never);

  const taskParams = z.object({ taskId: z.string().max(200) }).passthrough();
  server.setRequestHandler('tasks/get', { params: taskParams }, async (params, ctx) => {
    requireTasks(ctx);
    return (await tasks.get(params.taskId)) as never;
  });
  server.setRequestHandler('tasks/cancel', { params: taskParams }, (params, ctx) => {
    requireTasks(ctx);
    return tasks.cancel(params.taskId) as never;
  });
  return server;
}

/** Whether this request's client declared the tasks extension in its envelope's capabilities. */
function clientTakesTasks(ctx: ServerContext): boolean {
  // The envelope's wire keys are left out of the SDK's public type; the values are there.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/**
 * Whether a call of `name` takes `detach_after_seconds` as ours: a detachable stable tool, or a dynamic tool whose
 * function has no parameter of that name (that one is the function's own, and the tool does not detach).
 */
function detaches(parts: SessionServerParts, name: string): boolean {
  const stable = findStableTool(name);
  if (stable !== undefined) return stable.detachable === true;
  const entry = parts.catalog.get(name);
  return entry !== undefined && !takesOwnDetach(entry.registration.input_schema);
}

/** The tasks methods answer only clients that declared the extension (-32021, as the extension says). */
function requireTasks(ctx: ServerContext): void {
  if (!clientTakesTasks(ctx)) {
    throw new ProtocolError(-32021, `tasks/* needs the ${TASKS_EXTENSION} extension in the request's client capabilities`, {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
  }
}

/** The job handle of a call that detached (its answer is a look at the running cell), if it did. */
function detachedHandle(parts: SessionServerParts, result: CallToolResult): string | undefined {
  const structured = result.structuredContent;
  if (result.isError === true || structured?.status !== 'running' || typeof structured.job !== 'string') return undefined;
  return parts.caller.detached.peek(structured.job) === undefined ? undefined : structured.job;
}

/** The `CreateTaskResult` of a call that became a task (the cell may have ended meanwhile: it says so). */
async function taskCreated(tasks: ModernTasks, handle: string): Promise<Record<string, unknown>> {
  const task = await tasks.get(handle).catch(() => undefined);
  const { result: _result, error: _error, ...shown } = task ?? { taskId: handle, status: 'working', ttlMs: null };
  return { resultType: 'task', ...shown };
}

function finishedTask(taskId: string, result: CallToolResult, startedAt: number, endedAt: number): Record<string, unknown> {
  return { taskId, status: 'completed', result, createdAt: isoTime(startedAt), lastUpdatedAt: isoTime(endedAt), ttlMs: null };
}

/** A bad task id: invalid params, with the detached cells' code and reason. */
function unknownTask(failure: { message: string; details?: Record<string, unknown> | undefined }): ProtocolError {
  return new ProtocolError(-32602, failure.message, { code: 'job_not_found', ...failure.details });
}

function isoTime(performanceTime: number): string {
  return new Date(performance.timeOrigin + performanceTime).toISOString();
}
