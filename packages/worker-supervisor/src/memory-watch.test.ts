// The memory guard's parts against real processes: the bounds, the /proc tree reader (a child's memory counts; a
// gone root answers undefined), and the Runtime paths the MCP suite does not reach. Every allocation is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { eventually, isAlive, testPython } from '@ipython-mcp/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { OperationMemoryWatch, memoryBounds } from './memory-watch.js';
import { ProcessTreeMemory } from './process-tree-memory.js';
import { Runtime } from './runtime.js';

const MIB = 2 ** 20;
const children: ChildProcess[] = [];
const runtimes: Runtime[] = [];

/** A Python that starts a child holding `childMb` MiB, then waits for stdin to close. */
function pythonWithChild(childMb: number): ChildProcess {
  const child = `import sys, time\nheld = b'x' * (${childMb} * 2**20)\nprint('ready', flush=True)\ntime.sleep(60)`;
  const parent = `import subprocess, sys\np = subprocess.Popen([sys.executable, '-c', ${JSON.stringify(child)}], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)\np.stdout.readline()\nprint('ready', flush=True)\nsys.stdin.read()\np.kill()`;
  // Its own process group, so afterEach ends the child with it.
  const process = spawn(testPython(), ['-c', parent], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  children.push(process);
  return process;
}

function readyLine(process: ChildProcess): Promise<void> {
  return new Promise((resolve) => process.stdout!.once('data', () => resolve()));
}

afterEach(async () => {
  for (const process of children.splice(0)) {
    try {
      globalThis.process.kill(-process.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    process.stdin?.destroy();
    process.stdout?.destroy();
  }
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

describe('memoryBounds', () => {
  it('derives the hard margin and the backstop from the limit, and nothing when off', () => {
    expect(memoryBounds(400)).toEqual({ limitBytes: 400 * MIB, hardBytes: 500 * MIB, backstopBytes: 1424 * MIB });
    expect(memoryBounds(100)).toEqual({ limitBytes: 100 * MIB, hardBytes: 164 * MIB, backstopBytes: 1124 * MIB });
    expect(memoryBounds(4096)).toEqual({ limitBytes: 4096 * MIB, hardBytes: 5120 * MIB, backstopBytes: 8192 * MIB });
    expect(memoryBounds(null)).toBeUndefined();
  });
});

describe('ProcessTreeMemory', () => {
  it('counts the memory of a child process, and answers undefined once the root is gone', async () => {
    const process = pythonWithChild(120);
    await readyLine(process);
    const tree = new ProcessTreeMemory(process.pid!);
    const alone = new ProcessTreeMemory(process.pid!);
    const withChild = tree.sample(true)!;
    const rootOnly = alone.sample(false)!;
    expect(withChild - rootOnly).toBeGreaterThan(110 * MIB);
    process.stdin!.end();
    await eventually(() => tree.sample(true), (bytes) => bytes === undefined, 10_000);
    expect(tree.open).toBe(false);
    alone.close();
  });

  it("reads the same resident size as the process's own VmRSS", async () => {
    const process = pythonWithChild(1);
    await readyLine(process);
    const tree = new ProcessTreeMemory(process.pid!);
    const status = readFileSync(`/proc/${process.pid!}/status`, 'latin1');
    const vmRss = Number.parseInt(/VmRSS:\s+(\d+) kB/.exec(status)![1]!, 10) * 1024;
    // A waiting process: the two reads a moment apart agree to within a few pages.
    expect(Math.abs(tree.sample(false)! - vmRss)).toBeLessThanOrEqual(16 * 4096);
    tree.close();
  });

  it('cannot open a pid that does not exist', () => {
    expect(new ProcessTreeMemory(2 ** 30).open).toBe(false);
  });
});

describe('OperationMemoryWatch', () => {
  it('takes a baseline and the peak; a start above the limit trips nothing until its own hard line', async () => {
    const process = pythonWithChild(1);
    await readyLine(process);
    const tree = new ProcessTreeMemory(process.pid!);
    const now = tree.sample(true)!; // finds the child too: every later read counts it
    const trips: string[] = [];
    const below = new OperationMemoryWatch(tree, { limitBytes: now * 2, hardBytes: now * 3, backstopBytes: now * 8 }, (trip) => trips.push(`below:${trip}`), 5);
    const above = new OperationMemoryWatch(tree, { limitBytes: now / 2, hardBytes: now, backstopBytes: now * 8 }, (trip) => trips.push(`above:${trip}`), 5);
    await eventually(() => [below.baselineBytes, above.baselineBytes], (values) => values.every((value) => value !== undefined), 2_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    below.stop();
    above.stop();
    expect(below.startedAboveLimit).toBe(false);
    expect(above.startedAboveLimit).toBe(true);
    // Started at or above `hard` (= now), the line is baseline + (hard - limit): growth of now / 2 more.
    expect(trips).toEqual([]);
    expect(below.peakBytes).toBeGreaterThan(0);
    tree.close();
  });
});

/**
 * A stand-in for a launch wrapper: a Python process (the root) that starts the "worker" (a child Python) and relays
 * one command per line on its stdin: `wrapper` makes the root itself hold 64 MiB more, `worker` makes the child do so,
 * `end-worker` ends the child and reaps it.
 * It prints the child's pid, then `ok` after each command.
 */
function wrapperWithWorker(): ChildProcess {
  const worker = "import sys\nheld = []\nprint('ready', flush=True)\nfor line in sys.stdin:\n    held.append(b'w' * (64 * 2**20))\n    print('ok', flush=True)";
  const wrapper =
    `import subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', ${JSON.stringify(worker)}], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n` +
    "child.stdout.readline()\nprint(child.pid, flush=True)\nheld = []\nfor line in sys.stdin:\n" +
    "    if line.strip() == 'wrapper':\n        held.append(b'r' * (64 * 2**20))\n" +
    "    elif line.strip() == 'end-worker':\n        child.kill(); child.wait()\n" +
    "    else:\n        child.stdin.write('grow\\n'); child.stdin.flush(); child.stdout.readline()\n" +
    "    print('ok', flush=True)\nchild.kill()";
  const process = spawn(testPython(), ['-c', wrapper], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  children.push(process);
  return process;
}

const lineReaders = new WeakMap<ChildProcess, AsyncIterator<string>>();

/** Sends one command line (none for '') and reads the next line the wrapper prints. */
async function command(process: ChildProcess, line: string): Promise<string> {
  let lines = lineReaders.get(process);
  if (lines === undefined) {
    lines = createInterface({ input: process.stdout! })[Symbol.asyncIterator]();
    lineReaders.set(process, lines);
  }
  if (line !== '') process.stdin!.write(`${line}\n`);
  const next = await lines.next();
  return next.done === true ? '' : next.value.trim();
}

describe('ProcessTreeMemory behind a launch wrapper', () => {
  it("a dispatch read re-reads the worker and counts the wrapper's processes at their last read; a read with discovery re-reads all", async () => {
    const wrapper = wrapperWithWorker();
    const workerPid = Number(await command(wrapper, ''));
    // The worker reports its own pid; without a pid namespace that is its pid here too, and not the root's.
    const tree = new ProcessTreeMemory(wrapper.pid!, workerPid);
    const start = tree.sample(false)!; // the first read finds the worker, even without discovery asked for
    expect(tree.workerHostPid).toBe(workerPid);
    expect(await command(wrapper, 'worker')).toBe('ok');
    const afterWorker = tree.sample(false)!;
    expect(afterWorker - start).toBeGreaterThan(60 * MIB);
    expect(await command(wrapper, 'wrapper')).toBe('ok');
    // The root is the wrapper: a dispatch read does not re-read it ...
    expect(Math.abs(tree.sample(false)! - afterWorker)).toBeLessThan(4 * MIB);
    // ... and every read with discovery (the watch's periodic reads, runtime_status) does.
    const whole = tree.sample(true)!;
    expect(whole - afterWorker).toBeGreaterThan(60 * MIB);
    expect(Math.abs(tree.sample(false)! - whole)).toBeLessThan(4 * MIB);
    tree.close();
  });

  it('a reported pid found nowhere in the tree: every read is whole, as for an unwrapped worker', async () => {
    const wrapper = wrapperWithWorker();
    await command(wrapper, '');
    const tree = new ProcessTreeMemory(wrapper.pid!, 2 ** 30);
    const start = tree.sample(true)!;
    expect(tree.workerHostPid).toBeUndefined();
    expect(await command(wrapper, 'wrapper')).toBe('ok');
    expect(tree.sample(false)! - start).toBeGreaterThan(60 * MIB);
    tree.close();
  });

  it('the wrapped worker exiting turns the next dispatch read into a whole one', async () => {
    const wrapper = wrapperWithWorker();
    const workerPid = Number(await command(wrapper, ''));
    const tree = new ProcessTreeMemory(wrapper.pid!, workerPid);
    tree.sample(true);
    expect(tree.workerHostPid).toBe(workerPid);
    expect(await command(wrapper, 'end-worker')).toBe('ok');
    const after = tree.sample(false)!;
    expect(after).toBeGreaterThan(0);
    expect(tree.workerHostPid).toBeUndefined();
    expect(await command(wrapper, 'wrapper')).toBe('ok');
    // The worker's end was noticed, so the wrapper's growth is read at once.
    expect(tree.sample(false)! - after).toBeGreaterThan(60 * MIB);
    tree.close();
  });
});

/** This process's open files under /proc (the guard's status files). */
function openProcFiles(): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith('/proc/')) count += 1;
    } catch {
      // closed while listing
    }
  }
  return count;
}

describe('Runtime memory guard', () => {
  it('closes the /proc files of workers that exited', { timeout: 30_000 }, async () => {
    const before = openProcFiles();
    const runtime = new Runtime({ python: testPython(), memoryLimitMb: 400, warmStandby: false });
    runtime.start();
    await runtime.run('execute', { code: 'import time\ntime.sleep(0.1)' });
    expect(runtime.status().memoryMb).toBeGreaterThan(10);
    expect(openProcFiles()).toBeGreaterThan(before);
    await runtime.close();
    expect(await eventually(() => openProcFiles(), (count) => count <= before, 5_000)).toBeLessThanOrEqual(before);
  });

  it('reports memory with the guard off, and sends no backstop', { timeout: 30_000 }, async () => {
    const runtime = new Runtime({ python: testPython(), memoryLimitMb: null, warmStandby: false });
    runtimes.push(runtime);
    runtime.start();
    const outcome = await runtime.run('execute', { code: 'import resource\nresource.getrlimit(resource.RLIMIT_DATA)[0] == resource.RLIM_INFINITY' });
    expect(outcome.ok && (outcome.result.result as { value: unknown }).value).toBe(true);
    const status = runtime.status();
    expect(status.memoryLimitMb).toBeNull();
    expect(status.memoryMb).toBeGreaterThan(10);
  });

  it('an operation that starts above the limit and keeps growing is killed past its own hard line (reset)', { timeout: 60_000 }, async () => {
    const runtime = new Runtime({ python: testPython(), memoryLimitMb: 100, warmStandby: false });
    runtimes.push(runtime);
    runtime.start();
    // 150 MiB held between operations (filled by a thread after the cell answered).
    const fill = "import threading, time\ndef _fill():\n    time.sleep(0.3)\n    globals()['held'] = b'x' * (150 * 2**20)\nthreading.Thread(target=_fill).start()";
    await runtime.run('execute', { code: fill });
    expect(await eventually(() => runtime.status().memoryMb ?? 0, (mb) => mb > 150, 10_000)).toBeGreaterThan(150);
    const light = await runtime.run('execute', { code: 'import time\ntime.sleep(0.2)\nlen(held) // 2**20' });
    expect(light.ok && light.meta.interruption === null && (light.result.result as { value: unknown }).value).toBe(150);
    const pid = runtime.workerPids()[0]!;
    const grow = "def grow():\n    chunks = []\n    while len(chunks) < 48:\n        chunks.append(b'x' * 2**23)\n        import time; time.sleep(0.005)\ngrow()";
    const outcome = await runtime.run('execute', { code: grow });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.code).toBe('memory_limit');
    expect(outcome.error.details).toMatchObject({ trigger: 'hard', limit_mb: 100 });
    expect(outcome.meta).toMatchObject({ interruption: 'memory_limit', namespace: 'reset', epoch: 2 });
    expect(runtime.status().lastInterruption).toEqual({ kind: 'memory_limit', namespace: 'reset', epoch: 2 });
    await eventually(() => isAlive(pid), (alive) => !alive, 5_000);
  });
});
