// The memory guard through a real MCP client: a cell that grows past IPYTHON_MCP_MEMORY_LIMIT_MB is stopped as
// memory_limit, and the outcome it reports is true (preserved: the old objects are there; reset: epoch + 1 and they
// are gone). Every allocation here is bounded: a loop stops itself at 1.5 GiB and no single allocation is larger
// than 2 GiB (and that one is refused by the backstop before a page is touched), so a failing guard cannot take the
// machine down.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MODES, eventually, startServer, taggedProcesses, type TestServer } from './harness.js';

const TAG = randomUUID();
const LIMIT_MB = 400;
const BASE_ENV = { IPYTHON_MCP_TEST_RUN_TAG: TAG, IPYTHON_MCP_MEMORY_LIMIT_MB: String(LIMIT_MB), IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '60' };

/**
 * Appends 8 MiB chunks until stopped, or by itself at 1.5 GiB (192 chunks), counting them in the global `appended`
 * (a partial mutation that must survive a preserved stop). `local`: the list is a function's.
 */
function growingCell(local: boolean): string {
  const loop = ['chunks = []', 'while len(chunks) < 192:', "    chunks.append(b'x' * 2**23)", "    appended['n'] += 1"];
  if (!local) return ["appended = {'n': 0}", ...loop].join('\n');
  return ["appended = {'n': 0}", 'def grow():', ...loop.map((line) => `    ${line}`), '    return len(chunks)', 'grow()'].join('\n');
}

async function exec(server: TestServer, code: string): Promise<Record<string, any>> {
  return server.structured('execute', { code });
}

async function status(server: TestServer): Promise<Record<string, any>> {
  return server.structured('runtime_status');
}

/** What `keep` is now: 41 while the namespace survived, a NameError after a reset. */
async function keep(server: TestServer): Promise<unknown> {
  const result = await exec(server, 'keep');
  // A compact result: `status` is absent on success (docs/protocol.md, "MCP results").
  return result.status === undefined ? result.result.value : result.error.type;
}

/** Checks that the reported outcome is true, and returns it. */
async function expectTruthfulOutcome(server: TestServer, body: Record<string, any>, epochBefore: number): Promise<string> {
  expect(body.error.code).toBe('memory_limit');
  expect(body.runtime.interruption).toBe('memory_limit');
  expect(body.error.details.limit_mb).toBe(LIMIT_MB);
  const namespace = body.runtime.namespace as string;
  const current = await status(server);
  expect(current.last_interruption).toEqual({ kind: 'memory_limit', namespace, epoch: current.epoch });
  if (namespace === 'preserved') {
    expect(current.epoch).toBe(epochBefore);
    expect(await keep(server)).toBe(41);
  } else {
    expect(namespace).toBe('reset');
    expect(current.epoch).toBe(epochBefore + 1);
    expect(await keep(server)).toBe('NameError');
  }
  return namespace;
}

async function expectWorking(server: TestServer): Promise<void> {
  const result = await exec(server, '6 * 7');
  expect(result.result).toEqual({ value: 42 });
  const current = await status(server);
  expect(current.state).toBe('ready');
  expect(current.memory_mb).toBeLessThan(LIMIT_MB);
}

const measurements: string[] = [];
let server: TestServer;

/** A describe block of the fault matrix, run once unsandboxed and once inside --sandbox, each with its own server. */
function inEveryMode(name: string, body: () => void): void {
  describe.each(SANDBOX_MODES)(`${name} ($mode)`, ({ env }) => {
    beforeAll(async () => {
      await server?.close();
      server = await startServer({ ...BASE_ENV, ...env });
    }, 60_000);
    body();
  });
}

afterAll(async () => {
  await server?.close();
  if (measurements.length > 0) console.log(measurements.join('\n'));
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

inEveryMode('a cell that grows past the limit is stopped as memory_limit', () => {
  it('runtime_status reports the memory and the limit, control-plane numbers only', async () => {
    await exec(server, 'keep = 41');
    const current = await status(server);
    expect(current.memory_limit_mb).toBe(LIMIT_MB);
    expect(Number.isInteger(current.memory_mb)).toBe(true);
    expect(current.memory_mb).toBeGreaterThan(10);
    expect(current.memory_mb).toBeLessThan(LIMIT_MB);
  });

  it('a loop filling a function-local list: stopped, the frames freed, the namespace preserved', async () => {
    await exec(server, 'keep = 41');
    const epoch = (await status(server)).epoch;
    const call = await server.call('execute', { code: growingCell(true) });
    expect(call.isError).toBe(true);
    const body = call.structuredContent as Record<string, any>;
    measurements.push(`[measure] function-local loop: ${body.error.message}; peak ${body.error.details.peak_mb} MB`);
    expect(body.error.details.trigger).toBe('watch');
    expect(body.error.details.peak_mb).toBeLessThan(1536);
    expect(await expectTruthfulOutcome(server, body, epoch)).toBe('preserved');
    expect(body.error.details.memory_mb_after).toBeLessThan(LIMIT_MB);
    // Partial mutations stay, as after a timeout: the counter holds the chunks made before the stop (~40).
    const appended = (await exec(server, "appended['n']")).result.value as number;
    expect(appended).toBeGreaterThanOrEqual(20);
    expect(appended).toBeLessThan(192);
    await expectWorking(server);
  });

  it('a loop filling a global list: memory stays above the limit, so the worker is replaced (reset)', async () => {
    await exec(server, 'keep = 41');
    const epoch = (await status(server)).epoch;
    const call = await server.call('execute', { code: growingCell(false) });
    const body = call.structuredContent as Record<string, any>;
    measurements.push(`[measure] global loop: ${body.error.message}`);
    expect(await expectTruthfulOutcome(server, body, epoch)).toBe('reset');
    expect(body.error.details.replacement_startup_ms).toEqual(expect.any(Number));
    await expectWorking(server);
  });

  it("one b'x' * 2**31 is refused by the backstop as memory_limit, before a page is touched", async () => {
    await exec(server, 'keep = 41');
    const epoch = (await status(server)).epoch;
    const call = await server.call('execute', { code: "big = b'x' * 2**31" });
    const body = call.structuredContent as Record<string, any>;
    expect(body.error.details.trigger).toBe('allocation');
    expect(await expectTruthfulOutcome(server, body, epoch)).toBe('preserved');
    expect((await exec(server, "'big' in globals()")).result.value).toBe(false);
    await expectWorking(server);
  });

  it('one 1 GiB allocation under the backstop but past the hard margin kills the worker (reset)', async () => {
    await exec(server, 'keep = 41');
    const epoch = (await status(server)).epoch;
    const call = await server.call('execute', { code: "big = b'x' * 2**30" });
    const body = call.structuredContent as Record<string, any>;
    measurements.push(`[measure] 1 GiB fill: ${body.error.message}; peak ${body.error.details.peak_mb} MB`);
    expect(body.error.details.trigger).toBe('hard');
    expect(await expectTruthfulOutcome(server, body, epoch)).toBe('reset');
    await expectWorking(server);
  });

  it('a subprocess the cell started counts: its growth stops the cell, and the child goes with it', async () => {
    await exec(server, 'keep = 41');
    const epoch = (await status(server)).epoch;
    // ~160 MB/s: new processes are found every 100 ms or more (a /proc scan where the kernel has no children files).
    const child = ['import time', 'chunks = []', 'while len(chunks) < 192:', "    chunks.append(b'x' * 2**23)", '    time.sleep(0.05)'].join('\n');
    const call = await server.call('execute', { code: `import subprocess, sys\nsubprocess.run([sys.executable, '-c', ${JSON.stringify(child)}])` });
    const body = call.structuredContent as Record<string, any>;
    measurements.push(`[measure] growing subprocess: ${body.error.message}; peak ${body.error.details.peak_mb} MB`);
    expect(body.error.details.trigger).toBe('watch');
    // subprocess.run kills its child when KeyboardInterrupt reaches it, so memory falls and the namespace stays.
    expect(await expectTruthfulOutcome(server, body, epoch)).toBe('preserved');
    await expectWorking(server);
  });

  it('a call_function that runs out of memory is memory_limit too', async () => {
    await exec(server, 'keep = 41\ndef grab():\n    return bytearray(2**31)');
    const epoch = (await status(server)).epoch;
    const call = await server.call('call_function', { name: 'grab', arguments: {} });
    const body = call.structuredContent as Record<string, any>;
    expect(await expectTruthfulOutcome(server, body, epoch)).toBe('preserved');
  });
});

inEveryMode('memory that is already above the limit between operations', () => {
  it('does not wedge the runtime: light work runs, del frees it, and growth is still stopped', async () => {
    await exec(server, 'keep = 41');
    const epoch = (await status(server)).epoch;
    // A background thread fills 420 MiB after the cell has answered, so no operation is running to be stopped. Above
    // the limit with the worker's own ~40 MiB, and below the hard margin (500 MiB) even with the sandbox engine's
    // processes (~15 MiB) in the tree, whenever the light cell below happens to take its baseline mid-fill.
    await exec(
      server,
      'import threading, time\n' +
        "def _fill():\n    time.sleep(0.3)\n    globals()['held'] = b'x' * (420 * 2**20)\n" +
        'threading.Thread(target=_fill).start()',
    );
    const above = await eventually(() => status(server), (value) => value.memory_mb > LIMIT_MB, 20_000);
    expect(above.memory_mb).toBeGreaterThan(LIMIT_MB);
    expect(above.state).toBe('ready');
    // An operation that starts above the limit is not stopped for what it started with.
    const light = await exec(server, 'import time\ntime.sleep(0.3)\nkeep, len(held) // 2**20');
    expect(light.status).toBeUndefined();
    expect(light.error).toBeUndefined();
    expect(light.result.value).toEqual([41, 420]);
    expect(light.runtime).toBeUndefined(); // compact: no interruption and no epoch change to report
    expect((await exec(server, 'del held\nkeep')).result.value).toBe(41);
    await eventually(() => status(server), (value) => value.memory_mb < LIMIT_MB, 10_000);
    // Below the limit again, the guard stops growth as before.
    const call = await server.call('execute', { code: growingCell(true) });
    expect(await expectTruthfulOutcome(server, call.structuredContent as Record<string, any>, epoch)).toBe('preserved');
    await expectWorking(server);
  });
});

describe('with the guard off', () => {
  it('IPYTHON_MCP_MEMORY_LIMIT_MB=off: no limit, memory still reported, MemoryError is an ordinary exception', async () => {
    const off = await startServer({ ...BASE_ENV, IPYTHON_MCP_MEMORY_LIMIT_MB: 'off' });
    try {
      const result = await exec(off, "raise MemoryError('explicit')");
      expect(result.status).toBe('error');
      expect(result.error.type).toBe('MemoryError');
      expect((await exec(off, 'import resource\nresource.getrlimit(resource.RLIMIT_DATA)[0] == resource.RLIM_INFINITY')).result.value).toBe(true);
      const current = await status(off);
      expect(current.memory_limit_mb).toBeNull();
      expect(current.memory_mb).toBeGreaterThan(10);
    } finally {
      await off.close();
    }
  });
});
