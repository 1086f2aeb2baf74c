// Log sentinel: with debug logging on, code and arguments carrying a unique marker never reach a log line
// or runtime_status; timeout and cancellation metadata name only control-plane facts.
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, loggedLines, startServer, taggedProcesses, type TestServer } from './harness.js';

// ---- helpers (kept in this file: every e2e file owns its own) ----

const TAG = randomUUID();



const MARKER = `sentinel${randomUUID().replaceAll('-', '')}`;
const RUNTIME_META_KEYS = ['duration_ms', 'epoch', 'interruption', 'namespace', 'queue_wait_ms', 'request_id', 'sequence'];
const LOG_OPERATION_KEYS = ['code', 'durationMs', 'epoch', 'event', 'interruption', 'level', 'namespace', 'ok', 'op', 'queueWaitMs', 'requestId', 'sequence', 'time'];
const SWALLOW_INTERRUPTS = `import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        s = "${MARKER}"`;

/** A timeout or cancellation answer carries the error and the runtime metadata, nothing of the user's. */
function expectMetadataOnly(result: CallToolResult, code: string, namespace: string): Record<string, any> {
  expect(result.isError).toBe(true);
  const body = result.structuredContent as Record<string, any>;
  // Every execute failure states its status: metadata too, and it carries nothing of the call.
  expect(Object.keys(body).sort()).toEqual(['error', 'runtime', 'status']);
  expect(body.status).toBe('error');
  expect(body.error.code).toBe(code);
  expect(Object.keys(body.error).every((key) => ['code', 'message', 'details'].includes(key))).toBe(true);
  if (body.error.details !== undefined) expect(Object.keys(body.error.details)).toEqual(['replacement_startup_ms']);
  expect(Object.keys(body.runtime).sort()).toEqual(RUNTIME_META_KEYS);
  expect(body.runtime.request_id).not.toBeNull();
  expect(body.runtime.sequence).toBeGreaterThan(0);
  expect(typeof body.runtime.queue_wait_ms).toBe('number');
  expect(body.runtime.namespace).toBe(namespace);
  expect(JSON.stringify(result)).not.toContain(MARKER);
  return body;
}

describe('log sentinel', () => {
  let server: TestServer;
  const statuses: string[] = [];
  const snapshot = async (): Promise<void> => {
    statuses.push(JSON.stringify(await server.call('runtime_status')));
  };

  beforeAll(async () => {
    server = await startServer(
      {
        IPYTHON_MCP_TEST_RUN_TAG: TAG,
        IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1',
        IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1',
        IPYTHON_MCP_MAX_PENDING_OPERATIONS: '1',
        IPYTHON_MCP_QUEUE_WAIT_TIMEOUT_SECONDS: '0.5',
      },
      ['--log-level', 'debug'],
    );
  });

  afterAll(async () => {
    await server.close();
    const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
    expect(left).toEqual([]);
  });

  it('namespace operations with the marker in code, output, values, errors and arguments', async () => {
    const ok = await server.structured('execute', {
      code: `v_${MARKER} = "${MARKER}"\nprint("${MARKER}")\nimport sys\nprint("${MARKER}", file=sys.stderr)\nv_${MARKER}`,
    });
    expect(ok.stdout).toContain(MARKER);
    expect(ok.result.value).toBe(MARKER);
    await snapshot();
    expect((await server.call('execute', { code: `raise ValueError("${MARKER}")` })).isError).toBe(true);
    expect((await server.call('execute', { code: `def ${MARKER}(:\n    pass` })).isError).toBe(true);
    expect((await server.call('execute', { code: `print("${MARKER}" * 5000)` })).isError).toBeFalsy();
    await server.call('execute', { code: `def echo_${MARKER}(text: str) -> str:\n    return text` });
    const echoed = await server.structured('call_function', { name: `echo_${MARKER}`, arguments: { text: MARKER } });
    expect(JSON.stringify(echoed)).toContain(MARKER);
    await server.call('call_function', { name: `missing_${MARKER}`, arguments: { [MARKER]: MARKER } });
    await server.call('search', { query: MARKER });
    await server.call('inspect', { name: `v_${MARKER}` });
    await server.call('inspect', { name: `missing_${MARKER}` });
    await server.call('reload', { modules: [MARKER] });
    await server.call('list');
    await server.call('register_tool', { name: `echo_${MARKER}`, tool_name: `t${MARKER}`, description: MARKER });
    await server.client.callTool({ name: `t${MARKER}`, arguments: { text: MARKER } }).catch(() => undefined);
    await server.call('unregister_tool', { names: [`t${MARKER}`] });
    await server.call('remove', { names: [`v_${MARKER}`, MARKER] });
    // invalid arguments and an unknown tool
    await server.call('execute', { code: 'None', [MARKER]: MARKER });
    await server.client.callTool({ name: `no_${MARKER}`, arguments: { [MARKER]: MARKER } }).catch(() => undefined);
    await snapshot();
  });

  it('a timeout with the marker in its code answers with metadata only (namespace preserved)', async () => {
    const result = await server.call('execute', { code: `s = "${MARKER}"\nwhile True:\n    s = s[::-1]` });
    const body = expectMetadataOnly(result, 'operation_timeout', 'preserved');
    expect(body.runtime).toMatchObject({ interruption: 'timeout', epoch: 1 });
    await snapshot();
  });

  it('runtime_busy and queue_timeout answers carry no marker', async () => {
    const slow = server.call('execute', { code: `import time\nx = "${MARKER}"\ntime.sleep(0.8)` });
    await eventually(() => server.structured('runtime_status'), (value) => value.active === true);
    await snapshot();
    const queued = server.call('execute', { code: `"${MARKER}"` });
    await eventually(() => server.structured('runtime_status'), (value) => value.queue_depth === 1);
    const busy = await server.call('execute', { code: `"${MARKER}"` });
    expect((busy.structuredContent as any).error.code).toBe('runtime_busy');
    expect(JSON.stringify(busy)).not.toContain(MARKER);
    const expired = await queued;
    expect((expired.structuredContent as any).error.code).toBe('queue_timeout');
    expect(JSON.stringify(expired)).not.toContain(MARKER);
    await slow;
  });

  it('a cancellation after dispatch is logged with metadata only', async () => {
    const controller = new AbortController();
    const running = server.client.callTool(
      { name: 'execute', arguments: { code: `import time\nwait = "${MARKER}"\ntime.sleep(10**6)` } },
      undefined,
      { signal: controller.signal, timeout: 60_000 },
    );
    await eventually(() => server.structured('runtime_status'), (value) => value.active === true);
    await snapshot();
    controller.abort(MARKER);
    await expect(running).rejects.toThrow();
    const status = await eventually(
      () => server.structured('runtime_status'),
      (value) => value.last_interruption?.kind === 'cancelled',
      5_000,
    );
    expect(status.last_interruption).toEqual({ kind: 'cancelled', namespace: 'preserved', epoch: 1 });
    const cancelled = await loggedLines(server, 'op.interrupted', (line) => line.interruption === 'cancelled');
    expect(cancelled).toHaveLength(1);
    expect(Object.keys(cancelled[0]!).sort()).toEqual(LOG_OPERATION_KEYS);
    expect(cancelled[0]).toMatchObject({ op: 'execute', code: 'operation_cancelled', namespace: 'preserved', epoch: 1, ok: false });
    expect(typeof cancelled[0]!.sequence).toBe('number');
    expect(cancelled[0]!.requestId).not.toBeNull();
  });

  it('a hard reset and a crash with the marker answer with metadata only', async () => {
    const reset = await server.call('execute', { code: SWALLOW_INTERRUPTS });
    const body = expectMetadataOnly(reset, 'operation_timeout', 'reset');
    expect(body.runtime).toMatchObject({ interruption: 'timeout', epoch: 2 });
    expect(typeof body.error.details.replacement_startup_ms).toBe('number');
    await snapshot();
    const crash = await server.call('execute', { code: `print("${MARKER}")\nimport os\nos._exit(3)` });
    expect((crash.structuredContent as any).error.code).toBe('worker_crashed');
    expect(JSON.stringify(crash)).not.toContain(MARKER);
    await snapshot();
    expect((await server.structured('execute', { code: '1 + 1' })).result.value).toBe(2);
  });

  it('the marker is in no stderr line and in no runtime_status answer', async () => {
    await snapshot();
    const stderr = server.stderr();
    const lines = stderr.split('\n').filter((line) => line.trim().length > 0);
    const logLines = lines.filter((line) => line.startsWith('{'));
    // logging really was on, at debug, and covered the operations above
    expect(logLines.some((line) => line.includes('"level":"debug"'))).toBe(true);
    expect(logLines.filter((line) => line.includes('"op.done"')).length).toBeGreaterThan(10);
    expect(logLines.some((line) => line.includes('"worker.replaced"'))).toBe(true);
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
    for (const line of lines) expect(line).not.toContain(MARKER);
    expect(statuses.length).toBeGreaterThanOrEqual(7);
    for (const status of statuses) expect(status).not.toContain(MARKER);
  });
});
