// Nothing a cell starts outlives its worker (issue "Nothing a cell produces can cost the namespace", part 6): a real
// MCP client starts `sleep 1000` children from a cell, each path that ends a worker is triggered, and every child
// (and every worker, standby and watchdog) must be gone within a generous bound. Also: repeated signals during the
// shutdown grace keep the shutdown graceful.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { childPids, eventually, processGroupMembers, startServer, survivors, taggedProcesses, type TestServer } from './harness.js';

/** Every process this file starts carries this tag in its environment, so the leftover check sees only ours. */
const TAG = randomUUID();
const BASE_ENV = {
  IPYTHON_MCP_TEST_RUN_TAG: TAG,
  IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1',
  IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1',
  IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '10',
};
/** Generous: the paths take well under a second on an idle machine. */
const GONE_WITHIN_MS = 10_000;

/**
 * Starts three `sleep 1000` children: a `subprocess.Popen`, a `!` escape sent to the background, and a double-forked
 * daemon-ish one that stays in the group. Returns their pids and every other member of the worker's process group
 * (the group watchdog among them).
 */
const START_CHILDREN = String.raw`
import os, subprocess
def _group_members():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if os.getpgid(int(entry)) == os.getpgrp():
                    found.append(int(entry))
            except OSError:
                pass
    return found
_kids = [subprocess.Popen(["sleep", "1000"]).pid]
_background = !sleep 1000 > /dev/null 2>&1 & echo $!
_kids.append(int(_background[-1]))
_read, _write = os.pipe()
_first = os.fork()
if _first == 0:
    _second = os.fork()
    if _second == 0:
        os.execvp("sleep", ["sleep", "1000"])
    os.write(_write, str(_second).encode())
    os._exit(0)
os.close(_write)
os.waitpid(_first, 0)
_kids.append(int(os.read(_read, 64)))
os.close(_read)
sorted(set(_kids + _group_members()))
`;

const SWALLOW_INTERRUPTS = ['import time', 'while True:', '    try:', '        time.sleep(0.05)', '    except KeyboardInterrupt:', '        pass'].join('\n');
/** A cell that ignores SIGINT altogether, and says so in `marker` once it does (no interrupt can land earlier). */
const ignoringInterrupts = (marker: string): string =>
  ['import signal, time', 'signal.signal(signal.SIGINT, signal.SIG_IGN)', `open(${JSON.stringify(marker)}, 'w').close()`, 'while True:', '    time.sleep(0.05)'].join('\n');

const measurements: string[] = [];

afterAll(async () => {
  if (measurements.length > 0) console.log(measurements.join('\n'));
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

async function exec(server: TestServer, code: string): Promise<Record<string, any>> {
  return server.structured('execute', { code });
}

async function standbyReady(server: TestServer): Promise<void> {
  const current = await eventually(() => server.structured('runtime_status'), (value) => value.standby === 'ready', 20_000);
  expect(current.standby).toBe('ready');
}

/** The cell's children (and the active worker's watchdog), all alive now. */
async function startChildren(server: TestServer): Promise<number[]> {
  const result = await exec(server, START_CHILDREN);
  expect(result, JSON.stringify(result.error)).not.toHaveProperty('status');
  const pids = result.result.value as number[];
  expect(pids.length).toBeGreaterThanOrEqual(4); // three sleeps and the watchdog
  expect(await survivors(pids, 0)).toEqual(pids);
  return pids;
}

/** The server, every worker it has (active and standby) and everything in their process groups. */
function everyProcess(server: TestServer): number[] {
  const workers = childPids(server.serverPid);
  expect(workers.length).toBe(2); // active and standby
  // Each worker leads its own group, and each group has its watchdog: the standby is covered as the active one is.
  for (const worker of workers) expect(processGroupMembers(worker).length).toBeGreaterThanOrEqual(2);
  return [server.serverPid, ...new Set(workers.flatMap((worker) => [worker, ...processGroupMembers(worker)]))];
}

function serverProcess(server: TestServer): ChildProcess {
  return (server.transport as unknown as { _process: ChildProcess })._process;
}

function exitOf(server: TestServer): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const child = serverProcess(server);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Waits until every pid is gone; records how long that took from `since`. */
async function expectAllGone(pids: number[], since: number, what: string): Promise<void> {
  expect(await survivors(pids, GONE_WITHIN_MS)).toEqual([]);
  measurements.push(`[measure] ${what}: ${pids.length} processes gone ${Math.round(performance.now() - since)} ms after the trigger`);
}

describe('children started by a cell end with their worker', () => {
  it('graceful close (stdin EOF): the server, both workers, the watchdogs and every child are gone', async () => {
    const server = await startServer(BASE_ENV);
    try {
      await standbyReady(server);
      const children = await startChildren(server);
      const all = everyProcess(server);
      for (const child of children) expect(all).toContain(child);
      const exited = exitOf(server);
      const closedAt = performance.now();
      serverProcess(server).stdin?.end();
      await expectAllGone(all, closedAt, 'graceful close (stdin EOF)');
      expect(await exited).toEqual({ code: 0, signal: null });
    } finally {
      await server.close();
    }
  });

  it('worker crash (os._exit(1) in a cell): the children go with the worker; the replacement works', async () => {
    const server = await startServer(BASE_ENV);
    try {
      await standbyReady(server);
      const children = await startChildren(server);
      const crashedAt = performance.now();
      const crash = await exec(server, 'import os\nos._exit(1)');
      expect(crash.error.code).toBe('worker_crashed');
      await expectAllGone(children, crashedAt, 'worker crash (os._exit(1))');
      expect((await exec(server, '6 * 7')).result.value).toBe(42);
    } finally {
      await server.close();
    }
  });

  it('hard replacement (a cell that ignores SIGINT past the grace): the children go with the killed worker', async () => {
    const server = await startServer(BASE_ENV);
    try {
      await standbyReady(server);
      const children = await startChildren(server);
      const sentAt = performance.now();
      const stuck = await exec(server, SWALLOW_INTERRUPTS);
      expect(stuck.error.code).toBe('operation_timeout');
      expect(stuck.runtime).toMatchObject({ namespace: 'reset', epoch: 2 });
      const answeredAt = performance.now();
      await expectAllGone(children, answeredAt, 'hard replacement (after the timeout answer)');
      measurements.push(`[observe] hard replacement: timeout answered ${Math.round(answeredAt - sentAt)} ms after dispatch (deadline 1000 + grace 1000 ms)`);
      expect((await exec(server, '6 * 7')).result.value).toBe(42);
    } finally {
      await server.close();
    }
  });

  it.each([['SIGTERM'], ['SIGINT']] as const)('server %s: everything is gone and the server exits 0', async (signal) => {
    const server = await startServer(BASE_ENV);
    try {
      await standbyReady(server);
      await startChildren(server);
      const all = everyProcess(server);
      const exited = exitOf(server);
      const signalledAt = performance.now();
      process.kill(server.serverPid, signal);
      await expectAllGone(all, signalledAt, `server ${signal}`);
      expect(await exited).toEqual({ code: 0, signal: null });
    } finally {
      await server.close();
    }
  });

  it('server SIGKILL: the workers die with it and their watchdogs end the children', async () => {
    const server = await startServer(BASE_ENV);
    try {
      await standbyReady(server);
      const children = await startChildren(server);
      const all = everyProcess(server);
      for (const child of children) expect(all).toContain(child);
      const killedAt = performance.now();
      process.kill(server.serverPid, 'SIGKILL');
      await expectAllGone(all, killedAt, 'server SIGKILL');
    } finally {
      await server.close();
    }
  });
});

describe('repeated signals during the shutdown grace', () => {
  it('a second SIGTERM and a SIGINT do not cut the shutdown short: every request is answered, exit 0', async () => {
    const server = await startServer({ ...BASE_ENV, IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '60', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '3' });
    try {
      await standbyReady(server);
      const children = await startChildren(server);
      let activeSettled = false;
      const marker = join(mkdtempSync(join(tmpdir(), 'ipython-mcp-signals-')), 'ignoring');
      const active = server.call('execute', { code: ignoringInterrupts(marker) }).finally(() => (activeSettled = true));
      await eventually(async () => existsSync(marker), (ready) => ready, 30_000);
      const queued = [server.call('execute', { code: '1' }), server.call('execute', { code: '2' })];
      await eventually(() => server.structured('runtime_status'), (value) => value.queue_depth === 2);
      const exited = exitOf(server);
      const firstAt = performance.now();
      process.kill(server.serverPid, 'SIGTERM');
      for (const answer of await Promise.all(queued)) {
        expect(answer.isError).toBe(true);
        expect((answer.structuredContent as any).error.code).toBe('runtime_closed');
      }
      // Inside the 3 s grace the active cell is given: more signals, which once killed the server outright.
      process.kill(server.serverPid, 'SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 100));
      process.kill(server.serverPid, 'SIGINT');
      process.kill(server.serverPid, 'SIGTERM');
      expect(activeSettled).toBe(false); // the signals did land during the grace
      const stopped = await active;
      expect(stopped.isError).toBe(true);
      expect((stopped.structuredContent as any).error.code).toBe('runtime_closed');
      expect((stopped.structuredContent as any).runtime).toMatchObject({ interruption: 'shutdown' });
      expect(await exited).toEqual({ code: 0, signal: null });
      await expectAllGone(children, firstAt, 'repeated signals (first SIGTERM -> children gone, grace 3000 ms)');
      expect(server.stderr()).not.toMatch(/fatal|Unhandled|TypeError/);
    } finally {
      await server.close();
    }
  });
});
