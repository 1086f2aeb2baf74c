// A client that cancels at its own timeout meets the server's deadline every day (issue 51: the README journal test
// whose cancel and 1 s deadline met replaced the worker one run in three). A real MCP client over stdio cancels a
// sleeping cell over a sweep of moments around its deadline, and early in the cell, where the interrupt once got lost:
// every stop is one interrupt, the state is kept, and the journal names each outcome once.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startServer, taggedProcesses, type TestServer } from './harness.js';

const TAG = randomUUID();
const DEADLINE_SECONDS = 0.3;
/** When the client cancels, in ms after it sent the call: early in the cell, then around the deadline. */
const CANCEL_AT_MS = [5, 10, 20, 40, 260, 280, 290, 295, 298, 300, 302, 305, 310, 320, 340];
const SLEEP = 'import time\ntime.sleep(10**6)';
// sum() is one long C call that never checks for signals and the sleep starts as it returns: a cancel that comes
// while sum() runs reaches the sleep pending, the moment where an interrupt was once lost.
const SLEEP_AFTER_C_CALL = 'import time\ntime.sleep(sum(range(10**7)) * 0 + 10**6)';
const CASES = [...CANCEL_AT_MS.map((at) => ({ at, code: SLEEP })), { at: 30, code: SLEEP_AFTER_C_CALL }];

let scratch: string;
let server: TestServer;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-meet-'));
  server = await startServer(
    { IPYTHON_MCP_TEST_RUN_TAG: TAG, IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2', IPYTHON_MCP_LOG_LEVEL: 'debug' },
    ['--journal', join(scratch, 'meet.ipynb')],
  );
});
afterAll(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

/** The server's JSON log lines of `event`. */
function logged(event: string): Record<string, any>[] {
  return server
    .stderr()
    .split('\n')
    .filter((line) => line.includes(`"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

describe('a client cancel meeting the deadline, over MCP stdio', () => {
  it('ends every stop in one interrupt with the state kept, whichever came first', async () => {
    await server.call('execute', { code: 'kept = "before"' });
    for (const [index, { at, code }] of CASES.entries()) {
      const controller = new AbortController();
      const dispatched = logged('op.dispatched').length;
      const call = server.client.callTool(
        { name: 'execute', arguments: { code, timeout_seconds: DEADLINE_SECONDS } },
        undefined,
        { signal: controller.signal, timeout: 60_000 },
      );
      // The moments count from the server's dispatch of the call (where its deadline starts too), not from the send:
      // on a loaded machine a cancel 5 ms after the send can reach the server before the call left its queue, and a
      // call cancelled there never runs (nothing to interrupt, rightly).
      const waitUntil = performance.now() + 10_000;
      while (logged('op.dispatched').length === dispatched && performance.now() < waitUntil) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const timer = setTimeout(() => controller.abort(), at);
      await call.catch(() => undefined); // aborted: the SDK rejects; or the deadline's result came first
      clearTimeout(timer);
      // The server still interrupts and verifies after the client let go: wait for its outcome line.
      const [line] = (await eventually(
        async () => logged('op.interrupted').slice(index),
        (lines) => lines.length >= 1,
        10_000,
      )) as Record<string, any>[];
      const label = `cancel at ${at} ms${code === SLEEP ? '' : ', during a C call before the sleep'}`;
      expect(line, label).toMatchObject({ namespace: 'preserved', epoch: 1 });
      expect(['cancelled', 'timeout'], label).toContain(line!.interruption);
      if (at <= 40) expect(line!.interruption, label).toBe('cancelled');
    }
    const status = await server.structured('runtime_status');
    expect(status).toMatchObject({ epoch: 1, state: 'ready' });
    expect((await server.structured('execute', { code: 'kept' })).result.value).toBe('before');
    // One outcome and one interrupt per stop.
    expect(logged('op.interrupted')).toHaveLength(CASES.length);
    expect(logged('op.interrupt_sent')).toHaveLength(CASES.length);
    expect(logged('worker.replaced')).toEqual([]);
  }, 120_000);

  it('says in the journal, once per cell, what stopped it and that the state was kept', async () => {
    const notebook = await eventually(
      async () => JSON.parse(readFileSync(join(scratch, 'meet.ipynb'), 'utf8')) as { cells: { cell_type: string; source: string | string[] }[] },
      (value) => value.cells.filter((cell) => cell.cell_type === 'markdown').length >= CASES.length + 1,
      10_000,
    );
    const notes = notebook.cells
      .filter((cell) => cell.cell_type === 'markdown')
      .map((cell) => (Array.isArray(cell.source) ? cell.source.join('') : cell.source))
      .slice(1); // the session's heading
    expect(notes).toHaveLength(CASES.length);
    for (const note of notes) expect(note).toMatch(/^\*\*(?:Cancelled|Timed out)\.\*\* .*the namespace state was kept/);
  });
});
