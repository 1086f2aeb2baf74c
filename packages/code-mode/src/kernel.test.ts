import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, survivors, testPython } from '../test/python.js';
import { KernelClosedError, KernelStartupError } from './errors.js';
import { IPythonKernel } from './kernel.js';
import { CodeMode } from './run-code.js';

const kernels: IPythonKernel[] = [];
const pids = new Set<number>();

function kernel(): IPythonKernel {
  const created = new IPythonKernel({ python: testPython() });
  kernels.push(created);
  return created;
}

function remember(target: IPythonKernel): number[] {
  const current = target.workerPids();
  for (const pid of current) pids.add(pid);
  return current;
}

afterEach(async () => {
  for (const target of kernels) remember(target);
  await Promise.all(kernels.splice(0).map((target) => target.shutdown()));
  expect(await survivors([...pids])).toEqual([]);
  pids.clear();
});

describe('IPythonKernel', () => {
  it('starts, restarts into a fresh process, shuts down, and starts again', async () => {
    const target = kernel();
    expect(target.running).toBe(false);
    await target.start();
    await target.start();
    const [first] = remember(target);
    expect(target.running).toBe(true);
    expect(target.workerPids()).toHaveLength(1);
    const codeMode = new CodeMode({ kernel: target });
    await codeMode.runCode({ code: 'kept = 1' });
    await target.restart();
    const [second] = remember(target);
    expect(second).not.toBe(first);
    expect(await survivors([first!])).toEqual([]);
    await expect(codeMode.runCode({ code: "'kept' in dir()" })).resolves.toMatchObject({ return: { kind: 'value', value: false } });
    await target[Symbol.asyncDispose]();
    expect(target.running).toBe(false);
    expect(isAlive(second!)).toBe(false);
    await codeMode.runCode({ code: 'again = 2' });
    const [third] = remember(target);
    expect(third).not.toBe(second);
  });

  it('runs work one unit at a time, in call order', async () => {
    const target = kernel();
    const events: string[] = [];
    const unit = (name: string) =>
      target.exclusive(async (session) => {
        events.push(`${name}:start`);
        await session.run('execute', { code: 'import time; time.sleep(0.2)' });
        events.push(`${name}:end`);
      });
    await Promise.all([unit('a'), unit('b'), unit('c')]);
    expect(events).toEqual(['a:start', 'a:end', 'b:start', 'b:end', 'c:start', 'c:end']);
  });

  it('lets a running cell finish, else interrupts it; waiting work fails as closed', async () => {
    const target = kernel();
    // The cells call started() first, so the test knows for sure that the cell is running.
    let announce: () => void = () => undefined;
    const running = (): Promise<void> => new Promise((resolve) => (announce = resolve));
    const quick = new CodeMode({
      kernel: target,
      timeout: null,
      tools: [{ name: 'started', inputSchema: { type: 'object' }, execute: () => announce() }],
    });
    let cell = running();
    const finishing = quick.runCode({ code: "started()\nimport time\ntime.sleep(1)\n'finished'" });
    await cell;
    remember(target);
    await target.shutdown();
    await expect(finishing).resolves.toMatchObject({ return: { kind: 'value', value: 'finished' } });

    cell = running();
    const stuck = quick.runCode({ code: 'started()\nimport time\ntime.sleep(60)' });
    const waiting = quick.runCode({ code: '1' });
    const outcomes = Promise.allSettled([stuck, waiting]);
    await cell;
    remember(target);
    const started = Date.now();
    await target.shutdown();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(4500);
    expect(elapsed).toBeLessThan(12_000);
    const [stuckOutcome, waitingOutcome] = await outcomes;
    expect(stuckOutcome).toMatchObject({ status: 'rejected', reason: expect.any(KernelClosedError) });
    expect(waitingOutcome).toMatchObject({ status: 'rejected', reason: expect.any(KernelClosedError) });
    expect(target.running).toBe(false);
  });

  it('ends what a cell started on shutdown and on restart: nothing outlives the kernel process', async () => {
    const target = kernel();
    const codeMode = new CodeMode({ kernel: target });
    const startSleeper = "import subprocess\nsubprocess.Popen(['sleep', '1000']).pid";
    const sleeper = async (): Promise<number> => {
      const outcome = await codeMode.runCode({ code: startSleeper });
      expect(outcome).toMatchObject({ return: { kind: 'value' } });
      const pid = (outcome as { return: { value: number } }).return.value;
      expect(isAlive(pid)).toBe(true);
      return pid;
    };
    const beforeRestart = await sleeper();
    remember(target);
    await target.restart();
    expect(await survivors([beforeRestart], 5000)).toEqual([]);
    const beforeShutdown = await sleeper();
    remember(target);
    await target.shutdown();
    expect(await survivors([beforeShutdown], 5000)).toEqual([]);
  });

  it('reports an interpreter that cannot start a kernel', async () => {
    const broken = new IPythonKernel({ python: '/nonexistent/python3', startupTimeoutMs: 5000 });
    kernels.push(broken);
    const failure = broken.start();
    await expect(failure).rejects.toBeInstanceOf(KernelStartupError);
    await expect(failure).rejects.toThrow(/Python interpreter not found: \/nonexistent\/python3/);
    expect(() => new IPythonKernel({ startupTimeoutMs: 0 })).toThrow(RangeError);
  });

  it('says a start-up timeout is retried, and the next call does start a fresh kernel', async () => {
    // An interpreter that is slow only the first time: the first start times out, the second one works.
    const directory = mkdtempSync(join(tmpdir(), 'code-mode-slow-'));
    const python = join(directory, 'python');
    writeFileSync(python, `#!/bin/sh\nif [ ! -e "${directory}/started" ]; then touch "${directory}/started"; sleep 30; fi\nexec "${testPython()}" "$@"\n`);
    chmodSync(python, 0o755);
    const slow = new IPythonKernel({ python, startupTimeoutMs: 1500 });
    kernels.push(slow);
    const codeMode = new CodeMode({ kernel: slow });
    const failure = codeMode.runCode({ code: '1 + 1' });
    await expect(failure).rejects.toBeInstanceOf(KernelStartupError);
    await expect(failure).rejects.toThrow(
      'the IPython kernel could not start: the worker did not become ready within 1500 ms. Nothing was left running; the next run_code call (or start()) tries a fresh kernel.',
    );
    await expect(failure).rejects.not.toThrow(/server restarts/);
    await expect(codeMode.runCode({ code: '1 + 1' })).resolves.toMatchObject({ return: { kind: 'value', value: 2 } });
    remember(slow);
  });
});
