import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { CreateTaskResult } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import { ErrorCode as McpErrorCode, McpError, type CallToolResult, type ServerCapabilities, type Task, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { CellStop, stoppedBy, type DetachedJob } from './detached-cells.js';
import { findStableTool } from '../stable-tools.js';
import type { ToolCaller, ToolCallRequest } from '../tool-caller.js';

/**
 * MCP tasks (protocol 2025-11-25) over detached cells. A `tools/call` that carries `task` starts the call as a
 * detached cell from its first moment and answers with the task at once; the task's id is the cell's job handle, so
 * a task shares the FIFO queue, the result bounds and the handle rules of detached cells, and the `job` tool reads
 * it as well. The SDK serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` over {@link CellTasks},
 * which is the SDK's TaskStore interface on the namespace's detached cells:
 *
 * - status: `working` while the call runs, then `completed`, or `failed` when its result is an error (the spec's rule
 *   for tool calls); `cancelled` from the moment `tasks/cancel` (or the client's `notifications/cancelled` of the
 *   tools/call, which may cross the task's answer: request-jobs.ts) stops it, its message saying which.
 * - `tasks/result` waits for the end and returns the call's result exactly as the blocking call would have (plus
 *   the related-task `_meta` the SDK adds). A result is returned once; then the handle answers "already read".
 * - `ttl` is null: nothing expires by time. Results wait until read, within the count and byte bounds of detached
 *   cells; one dropped to stay within them says so.
 * - one store per namespace, shared by its sessions, so the session id is not checked: over `--http` a task is read
 *   from any session of its namespace (a reconnecting client's), and refused by another namespace's store.
 */

/** The `tasks` capability: task-augmented tools/call, with list and cancel. */
export const TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = Object.freeze({ list: {}, cancel: {}, requests: { tools: { call: {} } } });

/** How often a client should ask `tasks/get` (ms). */
const TASK_POLL_INTERVAL_MS = 500;

/** Tasks listed per `tasks/list` page. */
const LIST_PAGE_SIZE = 50;

/** Characters of a status message's quoted line (the last output line, or the error's first line). */
const STATUS_LINE_CHARS = 200;

/**
 * Whether `tools/call` of this tool may be task-augmented: the stable tools that detach (execute, call_function) and
 * every dynamic tool (a live function).
 */
export function runsAsTask(toolName: string): boolean {
  const stable = findStableTool(toolName);
  return stable === undefined || stable.detachable === true;
}

/**
 * The tool list with `execution.taskSupport: "optional"` on the tools that may run as tasks. Clients forward names,
 * descriptions and input schemas to the model, not `execution`, so this costs the model's tool list nothing.
 */
export function withTaskSupport(tools: Tool[]): Tool[] {
  return tools.map((tool) => (runsAsTask(tool.name) ? { ...tool, execution: { ...tool.execution, taskSupport: 'optional' } } : tool));
}

/** The namespace's detached cells as MCP tasks: what the SDK's task handlers read and cancel through. */
export class CellTasks implements TaskStore {
  constructor(private readonly caller: ToolCaller) {}

  /**
   * Starts a task-augmented `tools/call` (the session's request, without its signal: the task outlives it) and
   * returns the task. A tool that does not run as a task is refused (-32601, the spec's answer) and nothing runs.
   */
  async create(request: Omit<ToolCallRequest, 'signal' | 'progressToken' | 'tail'>): Promise<CreateTaskResult> {
    if (!runsAsTask(request.name)) {
      throw new McpError(McpErrorCode.MethodNotFound, `${request.name.slice(0, 200)} does not run as a task (only execute, call_function and registered tools do): call it without "task"`);
    }
    const id = this.caller.start(request);
    return { task: await this.getTask(id) };
  }

  async getTask(taskId: string): Promise<Task> {
    const job = this.find(taskId);
    const status = statusOf(job);
    const task: Task = {
      taskId: job.id,
      status,
      ttl: null,
      createdAt: isoTime(job.startedAt),
      lastUpdatedAt: isoTime(job.endedAt ?? job.startedAt),
      pollInterval: TASK_POLL_INTERVAL_MS,
    };
    const message = this.statusMessage(job, status);
    if (message !== undefined) task.statusMessage = message;
    return task;
  }

  /** The call's result, once it ended (a cancelled call's: after its interrupt lands). Reading it ends the task. */
  async getTaskResult(taskId: string): Promise<CallToolResult> {
    const job = this.find(taskId);
    await job.done;
    const answer = await this.caller.detached.answer({ job: job.id }, this.caller.epoch, new AbortController().signal);
    if (answer.kind === 'result') return answer.result;
    if (answer.kind === 'refused') throw refusal(answer.failure.message, answer.failure.details);
    throw new McpError(McpErrorCode.InternalError, `task ${JSON.stringify(taskId)} has not ended`);
  }

  /** Only `cancelled` is asked for (by `tasks/cancel`): an interrupt, so the namespace is kept. */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    const job = this.find(taskId);
    if (status !== 'cancelled') throw new McpError(McpErrorCode.InvalidRequest, `a task's status follows its call; only cancelling it is possible`);
    if (job.result === undefined) job.stop.abort(CellStop.byTaskCancel());
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const handles = this.caller.detached.handles();
    const start = cursor === undefined ? 0 : handles.indexOf(cursor) + 1;
    if (start === 0 && cursor !== undefined) throw new McpError(McpErrorCode.InvalidParams, `the cursor ${JSON.stringify(cursor.slice(0, 80))} names no task listed here`);
    const page = handles.slice(start, start + LIST_PAGE_SIZE);
    const tasks = await Promise.all(page.map((handle) => this.getTask(handle)));
    return start + LIST_PAGE_SIZE < handles.length ? { tasks, nextCursor: page[page.length - 1] as string } : { tasks };
  }

  /** Tasks are made by a task-augmented tools/call ({@link create}), never through the SDK's request task store. */
  async createTask(_params: CreateTaskOptions): Promise<Task> {
    throw new McpError(McpErrorCode.InvalidRequest, 'a task is started by a tools/call that carries "task"');
  }

  /** A task's result is its call's own; nothing stores another. */
  async storeTaskResult(taskId: string): Promise<void> {
    throw new McpError(McpErrorCode.InvalidRequest, `the result of task ${JSON.stringify(taskId.slice(0, 80))} is its call's own`);
  }

  /** The job behind a task id, or the detached cells' own refusal (unknown, read, dropped, another namespace, junk). */
  private find(taskId: string): DetachedJob {
    const job = this.caller.detached.peek(taskId);
    if (job !== undefined) return job;
    const unknown = this.caller.detached.unknown(taskId, this.caller.epoch);
    throw refusal(unknown.message, unknown.details);
  }

  private statusMessage(job: DetachedJob, status: Task['status']): string | undefined {
    if (status === 'cancelled') return `${stoppedBy(job.stop.signal)}: the call was interrupted (the namespace is kept); tasks/result returns its result`;
    if (status === 'failed') return firstLine(textOf(job.result));
    if (status !== 'working') return undefined;
    const look = this.caller.detached.running(job.id).structured;
    const output = typeof look.stdout === 'string' ? look.stdout : typeof look.stderr === 'string' ? look.stderr : '';
    const last = output.trimEnd().split('\n').pop() ?? '';
    return `running for ${String(look.elapsed_s)} s${last.length > 0 ? `; output so far ends: ${last.slice(-STATUS_LINE_CHARS)}` : ''}`;
  }
}

/** A task's status from its job: stopped → cancelled; an error result → failed; a result → completed. */
function statusOf(job: DetachedJob): Task['status'] {
  if (job.stop.signal.aborted) return 'cancelled';
  if (job.result === undefined) return 'working';
  return job.result.isError === true ? 'failed' : 'completed';
}

/** A bad task id: the JSON-RPC error (invalid params) carries the detached cells' code and reason. */
function refusal(message: string, details: Record<string, unknown> | undefined): McpError {
  return new McpError(McpErrorCode.InvalidParams, message, { code: 'job_not_found', ...details });
}

function isoTime(performanceTime: number): string {
  return new Date(performance.timeOrigin + performanceTime).toISOString();
}

function textOf(result: CallToolResult | undefined): string {
  const first = result?.content.find((block) => block.type === 'text');
  return first?.type === 'text' ? first.text : '';
}

function firstLine(text: string): string | undefined {
  const line = text.split('\n').find((each) => each.trim().length > 0);
  return line === undefined ? undefined : line.slice(0, STATUS_LINE_CHARS);
}
