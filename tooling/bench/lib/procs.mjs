// Process bookkeeping: every process the bench starts is registered here and ended on exit, failure or Ctrl-C.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

const tracked = new Map(); // pid -> { label, group }
const everSeen = new Map(); // pid -> label, for the final leftover check

/** Registers a pid to be killed at the end (group: kill the whole process group). */
export function track(pid, label, { group = false } = {}) {
  if (!pid) return;
  tracked.set(pid, { label, group });
  everSeen.set(pid, label);
}

export function untrack(pid) {
  tracked.delete(pid);
}

/** Remembers a pid for the final leftover check only (it is not killed unless still alive at the end). */
export function remember(pid, label) {
  if (pid) everSeen.set(pid, label);
}

/** The label a pid was tracked or remembered under, or null. */
export function labelOf(pid) {
  return everSeen.get(pid) ?? null;
}

// Liveness is the same question the test suites ask: one implementation, in the shared test-support package.
import { isAlive, waitForExit } from '../../test-support/index.js';

export { isAlive, waitForExit };

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every descendant pid of `pid` (children, grandchildren, …), from /proc. */
export function descendants(pid) {
  const parents = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // gone
    }
  }
  const result = [];
  const frontier = [pid];
  while (frontier.length > 0) {
    const current = frontier.pop();
    for (const [child, parent] of parents) {
      if (parent === current) {
        result.push(child);
        frontier.push(child);
      }
    }
  }
  return result;
}

/** Reads VmRSS / VmHWM (bytes) of a live process, or null. */
export function memoryOf(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => {
      const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
      return match ? Number(match[1]) * 1024 : null;
    };
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return null;
  }
}

/** Polls VmRSS and VmHWM of some pids every `everyMs`; stop() returns the peaks seen. */
export function sampleMemory(pids, everyMs = 25) {
  const peaks = new Map(pids.map((pid) => [pid, { rss: 0, hwm: 0 }]));
  const tick = () => {
    for (const pid of pids) {
      const memory = memoryOf(pid);
      if (!memory) continue;
      const peak = peaks.get(pid);
      peak.rss = Math.max(peak.rss, memory.rss ?? 0);
      peak.hwm = Math.max(peak.hwm, memory.hwm ?? 0);
    }
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return peaks;
    },
  };
}

/**
 * Runs a command to completion in its own process group (tracked meanwhile), collecting stdout and stderr.
 * Rejects on a non-zero exit unless `allowFailure`.
 */
export function run(command, args, { env, cwd, label = command, allowFailure = false, onStdoutLine, timeoutMs } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: env ?? process.env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    track(child.pid, label, { group: true });
    let stdout = '';
    let stderr = '';
    let partial = '';
    let timer;
    if (timeoutMs) {
      timer = setTimeout(() => {
        stderr += `\n[bench] ${label} timed out after ${timeoutMs} ms\n`;
        killGroup(child.pid);
      }, timeoutMs);
    }
    child.stdout.on('data', (chunk) => {
      const text = chunk.toString('utf8');
      stdout += text;
      if (onStdoutLine) {
        partial += text;
        const lines = partial.split('\n');
        partial = lines.pop();
        for (const line of lines) onStdoutLine(line);
      }
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      untrack(child.pid);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      untrack(child.pid);
      if (code === 0 || allowFailure) resolve({ code, signal, stdout, stderr });
      else reject(new Error(`${label} failed (${signal ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-8).join('\n')}`));
    });
  });
}

function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Kills everything still tracked (and their descendants), then any other descendant of the bench process. */
export function killAll() {
  const killed = [];
  for (const pid of descendants(process.pid)) {
    if (!tracked.has(pid) && isAlive(pid)) {
      remember(pid, 'descendant of the bench');
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(`descendant ${pid}`);
      } catch {
        // gone
      }
    }
  }
  for (const [pid, { label, group }] of tracked) {
    const family = isAlive(pid) ? [pid, ...descendants(pid)] : [];
    if (group) killGroup(pid);
    for (const member of family) {
      try {
        process.kill(member, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (family.length > 0) killed.push(label);
    tracked.delete(pid);
  }
  return killed;
}

/** Pids the bench ever saw (servers, workers, kernels, helpers) that are still alive. */
export function leftovers() {
  return [...everSeen].filter(([pid]) => pid !== process.pid && isAlive(pid)).map(([pid, label]) => ({ pid, label }));
}

let handlersInstalled = false;
/** Kills every tracked process when the bench exits for any reason. */
export function installExitHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    killAll();
    for (const { pid } of leftovers()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      process.stderr.write(`\n[bench] ${signal}: ending every process the bench started\n`);
      process.exit(130);
    });
  }
}

/** On-CPU nanoseconds of every thread of a process (/proc/<pid>/task/<tid>/schedstat), keyed by thread id. */
export function cpuSnapshot(pid) {
  const threads = new Map();
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      // Python threads share the process's name: call the main thread "main", the others by name + "thread".
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const comm = Number(tid) === Number(pid) ? 'main' : `${name} thread`;
      threads.set(tid, { comm, ns });
    } catch {
      // the thread ended
    }
  }
  return threads;
}

/**
 * CPU time used between two snapshots, per process (label) and per thread name, in µs per call. Exact on-CPU
 * time from the scheduler: what each process and thread really cost, whatever a sampling profiler says.
 */
export function cpuPerCall(before, after, calls) {
  const result = {};
  for (const [label, afterThreads] of Object.entries(after)) {
    const beforeThreads = before[label] ?? new Map();
    const byName = {};
    let total = 0;
    for (const [tid, { comm, ns }] of afterThreads) {
      const delta = ns - (beforeThreads.get(tid)?.ns ?? 0);
      if (delta <= 0) continue;
      total += delta;
      byName[comm] = (byName[comm] ?? 0) + delta;
    }
    result[label] = {
      totalUs: Number((total / 1000 / calls).toFixed(1)),
      threadsUs: Object.fromEntries(Object.entries(byName).sort((a, b) => b[1] - a[1]).map(([name, ns]) => [name, Number((ns / 1000 / calls).toFixed(1))])),
    };
  }
  return result;
}
