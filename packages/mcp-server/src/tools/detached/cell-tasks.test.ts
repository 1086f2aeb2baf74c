import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CellTasks, runsAsTask, withTaskSupport } from './cell-tasks.js';
import { CellStop, DetachedCells, OutputTail } from './detached-cells.js';
import type { ToolCaller, ToolCallRequest } from '../tool-caller.js';
import type { ResultWriter } from '../../results/index.js';

/** A call that the test ends. */
interface PendingCall {
  finish: (result: CallToolResult) => void;
  stop: AbortController;
  tail: OutputTail;
}

/** CellTasks over real detached cells and a caller whose `start` adopts a call the test finishes by hand. */
function harness(): { tasks: CellTasks; detached: DetachedCells; calls: PendingCall[] } {
  const detached = new DetachedCells('default');
  const calls: PendingCall[] = [];
  const caller = {
    detached,
    epoch: 1,
    start() {
      let finish!: (result: CallToolResult) => void;
      const running = new Promise<CallToolResult>((resolve) => {
        finish = resolve;
      });
      const call = { finish, stop: new AbortController(), tail: new OutputTail() };
      calls.push(call);
      return detached.adopt({ epoch: 1, startedAt: performance.now(), tail: call.tail, stop: call.stop, running });
    },
  };
  return { tasks: new CellTasks(caller as unknown as ToolCaller), detached, calls };
}

const request = (name: string): Omit<ToolCallRequest, 'signal' | 'progressToken' | 'tail'> => ({
  name,
  args: {},
  requestId: 1,
  sendNotification: async () => undefined,
  results: {} as ResultWriter,
});

const ok = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: { result: { value } } });
const failure = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }], structuredContent: { status: 'error' } });
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

async function refusal(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('which tools run as tasks', () => {
  it('execute, call_function and every dynamic tool; not the other stable tools', () => {
    for (const name of ['execute', 'call_function', 'my_function', 'train']) expect(runsAsTask(name), name).toBe(true);
    for (const name of ['job', 'runtime_status', 'list', 'search', 'inspect', 'register_tool', 'reset']) expect(runsAsTask(name), name).toBe(false);
  });

  it('marks them optional in the tool list and leaves the rest as they were', () => {
    const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });
    const marked = withTaskSupport([tool('execute'), tool('job'), tool('train')]);
    expect(marked.map((each) => each.execution?.taskSupport)).toEqual(['optional', undefined, 'optional']);
    expect(marked[1]).toEqual(tool('job'));
  });
});

describe('CellTasks', () => {
  it('a task is working, then completed; its result is read once, then the id says so', async () => {
    const { tasks, calls } = harness();
    const { task } = await tasks.create(request('execute'));
    expect(task).toMatchObject({ taskId: 'default-1-1', status: 'working', ttl: null, pollInterval: expect.any(Number) });
    expect(Date.parse(task.createdAt)).toBeLessThanOrEqual(Date.now());
    calls[0]!.tail.add({ kind: 'stdout', text: 'epoch 1\nepoch 2\n' });
    expect((await tasks.getTask(task.taskId)).statusMessage).toMatch(/^running for [\d.]+ s; output so far ends: epoch 2$/);
    calls[0]!.finish(ok(42));
    await settle();
    const done = await tasks.getTask(task.taskId);
    expect(done.status).toBe('completed');
    expect(Date.parse(done.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(done.createdAt));
    expect(await tasks.getTaskResult(task.taskId)).toEqual(ok(42));
    const read = await refusal(tasks.getTask(task.taskId));
    expect(read.code).toBe(-32602);
    expect(read.data).toMatchObject({ code: 'job_not_found', reason: 'read' });
  });

  it('an error result is failed, with its first line as the status message', async () => {
    const { tasks, calls } = harness();
    const { task } = await tasks.create(request('execute'));
    calls[0]!.finish(failure('\nworker_crashed: the worker exited (code 3)\nmore'));
    await settle();
    expect(await tasks.getTask(task.taskId)).toMatchObject({ status: 'failed', statusMessage: 'worker_crashed: the worker exited (code 3)' });
    expect((await tasks.getTaskResult(task.taskId)).isError).toBe(true);
  });

  it('cancelling stops the call and is cancelled at once; the result waits for the interrupt to land', async () => {
    const { tasks, calls } = harness();
    const { task } = await tasks.create(request('execute'));
    await tasks.updateTaskStatus(task.taskId, 'cancelled');
    expect(calls[0]!.stop.signal.aborted).toBe(true);
    expect(await tasks.getTask(task.taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: 'cancelled by tasks/cancel: the call was interrupted (the namespace is kept); tasks/result returns its result',
    });
    const result = tasks.getTaskResult(task.taskId);
    calls[0]!.finish(failure('operation_cancelled: interrupted'));
    expect((await result).content).toEqual(failure('operation_cancelled: interrupted').content);
    expect(await refusal(tasks.updateTaskStatus('default-1-1', 'cancelled'))).toMatchObject({ data: { reason: 'read' } });
  });

  it("a task its client's cancel stopped says so in its status (request-jobs.ts)", async () => {
    const { tasks, calls } = harness();
    const { task } = await tasks.create(request('execute'));
    calls[0]!.stop.abort(CellStop.byClient(1, 'Esc'));
    expect(await tasks.getTask(task.taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: 'cancelled by the client (request 1: Esc): the call was interrupted (the namespace is kept); tasks/result returns its result',
    });
  });

  it('only cancelling changes a status; nothing creates or stores a task but a task-augmented tools/call', async () => {
    const { tasks } = harness();
    const { task } = await tasks.create(request('call_function'));
    await refusal(tasks.updateTaskStatus(task.taskId, 'completed'));
    await refusal(tasks.createTask({}));
    await refusal(tasks.storeTaskResult(task.taskId));
    expect((await tasks.getTask(task.taskId)).status).toBe('working');
  });

  it('a tool that takes no task is refused as method not found, and nothing starts', async () => {
    const { tasks, calls } = harness();
    const error = await refusal(tasks.create(request('reset')));
    expect(error.code).toBe(-32601);
    expect(calls).toEqual([]);
  });

  it.each([
    ['unknown', 'default-1-99', /no job/],
    ['other_namespace', 'research-1-1', /belongs to namespace "research"/],
    ['malformed', 'x'.repeat(10_000), /not a job handle/],
  ])('a bad id (%s) is refused as invalid params by every method', async (reason, taskId, message) => {
    const { tasks } = harness();
    for (const call of [() => tasks.getTask(taskId), () => tasks.getTaskResult(taskId), () => tasks.updateTaskStatus(taskId, 'cancelled')]) {
      const error = await refusal(call());
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(message);
      expect(error.message.length).toBeLessThan(300);
      expect(error.data).toMatchObject({ code: 'job_not_found', reason });
    }
  });

  it('lists running and unread tasks, oldest first, in pages; a cursor it never gave is refused', async () => {
    const { tasks } = harness();
    const ids = [];
    for (let index = 0; index < 120; index += 1) ids.push((await tasks.create(request('execute'))).task.taskId);
    const first = await tasks.listTasks();
    const second = await tasks.listTasks(first.nextCursor);
    const third = await tasks.listTasks(second.nextCursor);
    expect([...first.tasks, ...second.tasks, ...third.tasks].map((task) => task.taskId)).toEqual(ids);
    expect(third.nextCursor).toBeUndefined();
    expect((await refusal(tasks.listTasks('default-9-9'))).code).toBe(-32602);
  });
});
