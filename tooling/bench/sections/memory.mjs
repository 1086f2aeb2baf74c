// Memory guard: a cell that grows past IPYTHON_MCP_MEMORY_LIMIT_MB (400 MB) through a real MCP client. An
// independent sampler (a worker thread reading the worker's /proc status every ~1 ms, far finer than the guard's
// 20 ms) stamps the moment the worker's resident memory first crosses the limit and the peak; the figures are
// crossing → structured answer, and peak − limit (the overshoot). Every cell is bounded (loops stop themselves at
// 1.5 GiB; the largest single allocation is 2 GiB, refused untouched by the backstop).
import { readFileSync, readlinkSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { CLI } from '../lib/env.mjs';
import { settle, startServer } from '../lib/mcp.mjs';
import { descendants, memoryOf, sleep, track } from '../lib/procs.mjs';
import { summarize } from '../lib/stats.mjs';

const LIMIT_MB = 400;
const MIB = 2 ** 20;

const LOOP = ['chunks = []', 'while len(chunks) < 192:', "    chunks.append(b'x' * 2**23)"];
/** The cases: the cell, and the outcome it must end with. */
export const MEMORY_CASES = [
  { name: 'loop, function-local list (preserved)', code: ['def grow():', ...LOOP.map((line) => `    ${line}`), 'grow()'].join('\n'), namespace: 'preserved' },
  { name: 'loop, global list (reset)', code: LOOP.join('\n'), namespace: 'reset' },
  { name: "one 1 GiB fill, under the backstop (hard margin → reset)", code: "big = b'x' * 2**30", namespace: 'reset' },
  { name: "one b'x' * 2**31 (backstop → preserved)", code: "big = b'x' * 2**31", namespace: 'preserved' },
];

// Runs in a worker thread: busy-ish sampling of one pid's VmRSS, ~1 ms apart, until told to stop.
const SAMPLER = `
const { workerData, parentPort } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const fd = openSync('/proc/' + workerData.pid + '/status', 'r');
const buffer = Buffer.alloc(16384);
const flag = new Int32Array(workerData.stop);
const nap = new Int32Array(new SharedArrayBuffer(4));
let peak = 0, crossedAt = null, samples = 0;
while (Atomics.load(flag, 0) === 0) {
  let text;
  try { text = buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0)); } catch { break; }
  const at = text.indexOf('VmRSS:');
  const bytes = at < 0 ? 0 : Number.parseInt(text.slice(at + 6, text.indexOf('\\n', at)), 10) * 1024;
  samples += 1;
  if (bytes > peak) peak = bytes;
  if (crossedAt === null && bytes >= workerData.limit) crossedAt = performance.timeOrigin + performance.now();
  Atomics.wait(nap, 0, 0, 1);
}
try { closeSync(fd); } catch {}
parentPort.postMessage({ peak, crossedAt, samples });
`;

function startSampler(pid, limitBytes) {
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(SAMPLER, { eval: true, workerData: { pid, limit: limitBytes, stop } });
  const result = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      Atomics.store(new Int32Array(stop), 0, 1);
      const value = await result;
      await worker.terminate();
      return value;
    },
  };
}

/**
 * The active worker's pid on this host. Inside --sandbox the pid a cell sees is its number in the engine's pid
 * namespace (the standby holds the same number in another one, and may have started in the same clock tick), so the
 * worker is found in the server's tree by its innermost namespace number and its pid namespace's inode, which reads
 * the same from inside and out.
 */
async function workerPidOf(server) {
  const result = await server.call('execute', {
    code: 'import os as _bench_os\n(_bench_os.getpid(), _bench_os.readlink("/proc/self/ns/pid"))',
  });
  const [inner, namespace] = result.structuredContent?.result?.value ?? [];
  if (typeof inner !== 'number') throw new Error(`no worker pid: ${JSON.stringify(result).slice(0, 200)}`);
  const found = descendants(server.pid).filter((pid) => {
    try {
      const nspid = /NSpid:\s+([\d\s]+)\n/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim().split(/\s+/).map(Number) ?? [];
      return readlinkSync(`/proc/${pid}/ns/pid`) === namespace && nspid.at(-1) === inner;
    } catch {
      return false;
    }
  });
  if (found.length !== 1) throw new Error(`the worker (pid ${inner} in its namespace) is ${found.length} processes of the server's tree`);
  track(found[0], 'memory worker');
  return found[0];
}

/**
 * Resident bytes of the other processes in the guard's tree of `workerPid`: the tree rooted at the server's child
 * that holds the worker (inside --sandbox the engine's eight processes, about 25 MiB; unsandboxed nothing, the root
 * being the worker). The guard counts them, so the sampler's line for the worker alone is the limit less them.
 */
function othersInTree(serverPid, workerPid) {
  const roots = readFileSync(`/proc/${serverPid}/task/${serverPid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  for (const root of roots) {
    const members = [root, ...descendants(root)];
    if (members.includes(workerPid)) return members.filter((pid) => pid !== workerPid).reduce((sum, pid) => sum + (memoryOf(pid)?.rss ?? 0), 0);
  }
  return 0;
}

/** `sandboxed`: the server runs with --sandbox (the guard's tree then holds the engine's processes too). */
export async function measureMemory(ctx, { sandboxed = false } = {}) {
  const limitBytes = LIMIT_MB * MIB;
  const server = await startServer(ctx.modules, {
    args: [CLI, ...(sandboxed ? ['--sandbox'] : [])],
    env: ctx.serverEnv({ IPYTHON_MCP_MEMORY_LIMIT_MB: String(LIMIT_MB), IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '60' }),
    label: `memory bench${sandboxed ? ' (--sandbox)' : ''}`,
  });
  const cases = [];
  try {
    for (const memoryCase of MEMORY_CASES) {
      const samples = [];
      for (let rep = 0; rep < ctx.n.memory; rep += 1) {
        await settle(server);
        const pid = await workerPidOf(server);
        const others = othersInTree(server.pid, pid);
        const sampler = startSampler(pid, limitBytes - others);
        await sleep(20);
        const sentAt = performance.timeOrigin + performance.now();
        const result = await server.call('execute', { code: memoryCase.code });
        const answeredAt = performance.timeOrigin + performance.now();
        const seen = await sampler.stop();
        const body = result.structuredContent ?? {};
        if (body.error?.code !== 'memory_limit' || body.runtime?.namespace !== memoryCase.namespace) {
          throw new Error(`${memoryCase.name}: expected memory_limit/${memoryCase.namespace}, got ${JSON.stringify(body).slice(0, 300)}`);
        }
        samples.push({
          answerAfterCrossingMs: seen.crossedAt === null ? null : answeredAt - seen.crossedAt,
          answerAfterSendMs: answeredAt - sentAt,
          peakMb: (seen.peak + others) / MIB,
          overshootMb: Math.max(0, seen.peak + others - limitBytes) / MIB,
          othersInTreeMb: others / MIB,
          trigger: body.error.details?.trigger ?? null,
          guardPeakMb: body.error.details?.peak_mb ?? null,
          samplerReads: seen.samples,
        });
      }
      const crossing = samples.map((sample) => sample.answerAfterCrossingMs).filter((value) => value !== null);
      cases.push({
        name: memoryCase.name,
        namespace: memoryCase.namespace,
        samples,
        answerAfterCrossing: summarize(crossing),
        answerAfterSend: summarize(samples.map((sample) => sample.answerAfterSendMs)),
        overshootMb: summarize(samples.map((sample) => sample.overshootMb)),
        peakMb: summarize(samples.map((sample) => sample.peakMb)),
      });
    }
    return {
      limitMb: LIMIT_MB,
      cases,
      note:
        "sampler: worker VmRSS every ~1 ms from a bench thread, plus the other processes of the guard's tree read once before the cell " +
        '(the engine\'s, inside --sandbox); the guard reads every 20 ms',
    };
  } finally {
    await server.close();
  }
}
