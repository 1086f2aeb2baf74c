// MCP tasks (protocol 2025-11-25) through a real SDK client over stdio and over --http: a task-augmented tools/call
// answers with a task at once and runs as a detached cell; tasks/get reports its status, tasks/result returns the
// call's result as the blocking call would have, tasks/cancel interrupts it (the namespace kept). Bad task ids get a
// JSON-RPC error and run nothing. Timed assertions are generous upper bounds only.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';
import { connectHttp, startHttpServer } from './http-harness.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: '120', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '3' });
  await server.structured('execute', { code: 'import time, os\nx = "defined before"' });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** A task-augmented tools/call: the answer is the task, not the result. */
async function startTask(client: Client, name: string, args: Record<string, unknown>): Promise<Task> {
  const created = await client.request({ method: 'tools/call', params: { name, arguments: args } }, CreateTaskResultSchema, { task: { ttl: 60_000 } });
  return created.task;
}

/** Polls tasks/get (faster than the suggested interval: tests wait for nothing else) until `accept` holds. */
async function pollUntil(client: Client, taskId: string, accept: (task: Task) => boolean, ms = 30_000): Promise<Task[]> {
  const seen: Task[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    seen.push(task);
    if (accept(task)) return seen;
    if (Date.now() > deadline) throw new Error(`task ${taskId} is still ${task.status} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const ended = (task: Task) => task.status !== 'working';

async function taskResult(client: Client, taskId: string): Promise<CallToolResult> {
  return (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult;
}

/** The JSON-RPC error a request fails with. */
async function rpcError(request: Promise<unknown>): Promise<McpError> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, 'the request fails').toBeInstanceOf(McpError);
  return error as McpError;
}

describe('the tasks capability', () => {
  it('is advertised, and execute, call_function and registered tools take tasks; the other tools do not', async () => {
    expect(server.client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    await server.call('execute', { code: 'def slow_double(n: int) -> int:\n    "Doubles n, slowly."\n    time.sleep(0.2)\n    return 2 * n' });
    await server.call('register_tool', { name: 'slow_double' });
    const { tools } = await server.client.listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toMatchObject({ execute: 'optional', call_function: 'optional', slow_double: 'optional' });
    for (const name of ['runtime_status', 'list', 'search', 'inspect', 'job', 'register_tool']) expect(support[name], name).toBeUndefined();
  });

  it('a tool that takes no task refuses one (method not found) and runs nothing', async () => {
    const error = await rpcError(startTask(server.client, 'reset', {}));
    expect(error.code).toBe(-32601);
    expect(error.message).toContain('does not run as a task');
    expect((await server.structured('execute', { code: 'x' })).result.value).toBe('defined before');
  });
});

describe('a task-augmented execute', () => {
  it('answers with a task at once; tasks/get follows it to completed; tasks/result returns the cell result', async () => {
    const started = performance.now();
    const task = await startTask(server.client, 'execute', { code: 'print("started", flush=True)\ntime.sleep(3)\n"finished"' });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(task).toMatchObject({ status: 'working', ttl: null, pollInterval: expect.any(Number) });
    expect(task.taskId).toMatch(/^default-\d+-\d+$/);
    const seen = await pollUntil(server.client, task.taskId, ended);
    expect(seen.at(-1)!.status).toBe('completed');
    // While it ran, the status message showed the output so far.
    expect(seen.some((each) => each.status === 'working' && /running for [\d.]+ s; output so far ends: started/.test(each.statusMessage ?? ''))).toBe(true);
    const result = await taskResult(server.client, task.taskId);
    expect(result.isError).not.toBe(true);
    const structured = result.structuredContent as Record<string, any>;
    expect(structured.result.value).toBe('finished');
    expect(structured.stdout).toContain('started');
    expect((result._meta as Record<string, any>)['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
    // A result is returned once; the id then says so.
    const again = await rpcError(server.client.experimental.tasks.getTask(task.taskId));
    expect(again.code).toBe(-32602);
    expect(again.data).toMatchObject({ code: 'job_not_found', reason: 'read' });
  }, 60_000);

  it('returns exactly what the blocking call returns', async () => {
    const code = 'print("same")\n[1, 2, {"a": None}]';
    const blocking = await server.call('execute', { code });
    const task = await startTask(server.client, 'execute', { code });
    await pollUntil(server.client, task.taskId, ended);
    const { _meta: taskMeta, ...viaTask } = await taskResult(server.client, task.taskId);
    const { _meta: blockingMeta, ...direct } = blocking;
    // Only the execution count differs: the task's cell is the next one.
    const counted = (result: Record<string, any>) => JSON.stringify(result).replaceAll(/"execution_count":\d+/g, '"execution_count":0').replaceAll(/\[\d+\]/g, '[N]');
    expect(counted(viaTask)).toEqual(counted(direct));
    expect(Object.keys(taskMeta ?? {}).sort()).toEqual([...Object.keys(blockingMeta ?? {}), 'io.modelcontextprotocol/related-task'].sort());
  }, 60_000);

  it('tasks/result waits for a running cell and then returns its result', async () => {
    const task = await startTask(server.client, 'execute', { code: 'time.sleep(1.5)\n"waited"' });
    const result = await taskResult(server.client, task.taskId);
    expect((result.structuredContent as Record<string, any>).result.value).toBe('waited');
  }, 60_000);

  it('the SDK client’s own task stream ends with the result', async () => {
    const messages = [];
    for await (const message of server.client.experimental.tasks.callToolStream({ name: 'execute', arguments: { code: 'time.sleep(1)\n6 * 7' } }, CallToolResultSchema, { task: {} })) {
      messages.push(message);
    }
    expect(messages[0]!.type).toBe('taskCreated');
    const last = messages.at(-1)!;
    expect(last.type).toBe('result');
    if (last.type === 'result') expect((last.result.structuredContent as Record<string, any>).result.value).toBe(42);
  }, 60_000);

  it('call_function and a registered tool run as tasks too', async () => {
    const viaCall = await startTask(server.client, 'call_function', { name: 'slow_double', arguments: { n: 4 } });
    const viaTool = await startTask(server.client, 'slow_double', { n: 5 });
    await pollUntil(server.client, viaTool.taskId, ended);
    expect((await taskResult(server.client, viaCall.taskId)).structuredContent).toMatchObject({ value: 8 });
    expect((await taskResult(server.client, viaTool.taskId)).structuredContent).toMatchObject({ value: 10 });
  }, 60_000);

  it('a task is a job: the job tool reads it as well', async () => {
    const task = await startTask(server.client, 'execute', { code: 'time.sleep(0.5)\n"via job"' });
    const done = await server.structured('job', { job: task.taskId, wait_seconds: 30 });
    expect(done.result.value).toBe('via job');
    expect((await rpcError(server.client.experimental.tasks.getTask(task.taskId))).data).toMatchObject({ reason: 'read' });
  }, 60_000);

  it('a task with detach_after_seconds does not detach again: the task is already its handle', async () => {
    const task = await startTask(server.client, 'execute', { code: 'time.sleep(1.5)\n"whole"', detach_after_seconds: 0.2 });
    await pollUntil(server.client, task.taskId, ended);
    expect((await taskResult(server.client, task.taskId)).structuredContent).toMatchObject({ result: { value: 'whole' } });
  }, 60_000);

  it('invalid arguments: the task fails with the blocking call’s refusal, and nothing runs', async () => {
    const task = await startTask(server.client, 'execute', { code: 'ran_bad_task = True', timeout_seconds: -1 });
    const [last] = (await pollUntil(server.client, task.taskId, ended)).slice(-1);
    expect(last!.status).toBe('failed');
    expect(last!.statusMessage).toMatch(/invalid_arguments|timeout_seconds/);
    const result = await taskResult(server.client, task.taskId);
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Record<string, any>).error.code).toBe('invalid_arguments');
    expect((await server.structured('execute', { code: '"ran_bad_task" in globals()' })).result.value).toBe(false);
  }, 60_000);
});

describe('tasks/cancel', () => {
  it('interrupts the cell and keeps the namespace', async () => {
    const task = await startTask(server.client, 'execute', { code: 'partial = 1\nprint("sleeping", flush=True)\ntime.sleep(600)' });
    await pollUntil(server.client, task.taskId, (each) => (each.statusMessage ?? '').includes('sleeping'));
    const cancelled = await server.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await server.client.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
    const result = await taskResult(server.client, task.taskId);
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Record<string, any>).error.code).toBe('operation_cancelled');
    const kept = await server.structured('execute', { code: '(x, partial)' });
    expect(kept.result.value).toEqual(['defined before', 1]);
  }, 60_000);

  it('a finished task cannot be cancelled', async () => {
    const task = await startTask(server.client, 'execute', { code: '1' });
    await pollUntil(server.client, task.taskId, ended);
    const error = await rpcError(server.client.experimental.tasks.cancelTask(task.taskId));
    expect(error.message).toContain('terminal status');
    expect((await taskResult(server.client, task.taskId)).structuredContent).toMatchObject({ result: { value: 1 } });
  }, 60_000);
});

describe('a task whose cell crashes the worker', () => {
  it('reports failed, and its result is the crash with the epoch change', async () => {
    const before = await server.structured('runtime_status');
    const task = await startTask(server.client, 'execute', { code: 'time.sleep(1)\nos._exit(3)' });
    const [last] = (await pollUntil(server.client, task.taskId, ended)).slice(-1);
    expect(last!.status).toBe('failed');
    expect(last!.statusMessage).toBeTruthy();
    const result = await taskResult(server.client, task.taskId);
    expect(result.isError).toBe(true);
    const structured = result.structuredContent as Record<string, any>;
    expect(structured.error.code).toBe('worker_crashed');
    expect(structured.runtime.epoch).toBeGreaterThan(before.epoch);
    await server.structured('execute', { code: 'import time, os\nx = "defined before"' });
  }, 60_000);
});

describe('bad task ids', () => {
  it.each([
    ['an unknown id of this namespace', 'default-1-999999', 'unknown', /no job/],
    ['an id of another namespace', 'research-1-1', 'other_namespace', /belongs to namespace "research"/],
    ['junk', 'not a task', 'malformed', /not a job handle/],
    ['a very long id', 'x'.repeat(5000), 'malformed', /not a job handle/],
  ])('%s: tasks/get, tasks/result and tasks/cancel answer invalid params and run nothing', async (_label, taskId, reason, message) => {
    const status = await server.structured('runtime_status');
    const { tasks } = server.client.experimental;
    for (const request of [() => tasks.getTask(taskId), () => tasks.getTaskResult(taskId, CallToolResultSchema), () => tasks.cancelTask(taskId)]) {
      const error = await rpcError(request());
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(message);
      expect(error.message.length).toBeLessThan(400);
      expect(error.data).toMatchObject({ code: 'job_not_found', reason });
    }
    const after = await server.structured('runtime_status');
    expect(after.epoch).toBe(status.epoch);
    expect(after.queue_depth ?? 0).toBe(0);
    expect(after.active ?? null).toBe(null);
  });

  it.each([
    ['a number', 7],
    ['null', null],
    ['an object', { id: 'default-1-1' }],
  ])('a task id that is %s is refused by the SDK’s request check, naming the field', async (_label, taskId) => {
    // The SDK checks tasks/* params before the store sees them; it answers -32603 (internal error) for a bad type.
    const error = await rpcError(server.client.request({ method: 'tasks/get', params: { taskId } } as never, CallToolResultSchema));
    expect([-32602, -32603]).toContain(error.code);
    expect(error.message).toContain('taskId');
    expect(error.message).toContain('expected string');
  });
});

describe('the result bounds', () => {
  it('finished, unread tasks count with detached cells: past 32, the oldest is dropped and says so', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 34; index += 1) {
      const task = await startTask(server.client, 'execute', { code: `${index}` });
      await pollUntil(server.client, task.taskId, ended);
      ids.push(task.taskId);
    }
    const listed = await server.client.experimental.tasks.listTasks();
    expect(listed.tasks.map((task) => task.taskId)).toEqual(ids.slice(2));
    expect(listed.tasks.every((task) => task.status === 'completed')).toBe(true);
    for (const dropped of ids.slice(0, 2)) {
      const error = await rpcError(server.client.experimental.tasks.getTask(dropped));
      expect(error.data).toMatchObject({ code: 'job_not_found', reason: 'dropped' });
      expect(error.message).toContain('at most 32 results');
    }
    for (const [index, kept] of ids.slice(2).entries()) {
      expect((await taskResult(server.client, kept)).structuredContent).toMatchObject({ result: { value: index + 2 } });
    }
    expect((await server.client.experimental.tasks.listTasks()).tasks).toEqual([]);
  }, 120_000);
});

describe('over --http', () => {
  it('a task is read from another session of its namespace, and refused by another namespace', async () => {
    const http = await startHttpServer({ IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: '60', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2' });
    try {
      const first = await connectHttp(http.url, http.token);
      const task = await startTask(first.client, 'execute', { code: 'import time\ntime.sleep(2)\n"survived"' });
      expect(task.status).toBe('working');
      await first.close();
      const other = await connectHttp(`${http.url}/research`, http.token);
      for (const request of [() => other.client.experimental.tasks.getTask(task.taskId), () => other.client.experimental.tasks.cancelTask(task.taskId)]) {
        const error = await rpcError(request());
        expect(error.code).toBe(-32602);
        expect(error.message).toContain('belongs to namespace "default", not "research"');
        expect(error.data).toMatchObject({ reason: 'other_namespace' });
      }
      expect((await other.client.experimental.tasks.listTasks()).tasks).toEqual([]);
      const second = await connectHttp(http.url, http.token);
      expect((await second.client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
      await pollUntil(second.client, task.taskId, ended);
      expect((await taskResult(second.client, task.taskId)).structuredContent).toMatchObject({ result: { value: 'survived' } });
      await second.close();
      await other.close();
    } finally {
      expect(await http.stop()).toBe(0);
    }
  }, 90_000);

  it('tasks/cancel from another session of the namespace stops the cell and keeps the namespace', async () => {
    const http = await startHttpServer({ IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS: '60', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2' });
    try {
      const first = await connectHttp(http.url, http.token);
      await first.structured('execute', { code: 'import time\nx = "defined before"' });
      const task = await startTask(first.client, 'execute', { code: 'time.sleep(600)' });
      const second = await connectHttp(http.url, http.token);
      expect((await second.client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
      const result = await taskResult(first.client, task.taskId);
      expect((result.structuredContent as Record<string, any>).error.code).toBe('operation_cancelled');
      expect((await second.structured('execute', { code: 'x' })).result.value).toBe('defined before');
      await first.close();
      await second.close();
    } finally {
      expect(await http.stop()).toBe(0);
    }
  }, 90_000);
});
