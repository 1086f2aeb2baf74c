// The machine's own noise, measured in the same run as the figures it blurs, and the verdict logic that uses it.
// On a shared 2-core guest a ratio can move by 2× between two minutes; a goal verdict is only given where the
// ratio's confidence interval (bootstrap over the interleaved rounds), widened by the machine's measured noise,
// lies wholly on one side of the goal. Otherwise the verdict says why there is none.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { cpuSnapshot, descendants, labelOf } from './procs.mjs';
import { quantile } from './stats.mjs';

export { bootstrapMedianCI } from './stats.mjs';

export const MET = 'met';
export const MISSED = 'MISSED';
export const BUSY = 'no verdict: the machine was busy';
export const TOO_NOISY = 'no verdict: noise larger than the gap';
export const TOO_FEW = 'no verdict: too few rounds';

/**
 * Other processes' share of the machine's CPU, steal share, calibration spread, or our processes' run-queue wait per
 * unit of their CPU time above these: "busy".
 */
export const BUSY_LIMITS = { othersShare: 0.25, stealShare: 0.05, calibrationSpread: 0.2, waitRatio: 0.2 };

/**
 * The verdict on "ratio ≤ goal" given the ratio's interval `ci` ({lo, hi}) and the machine's noise (`machine`:
 * {busy, noise}, noise a fraction such as 0.15 for ±15 %: the larger of the calibration loop's spread and our
 * processes' run-queue wait per unit of their CPU time, both measured beside the rounds; see watchMachine).
 *   met        the whole interval is at or under the goal;
 *   MISSED     the whole interval, less the machine's noise, is over the goal;
 *   no verdict otherwise: "the machine was busy" when it was, else "noise larger than the gap".
 * Without an interval (fewer than 3 rounds), no verdict.
 */
export function goalVerdict(ci, goal, machine = {}) {
  if (!ci || !Number.isFinite(ci.lo) || !Number.isFinite(ci.hi) || !Number.isFinite(goal)) return TOO_FEW;
  if (ci.hi <= goal) return MET;
  const noise = Number.isFinite(machine.noise) && machine.noise > 0 ? machine.noise : 0;
  if (ci.lo / (1 + noise) > goal) return MISSED;
  return machine.busy ? BUSY : TOO_NOISY;
}

/** The same for a goal of the form "ratio ≥ goal" (e.g. "the alternative is ≥ 3× slower"). */
export function atLeastVerdict(ci, goal, machine = {}) {
  if (!ci || !(ci.lo > 0) || !(ci.hi > 0)) return TOO_FEW;
  // r ≥ g is 1/r ≤ 1/g, and the interval of 1/r is [1/hi, 1/lo].
  return goalVerdict({ lo: 1 / ci.hi, hi: 1 / ci.lo }, 1 / goal, machine);
}

export const SLOWER = 'B is slower';
export const FASTER = 'B is faster';
export const SAME = 'cannot tell A and B apart';

/**
 * Whether build B differs from build A, from the interval of the per-block ratio B/A: slower when the whole interval
 * less the machine's noise is over 1×, faster when the whole interval plus the noise is under it, else "cannot tell
 * apart" (which says nothing about a difference smaller than the interval).
 */
export function compareVerdict(ci, machine = {}) {
  if (!ci) return TOO_FEW;
  if (goalVerdict(ci, 1, machine) === MISSED) return SLOWER;
  if (atLeastVerdict(ci, 1, machine) === MISSED) return FASTER;
  return SAME;
}

function hashLoop(iterations) {
  let hash = 2166136261;
  for (let index = 0; index < iterations; index += 1) {
    hash ^= index;
    hash = Math.imul(hash, 16777619);
  }
  return hash;
}

let warmed = false;

/**
 * A fixed amount of pure CPU work (integer hashing, about 5 ms on this machine), timed: run once per round beside
 * the rounds, it shows how much of a CPU this process was getting in each. The first call first runs it untimed a
 * few times, so the JIT's tiers are behind it. Returns milliseconds.
 */
export function calibrate(iterations = 5_000_000) {
  if (!warmed) {
    for (let index = 0; index < 5; index += 1) hashLoop(iterations);
    warmed = true;
  }
  const started = performance.now();
  const hash = hashLoop(iterations);
  const ms = performance.now() - started;
  if (hash === 42) process.stderr.write(''); // keeps the loop from being optimized away
  return ms;
}

/** Relative spread of the calibration times: (p90 − p10) / p10, 0 for a perfectly steady machine. */
export function calibrationSpread(times) {
  const finite = times.filter((value) => Number.isFinite(value) && value > 0);
  if (finite.length < 2) return null;
  const low = quantile(finite, 0.1);
  return (quantile(finite, 0.9) - low) / low;
}

function readProcStat() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = fields;
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

function readLoad() {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

/**
 * Clock ticks (USER_HZ) on a CPU of this process and every descendant, by pid, from /proc/<pid>/stat: user and
 * system time of all its threads, including threads that have ended, plus what its reaped children used (cutime,
 * cstime). Thread-level schedstat misses a thread that ends within a window (a cell's capture thread, a pool's
 * worker), and that time would be counted as another process's.
 */
function ownTreeTicks(pids) {
  const ticks = new Map();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
      ticks.set(pid, fields[11] + fields[12] + fields[13] + fields[14]);
    } catch {
      // the process ended
    }
  }
  return ticks;
}

/**
 * Scheduler accounting of this process and every descendant, summed over their threads
 * (/proc/<pid>/task/<tid>/schedstat): nanoseconds on a CPU, and nanoseconds runnable but waiting for one. Keyed by
 * thread, so threads that start or end within a window count from or up to then.
 */
function ownTreeSchedstat(pids) {
  const threads = new Map();
  for (const pid of pids) {
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const [cpu, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        threads.set(`${pid}/${tid}`, { cpu, wait });
      } catch {
        // the thread ended
      }
    }
  }
  return threads;
}

/**
 * On-CPU nanoseconds of this process and every descendant (all threads, /proc/<pid>/task/<tid>/schedstat), by pid,
 * with the label each was tracked under (lib/procs.mjs) or its command name.
 */
export function treeCpu({ self = true } = {}) {
  const result = new Map();
  for (const pid of [...(self ? [process.pid] : []), ...descendants(process.pid)]) {
    let ns = 0;
    for (const thread of cpuSnapshot(pid).values()) ns += thread.ns;
    let label = pid === process.pid ? 'bench client (this process)' : labelOf(pid);
    if (!label) {
      try {
        label = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        label = `pid ${pid}`;
      }
    }
    result.set(pid, { label, ns });
  }
  return result;
}

/** CPU used between two treeCpu() snapshots: total ns and ns per process label (processes that used any). */
export function treeCpuDelta(before, after) {
  let totalNs = 0;
  const byLabel = {};
  for (const [pid, { label, ns }] of after) {
    const delta = ns - (before.get(pid)?.ns ?? 0);
    if (delta <= 0) continue;
    totalNs += delta;
    byLabel[label] = (byLabel[label] ?? 0) + delta;
  }
  return { totalNs, byLabel };
}

/**
 * Runs `fn` (one timed block) and returns its value with the CPU every process of this bench's tree used meanwhile:
 * this process by process.cpuUsage() around the block alone, the children by their threads' schedstat read
 * outside it (the reads cost this process CPU, not counted). The other processes wait idle during a block, so this
 * is the block's cost, by process label.
 */
export async function withTreeCpu(fn) {
  const childrenBefore = treeCpu({ self: false });
  const selfBefore = process.cpuUsage();
  const value = await fn();
  const self = process.cpuUsage(selfBefore);
  const { totalNs, byLabel } = treeCpuDelta(childrenBefore, treeCpu({ self: false }));
  const selfNs = (self.user + self.system) * 1000;
  byLabel['bench client (this process)'] = selfNs;
  return { value, totalNs: totalNs + selfNs, byLabel };
}

/** Adds one block's CPU (withTreeCpu) to a running per-loop account { calls, ns, byLabel }. */
export function addCpu(account, block, calls) {
  account.calls += calls;
  account.ns += block.totalNs;
  for (const [label, ns] of Object.entries(block.byLabel)) account.byLabel[label] = (account.byLabel[label] ?? 0) + ns;
  return account;
}

/** µs per call of each process label in an account, largest first, leaving out those under 0.5 µs. */
export function perCallByLabel(account) {
  return Object.fromEntries(
    Object.entries(account.byLabel)
      .map(([label, ns]) => [label, Number((ns / 1000 / account.calls).toFixed(1))])
      .filter(([, us]) => us >= 0.5)
      .sort((a, b) => b[1] - a[1]),
  );
}

/**
 * What a window of the machine says about its noise, from its counters: clock ticks (USER_HZ) of the whole machine
 * (total, busy, steal) and of this bench's own tree, and our threads' on-CPU and run-queue nanoseconds.
 * - othersShare: the machine's CPU used by anything but our tree, as a share of all of it.
 * - waitRatio: how long our processes sat runnable waiting for a CPU, per unit of time they ran. On two cores a
 *   call that wakes three of our processes (client, server, worker) waits for our own processes too: that wait is
 *   part of the cost being measured, on both sides of a ratio, and is no noise.
 * - waitBehindOthers: the part of that wait spent behind other processes, taken as the waits' share of the busy CPU
 *   time that was not ours. Only this part, and the calibration spread, widen a ratio; a neighbour shows in it.
 * Busy when others used more than 25 % of the CPUs, steal passed 5 %, the calibration spread 20 % or the wait behind
 * others 20 % (BUSY_LIMITS).
 */
export function judgeWindow({ totalTicks, busyTicks, stealTicks, ownTicks, ownCpuNs, ownWaitNs, spread = null }) {
  // Our CPU by both counts: ticks include threads that ended within the window, schedstat is finer.
  const own = Math.max(ownTicks, ownCpuNs / 1e7);
  const othersTicks = Math.max(0, busyTicks - own);
  const othersShare = totalTicks > 0 ? othersTicks / totalTicks : null;
  const stealShare = totalTicks > 0 ? stealTicks / totalTicks : null;
  const waitRatio = ownCpuNs > 0 ? ownWaitNs / ownCpuNs : null;
  const waitBehindOthers = waitRatio === null ? null : busyTicks > 0 ? waitRatio * (othersTicks / busyTicks) : 0;
  const reasons = [];
  if (othersShare !== null && othersShare > BUSY_LIMITS.othersShare) reasons.push(`other processes used ${(othersShare * 100).toFixed(0)}% of the CPUs`);
  if (stealShare !== null && stealShare > BUSY_LIMITS.stealShare) reasons.push(`steal ${(stealShare * 100).toFixed(0)}%`);
  if (spread !== null && spread > BUSY_LIMITS.calibrationSpread) reasons.push(`calibration spread ±${(spread * 100).toFixed(0)}%`);
  if (waitBehindOthers !== null && waitBehindOthers > BUSY_LIMITS.waitRatio) reasons.push(`our processes waited behind others for a CPU ${(waitBehindOthers * 100).toFixed(0)}% as long as they ran`);
  return { othersShare, stealShare, waitRatio, waitBehindOthers, noise: Math.max(spread ?? 0, waitBehindOthers ?? 0), busy: reasons.length > 0, reasons };
}

/**
 * Starts watching the machine: returns `end()`, which gives the window's load average (start, end), CPU steal share,
 * the share of the machine's CPU used by processes other than this bench's own tree, and whether it was busy.
 * `calibrations` (ms of calibrate() taken during the window) add the calibration spread.
 */
export function watchMachine() {
  const stat = readProcStat();
  const load = readLoad();
  // One walk of /proc for the tree, read both ways.
  const pids = [process.pid, ...descendants(process.pid)];
  const tree = ownTreeSchedstat(pids);
  const ticks = ownTreeTicks(pids);
  const startedAt = performance.now();
  return {
    end(calibrations = []) {
      const after = readProcStat();
      const total = after.total - stat.total;
      let ownCpu = 0;
      let ownWait = 0;
      const pidsNow = [process.pid, ...descendants(process.pid)];
      for (const [key, now] of ownTreeSchedstat(pidsNow)) {
        const then = tree.get(key) ?? { cpu: 0, wait: 0 };
        ownCpu += Math.max(0, now.cpu - then.cpu);
        ownWait += Math.max(0, now.wait - then.wait);
      }
      let ownTicks = 0;
      for (const [pid, now] of ownTreeTicks(pidsNow)) ownTicks += Math.max(0, now - (ticks.get(pid) ?? 0));
      const spread = calibrationSpread(calibrations);
      const judged = judgeWindow({ totalTicks: total, busyTicks: after.busy - stat.busy, stealTicks: after.steal - stat.steal, ownTicks, ownCpuNs: ownCpu, ownWaitNs: ownWait, spread });
      const { othersShare, stealShare, waitRatio, waitBehindOthers, reasons } = judged;
      return {
        seconds: Number(((performance.now() - startedAt) / 1000).toFixed(1)),
        cores: cpus().length,
        load: [load, readLoad()],
        othersShare: othersShare === null ? null : Number(othersShare.toFixed(3)),
        stealShare: stealShare === null ? null : Number(stealShare.toFixed(3)),
        calibrationMs: calibrations.map((value) => Number(value.toFixed(3))),
        calibrationSpread: spread === null ? null : Number(spread.toFixed(3)),
        waitRatio: waitRatio === null ? null : Number(waitRatio.toFixed(3)),
        waitBehindOthers: waitBehindOthers === null ? null : Number(waitBehindOthers.toFixed(3)),
        noise: judged.noise,
        busy: reasons.length > 0,
        reasons,
      };
    },
  };
}

/** One line about a window: "load 6.4→7.1, others 45% of the CPUs, steal 0%, calibration ±18% (busy)". */
export function describeMachine(window) {
  if (!window) return 'machine not watched';
  const pct = (value) => (value === null || value === undefined ? '?' : `${(value * 100).toFixed(0)}%`);
  const calibration = window.calibrationSpread === null ? '' : `, calibration spread ±${pct(window.calibrationSpread)} over ${window.calibrationMs.length}`;
  const behind = window.waitBehindOthers === null || window.waitBehindOthers === undefined ? '' : ` (${pct(window.waitBehindOthers)} behind other processes)`;
  const wait = window.waitRatio === null || window.waitRatio === undefined ? '' : `, run-queue wait ${pct(window.waitRatio)} of our CPU time${behind}`;
  return `load ${window.load[0].toFixed(1)}→${window.load[1].toFixed(1)}, other processes ${pct(window.othersShare)} of the CPUs, steal ${pct(window.stealShare)}${calibration}${wait}${window.busy ? ' (busy)' : ''}`;
}
