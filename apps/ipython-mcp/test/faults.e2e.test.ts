// Fault suite over a real stdio MCP client and real worker processes: every case ends with the expected
// epoch and namespace outcome, and (unless the runtime is meant to be unavailable) with a working execute.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MODES, childPids, eventually, expectOk, fullRuntime, isAlive, startServer, taggedProcesses, waitForExit, type TestServer } from './harness.js';

// ---- helpers (kept in this file: every e2e file owns its own) ----

/** Every process this file starts carries this tag in its environment, so the orphan check sees only ours. */
const TAG = randomUUID();
const BASE_ENV = {
  IPYTHON_MCP_TEST_RUN_TAG: TAG,
  IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1',
  IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1',
  IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '10',
};

/** Live server and worker processes started by this file (found through /proc, restricted by the tag). */


/** The sandbox mode of the block that is running (see {@link inEveryMode}); unsandboxed elsewhere. */
let mode: (typeof SANDBOX_MODES)[number] = SANDBOX_MODES[0];

/** A describe block of the fault matrix, run once unsandboxed and once inside --sandbox. */
function inEveryMode(name: string, body: () => void): void {
  describe.each(SANDBOX_MODES)(`${name} ($mode)`, (each) => {
    beforeAll(() => {
      mode = each;
    });
    afterAll(() => {
      mode = SANDBOX_MODES[0];
    });
    body();
  });
}

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({ ...BASE_ENV, ...mode.env, ...env });
}

async function exec(server: TestServer, code: string): Promise<Record<string, any>> {
  return server.structured('execute', { code });
}

async function status(server: TestServer): Promise<Record<string, any>> {
  return server.structured('runtime_status');
}

/** Waits until the warm standby is ready, so hard recovery measures the standby path. */
async function standbyReady(server: TestServer): Promise<void> {
  const current = await eventually(() => status(server), (value) => value.standby === 'ready', 20_000);
  expect(current.standby).toBe('ready');
}

async function withServer(env: Record<string, string>, body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await start(env);
  try {
    await body(server);
    expect(server.transportErrors).toEqual([]);
  } finally {
    await server.close();
  }
}

/** The seed's metadata of an interrupted operation: all seven fields, whatever the outcome. */
const INTERRUPTED_RUNTIME_KEYS = ['duration_ms', 'epoch', 'interruption', 'namespace', 'queue_wait_ms', 'request_id', 'sequence'];

function expectInterrupted(body: Record<string, any>, expected: Record<string, unknown>): void {
  expect(Object.keys(body.runtime).sort()).toEqual(INTERRUPTED_RUNTIME_KEYS);
  expect(body.runtime).toMatchObject(expected);
  expect(body.runtime.sequence).toBeGreaterThan(0);
  expect(body.runtime.request_id).not.toBeNull();
}

/** A working execute in the expected epoch, as every case ends. */
async function expectWorking(server: TestServer, epoch: number): Promise<void> {
  const raw = await server.call('execute', { code: '6 * 7' });
  const result = raw.structuredContent as Record<string, any>;
  expectOk(result);
  expect(result.result).toEqual({ value: 42 });
  // Any epoch change was reported by the failure that caused it: this result has nothing new to say.
  expect(result).not.toHaveProperty('runtime');
  expect(fullRuntime(raw)).toMatchObject({ epoch, interruption: null, namespace: null });
  const current = await status(server);
  expect(current.epoch).toBe(epoch);
  expect(current.state).toBe('ready');
}

const SWALLOW_INTERRUPTS = [
  'import time',
  'while True:',
  '    try:',
  '        time.sleep(0.05)',
  '    except KeyboardInterrupt:',
  '        pass',
].join('\n');

const measurements: string[] = [];

afterAll(async () => {
  if (measurements.length > 0) console.log(measurements.join('\n'));
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

// ---- cooperative interruption: the namespace is preserved ----

inEveryMode('cooperative interruption keeps the namespace', () => {
  it('a pure-Python busy loop past its deadline is interrupted; partial mutations stay visible', async () => {
    await withServer({}, async (server) => {
      await exec(server, 'before = [1, 2, 3]');
      const call = await server.call('execute', {
        code: [
          'progress = []',
          'counter = {"n": 0}',
          'while True:',
          '    counter["n"] += 1',
          '    if len(progress) < 100000:',
          '        progress.append(counter["n"])',
        ].join('\n'),
      });
      expect(call.isError).toBe(true);
      const body = call.structuredContent as Record<string, any>;
      expect(body.error.code).toBe('operation_timeout');
      expectInterrupted(body, { interruption: 'timeout', namespace: 'preserved', epoch: 1 });
      const after = await exec(server, 'len(progress) > 0, counter["n"] >= len(progress), progress[:3], before');
      expect(after.result.value).toEqual([true, true, [1, 2, 3], [1, 2, 3]]);
      expect((await status(server)).last_interruption).toEqual({ kind: 'timeout', namespace: 'preserved', epoch: 1 });
      await expectWorking(server, 1);
    });
  });

  it.each([
    ['time.sleep(10**6)', 'import time\nmarker = "set before sleeping"\ntime.sleep(10**6)'],
    ['a blocking queue.Queue().get()', 'import queue\nmarker = "set before blocking"\nqueue.Queue().get()'],
    ['threading.Event().wait()', 'import threading\nmarker = "set before waiting"\nthreading.Event().wait()'],
  ])('%s is interrupted and the namespace preserved', async (_name, code) => {
    await withServer({}, async (server) => {
      const pid = (await exec(server, 'import os\nos.getpid()')).result.value;
      const call = await server.call('execute', { code });
      expect(call.isError).toBe(true);
      const body = call.structuredContent as Record<string, any>;
      expect(body.error.code).toBe('operation_timeout');
      expectInterrupted(body, { interruption: 'timeout', namespace: 'preserved', epoch: 1 });
      const after = await exec(server, 'marker.startswith("set before"), os.getpid()');
      expect(after.result.value).toEqual([true, pid]);
      await expectWorking(server, 1);
    });
  });
});

// ---- hard recovery: the worker is replaced ----

inEveryMode('hard recovery replaces the worker', () => {
  it('a loop that swallows KeyboardInterrupt is killed after the grace; the warm standby takes over in epoch 2', async () => {
    await withServer({ IPYTHON_MCP_PRELOAD_MODULES: 'json', IPYTHON_MCP_MODULE_ALIASES: '{"json": "js"}' }, async (server) => {
      await exec(server, 'before = "old epoch"');
      await standbyReady(server);
      const sentAt = performance.now();
      const call = await server.call('execute', { code: SWALLOW_INTERRUPTS });
      const answeredAt = performance.now();
      const firstOk = await exec(server, 'js.dumps([1])');
      const okAt = performance.now();
      expect(call.isError).toBe(true);
      const body = call.structuredContent as Record<string, any>;
      expect(body.error.code).toBe('operation_timeout');
      expectInterrupted(body, { interruption: 'timeout', namespace: 'reset', epoch: 2 });
      // The text block, all Codex (and Claude Code, for an error) shows, states the same facts.
      const text = (call.content[0] as { text: string }).text;
      expect(text).toMatch(/^error operation_timeout: /);
      expect(text).toContain('interruption timeout, namespace reset]');
      expect(text).toMatch(/\[runtime: request_id \d+, sequence \d+, epoch 2, queue_wait_ms \d+, duration_ms \d+, /);
      expect(typeof body.error.details?.replacement_startup_ms).toBe('number');
      // configured preloads and aliases are restored in the new epoch; user names are gone
      expect(firstOk.result.value).toBe('[1]');
      // The timeout answer already reported epoch 2: the next success has nothing new to say.
      expect(firstOk).not.toHaveProperty('runtime');
      const gone = await server.call('execute', { code: 'before' });
      expect(gone.isError).toBe(true);
      expect((gone.structuredContent as any).error.type).toBe('NameError');
      const current = await status(server);
      expect(current).toMatchObject({ epoch: 2, last_interruption: { kind: 'timeout', namespace: 'reset', epoch: 2 } });
      expect(typeof current.replacement_startup_ms).toBe('number');
      expect(current.replacement_startup_ms).toBe(body.error.details.replacement_startup_ms);
      // deadline (1 s after dispatch) -> first successful execute; generous bound only: the number is recorded.
      const recovery = okAt - sentAt - 1000;
      measurements.push(
        `[measure] hard recovery (deadline -> first successful execute, warm standby, grace 1000 ms): ${Math.round(recovery)} ms; ` +
          `deadline -> timeout response: ${Math.round(answeredAt - sentAt - 1000)} ms; replacement_startup_ms: ${String(current.replacement_startup_ms)}`,
      );
      expect(recovery).toBeLessThan(1000 + 5000);
      await expectWorking(server, 2);
    });
  });

  it.each([
    ['os._exit(1)', 'import os\nos._exit(1)', { exitCode: 1 }],
    ['a segfault via ctypes', 'import ctypes\nctypes.string_at(0)', { signal: 'SIGSEGV' }],
    ['os.kill(os.getpid(), 9)', 'import os\nos.kill(os.getpid(), 9)', { signal: 'SIGKILL' }],
  ])('%s during a cell: worker_crashed, namespace reset, epoch 2', async (_name, code, details) => {
    await withServer({}, async (server) => {
      await exec(server, 'before = 1');
      const call = await server.call('execute', { code });
      expect(call.isError).toBe(true);
      const body = call.structuredContent as Record<string, any>;
      expect(body.error.code).toBe('worker_crashed');
      expect(body.error.details).toMatchObject(details);
      expectInterrupted(body, { interruption: 'crash', namespace: 'reset', epoch: 2 });
      expect((await status(server)).last_interruption).toEqual({ kind: 'crash', namespace: 'reset', epoch: 2 });
      const gone = await server.call('execute', { code: 'before' });
      expect((gone.structuredContent as any).error.type).toBe('NameError');
      await expectWorking(server, 2);
    });
  });

  it('a worker that dies while idle is replaced before the next operation', async () => {
    await withServer({}, async (server) => {
      await exec(server, 'import os, threading, time\nthreading.Thread(target=lambda: (time.sleep(0.3), os._exit(7)), daemon=True).start()');
      const current = await eventually(() => status(server), (value) => value.epoch === 2, 10_000);
      expect(current.epoch).toBe(2);
      expect(current.last_interruption).toEqual({ kind: 'crash', namespace: 'reset', epoch: 2 });
      await expectWorking(server, 2);
    });
  });

  it('an epoch change no result has reported yet shows on the next success', async () => {
    await withServer({}, async (server) => {
      await exec(server, 'import os, threading, time\nthreading.Thread(target=lambda: (time.sleep(0.3), os._exit(7)), daemon=True).start()');
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const raw = await server.call('execute', { code: '1' });
      const next = raw.structuredContent as Record<string, any>;
      expect(next.runtime).toMatchObject({ epoch: 2 });
      expect(next.runtime).not.toHaveProperty('interruption');
      expect((raw.content[0] as { text: string }).text).toMatch(/^Out\[\d+\]: 1\n\[runtime: epoch 2/);
      expectOk(next);
      // Reported once: the one after says nothing.
      expect(await exec(server, '2')).not.toHaveProperty('runtime');
      await expectWorking(server, 2);
    });
  });
});

// ---- things that must not kill or reset the worker ----

describe('the worker survives', () => {
  it.each([
    ['sys.exit()', 'import sys\nsys.exit()'],
    ['sys.exit(3)', 'import sys\nsys.exit(3)'],
    ['raise SystemExit in a nested call', 'def leave():\n    raise SystemExit("bye")\nleave()'],
    ['exit()', 'exit()'],
    ['quit()', 'quit()'],
    ['a __repr__ that raises SystemExit', 'class Leaving:\n    def __repr__(self):\n        raise SystemExit(5)\nLeaving()'],
    ['a __repr__ that raises KeyboardInterrupt', 'class Stopping:\n    def __repr__(self):\n        raise KeyboardInterrupt\nStopping()'],
  ])('%s: same process, epoch 1, namespace intact', async (_name, code) => {
    await withServer({}, async (server) => {
      const pid = (await exec(server, 'import os\nkeep = "kept"\nos.getpid()')).result.value;
      const result = await server.call('execute', { code });
      expect(result.structuredContent as any).not.toHaveProperty('runtime');
      expect(fullRuntime(result)).toMatchObject({ epoch: 1, interruption: null });
      const after = await exec(server, 'keep, os.getpid()');
      expect(after.result.value).toEqual(['kept', pid]);
      await expectWorking(server, 1);
    });
  });

  it('a function that calls sys.exit() through call_function', async () => {
    await withServer({}, async (server) => {
      const pid = (await exec(server, 'import os, sys\ndef leave():\n    sys.exit(2)\nos.getpid()')).result.value;
      const result = await server.call('call_function', { name: 'leave', arguments: {} });
      expect(result.isError).toBe(true);
      expect(result.structuredContent as any).not.toHaveProperty('runtime');
      expect(fullRuntime(result).epoch).toBe(1);
      expect((await exec(server, 'os.getpid()')).result.value).toBe(pid);
      await expectWorking(server, 1);
    });
  });

  it('closing fd 1 and fd 2: later fd-level, Python and subprocess output is still captured', async () => {
    // What is tested is capture, not the deadline: a Python child's start-up can pass this file's 1 s deadline on a
    // loaded machine, so this case gets a roomy one.
    await withServer({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' }, async (server) => {
      const pid = (await exec(server, 'import os\nos.getpid()')).result.value;
      const closing = await exec(server, 'import os\nos.close(1)\nos.close(2)\nprint("python-level after close")');
      expectOk(closing);
      expect(closing.stdout).toBe('python-level after close\n');
      const later = await exec(
        server,
        [
          'import os, subprocess, sys',
          'os.write(1, b"fd one\\n")',
          'os.write(2, b"fd two\\n")',
          'print("python out")',
          'print("python err", file=sys.stderr)',
          'subprocess.run([sys.executable, "-c", "import sys; print(\'child out\'); print(\'child err\', file=sys.stderr)"])',
          'None',
        ].join('\n'),
      );
      expectOk(later);
      expect(later.stdout).toContain('fd one\n');
      expect(later.stdout).toContain('python out\n');
      expect(later.stdout).toContain('child out\n');
      expect(later.stderr).toContain('fd two\n');
      expect(later.stderr).toContain('python err\n');
      expect(later.stderr).toContain('child err\n');
      expect((await exec(server, 'os.getpid()')).result.value).toBe(pid);
      await expectWorking(server, 1);
    });
  });

  it('a thread that keeps printing after its cell ended leaks into no later result and not onto the MCP stdout', async () => {
    await withServer({}, async (server) => {
      const inside = await exec(server, 'import threading\nt = threading.Thread(target=lambda: print("joined inside")); t.start(); t.join()');
      expect(inside.stdout).toBe('joined inside\n');
      const started = await exec(
        server,
        [
          'import sys, threading, time',
          'def chatter():',
          '    for i in range(600):',
          '        print("LEAK-OUT", i)',
          '        sys.stderr.write("LEAK-ERR %d\\n" % i)',
          '        time.sleep(0.005)',
          'chatter_thread = threading.Thread(target=chatter, daemon=True)',
          'chatter_thread.start()',
          'time.sleep(0.05)',
        ].join('\n'),
      );
      expectOk(started);
      for (let index = 0; index < 15; index += 1) {
        const result = await exec(server, `import time\ntime.sleep(0.05)\nprint("clean", ${index})`);
        expect(result.stdout).toBe(`clean ${index}\n`);
        expect(result).not.toHaveProperty('stderr');
      }
      expect((await exec(server, 'chatter_thread.is_alive()')).result.value).toBe(true);
      expect(server.transportErrors).toEqual([]);
      await expectWorking(server, 1);
    });
  });

  it('a long-lived thread pool: work submitted by a cell prints into that cell, and only there', async () => {
    await withServer({}, async (server) => {
      const first = await exec(server, 'from concurrent.futures import ThreadPoolExecutor\npool = ThreadPoolExecutor(2)\npool.submit(print, "first").result()');
      expect(first.stdout).toBe('first\n');
      const second = await exec(server, 'pool.submit(print, "second").result()');
      expect(second.stdout).toBe('second\n');
      await exec(server, 'import time\nlate = pool.submit(lambda: (time.sleep(0.2), print("LATE")))');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const during = await exec(server, 'import time\ntime.sleep(0.4)\nprint("mine")');
      expect(during.stdout).toBe('mine\n');
      await expectWorking(server, 1);
    });
  });
});

// ---- an interrupt that arrives after its operation finished ----

describe('a late interrupt never hits the next operation', () => {
  it('provoked many times around the deadline: the following operations are never interrupted', async () => {
    await withServer({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '0.25' }, async (server) => {
      await exec(server, 'import time\nfollowers = 0');
      let timedOut = 0;
      let finished = 0;
      for (let round = 0; round < 40; round += 1) {
        // Around the 250 ms deadline (a few ms of round trip on top of the sleep): many finish just before it or
        // are interrupted just after they finished; one in ten is clearly late.
        const sleep = round % 10 === 9 ? '0.270' : (0.238 + (round % 9) * 0.0015).toFixed(4);
        const racing = await server.call('execute', { code: `time.sleep(${sleep})` });
        const body = racing.structuredContent as Record<string, any>;
        if (racing.isError) {
          expect(body.error.code).toBe('operation_timeout');
          expectInterrupted(body, { interruption: 'timeout', namespace: 'preserved', epoch: 1 });
          timedOut += 1;
        } else {
          finished += 1;
        }
        // The follower blocks in a sleep, where a stray SIGINT would land at once.
        const followerResult = await server.call('execute', { code: 'time.sleep(0.03)\nfollowers += 1\nfollowers' });
        const follower = followerResult.structuredContent as Record<string, any>;
        expectOk(follower);
        expect(follower.result.value).toBe(round + 1);
        expect(follower).not.toHaveProperty('runtime');
        expect(fullRuntime(followerResult)).toMatchObject({ epoch: 1, interruption: null });
      }
      measurements.push(`[measure] late-interrupt race: ${timedOut} interrupted near the deadline, ${finished} finished first`);
      expect(timedOut).toBeGreaterThan(0);
      const current = await status(server);
      expect(current.epoch).toBe(1);
      expect(current.last_interruption).toMatchObject({ namespace: 'preserved' });
    });
  });
});

// ---- a replacement that cannot start ----

describe('a replacement that cannot start', () => {
  it('leaves the runtime unavailable with a bounded error; namespace operations fail, runtime_status answers', async () => {
    const library = mkdtempSync(join(tmpdir(), 'ipython-mcp-flaky-'));
    try {
      // Succeeds in the first process that imports it, fails in every later one.
      writeFileSync(
        join(library, 'flaky_preload.py'),
        [
          'import os',
          'MARKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "first-worker-started")',
          'if os.path.exists(MARKER):',
          '    raise RuntimeError("this library refuses to load in a second worker")',
          'open(MARKER, "w").close()',
        ].join('\n'),
      );
      await withServer(
        { IPYTHON_MCP_LIBRARY_PATHS: library, IPYTHON_MCP_PRELOAD_MODULES: 'flaky_preload', IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '5' },
        async (server) => {
          await exec(server, 'kept = 1');
          await expectWorking(server, 1);
          // the standby already failed to start
          expect((await eventually(() => status(server), (value) => value.standby === 'none')).standby).toBe('none');
          const call = await server.call('execute', { code: SWALLOW_INTERRUPTS });
          expect(call.isError).toBe(true);
          const body = call.structuredContent as Record<string, any>;
          expect(body.error.code).toBe('operation_timeout');
          expectInterrupted(body, { interruption: 'timeout', namespace: 'unknown' });
          const current = await status(server);
          expect(current.state).toBe('unavailable');
          expect(typeof current.error).toBe('string');
          expect(current.error.length).toBeGreaterThan(0);
          expect(current.error.length).toBeLessThanOrEqual(1000);
          expect(current.error).toContain('refuses to load');
          measurements.push(`[observe] unavailable runtime_status.error (${current.error.length} chars): ${current.error}`);
          const operations: Array<[string, Record<string, unknown>]> = [
            ['execute', { code: '1 + 1' }],
            ['call_function', { name: 'print', arguments: {} }],
            ['list', {}],
            ['search', { query: 'kept' }],
            ['inspect', { name: 'kept' }],
            ['reload', { modules: ['json'] }],
            ['remove', { names: ['kept'] }],
            ['reset', {}],
            ['register_tool', { name: 'print' }],
            ['unregister_tool', { names: ['x'] }],
          ];
          for (const [tool, args] of operations) {
            for (let attempt = 0; attempt < 2; attempt += 1) {
              const result = await server.call(tool, args);
              expect(result.isError).toBe(true);
              const error = (result.structuredContent as any).error;
              expect(error.code).toBe('runtime_unavailable');
              expect(error.message.length).toBeLessThanOrEqual(1200);
            }
          }
          const still = await status(server);
          expect(still).toMatchObject({ state: 'unavailable', error: current.error });
          // idle and nothing queued: both at their defaults, so absent
          expect(still).not.toHaveProperty('active');
          expect(still).not.toHaveProperty('queue_depth');
          // no half-started worker is kept around
          const workers = await eventually(
            () => childPids(server.serverPid).filter(isAlive),
            (pids) => pids.length === 0,
            5_000,
          );
          expect(workers).toEqual([]);
        },
      );
    } finally {
      rmSync(library, { recursive: true, force: true });
    }
  });
});

// ---- client disconnect ----

inEveryMode('client disconnect', () => {
  it('during a non-cooperative cell: the server and every worker are gone within grace + 1 s', async () => {
    const server = await start({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '30' });
    await standbyReady(server);
    const workerPid = (await exec(server, 'import os\nos.getpid()')).result.value as number;
    const running = server.call('execute', { code: SWALLOW_INTERRUPTS }).catch(() => undefined);
    await eventually(() => status(server), (value) => value.state === 'busy');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const processes = [server.serverPid, ...childPids(server.serverPid)];
    // Inside the sandbox's pid namespace the worker sees its own numbering; the host's tree holds the engine's layers.
    if (!mode.sandboxed) expect(processes).toContain(workerPid);
    expect(processes.length).toBeGreaterThanOrEqual(3);
    const closedAt = performance.now();
    (server.transport as any)._process?.stdin?.end();
    for (const pid of processes) expect(await waitForExit(pid, 2_000 - (performance.now() - closedAt))).toBe(true);
    measurements.push(`[measure] disconnect during a non-cooperative cell -> all processes gone: ${Math.round(performance.now() - closedAt)} ms (grace 1000 ms)`);
    await running;
    await server.client.close().catch(() => undefined);
  });

  it('repeated close (stdin EOF and SIGTERM together) is safe and leaves nothing behind', async () => {
    const server = await start();
    await exec(server, 'x = 1');
    await standbyReady(server);
    const processes = [server.serverPid, ...childPids(server.serverPid)];
    (server.transport as any)._process?.stdin?.end();
    process.kill(server.serverPid, 'SIGTERM');
    process.kill(server.serverPid, 'SIGINT');
    for (const pid of processes) expect(await waitForExit(pid, 3_000)).toBe(true);
    expect(server.stderr()).not.toMatch(/fatal|Unhandled|TypeError/);
    await server.client.close().catch(() => undefined);
  });
});
