// The opt-in sandbox (--sandbox) against the same server without it, in the same run:
// - start-up: spawn → initialize and spawn → first execute result, over fresh servers, one of each kind per rep
//   (order rotated per rep), so the two kinds are spawned seconds apart;
// - warm execute("1+1"): servers side by side, sandboxed and not, each with the memory guard on (its default) and
//   off, taking turns call by call in 20 blocks (the order rotated each turn); the headline is the median over blocks of
//   (sandboxed block median) / (unsandboxed block median), which a drifting machine load disturbs least. The guard-off
//   pair separates what the engine's process layout costs the guard from what it costs the round trip;
// - the memory guard's read at dispatch (ProcessTreeMemory.sample without discovery, from the built package) on a
//   worker tree of each server, in interleaved rounds: what the guard adds to every operation, free of the round
//   trip's noise.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT } from '../lib/env.mjs';
import { evaluate, settle, startServer } from '../lib/mcp.mjs';
import { cpuPerCall, cpuSnapshot, descendants, sleep } from '../lib/procs.mjs';
import { quantile, spread, summarize } from '../lib/stats.mjs';
import { CELL, checkExecuteResult } from './execute.mjs';

const BLOCKS = 20;
const median = (values) => quantile(values, 0.5);

const VARIANTS = [
  { key: 'plain', args: [], env: {} },
  { key: 'sandboxed', args: ['--sandbox'], env: {} },
  { key: 'plainNoGuard', args: [], env: { IPYTHON_MCP_MEMORY_LIMIT_MB: 'off' } },
  { key: 'sandboxedNoGuard', args: ['--sandbox'], env: { IPYTHON_MCP_MEMORY_LIMIT_MB: 'off' } },
];

/** Names (comm) of a pid's descendants, e.g. { bwrap: 4, python3: 2 }: the process layout the guard walks. */
function layout(pid) {
  const counts = {};
  for (const child of descendants(pid)) {
    try {
      const name = readFileSync(`/proc/${child}/comm`, 'utf8').trim();
      counts[name] = (counts[name] ?? 0) + 1;
    } catch {
      // gone
    }
  }
  return counts;
}

const READ_ROUNDS = 5;
const READS_PER_ROUND = 2000;

/**
 * A worker tree of `server` as the guard opens it: the root it spawned (the worker, or the engine's bwrap) and the pid
 * the worker reports about itself. Any of the server's workers will do (the active one and the standby have the same
 * layout).
 */
async function guardTree(server, ProcessTreeMemory, { wholeTree = false } = {}) {
  const reported = await evaluate(server, 'import os as _bench_os\n_bench_os.getpid()');
  const roots = readFileSync(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  const root = roots.includes(reported) ? reported : roots.find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bwrap');
  if (root === undefined) throw new Error(`no worker root among the server's children ${roots.join(' ')}`);
  // wholeTree: without the reported pid the tree takes its root for the worker and reads every process on each sample
  // (what the guard did inside the sandbox before it told the worker apart from the engine's processes).
  const tree = wholeTree ? new ProcessTreeMemory(root) : new ProcessTreeMemory(root, reported);
  tree.sample(true); // the first read finds the descendants, as the guard's first periodic read does
  return { tree, processes: 1 + descendants(root).length };
}

/** µs per dispatch read (sample without discovery) of each tree, over interleaved rounds. */
function dispatchReads(trees) {
  const perRound = Object.fromEntries(Object.keys(trees).map((key) => [key, []]));
  for (const { tree } of Object.values(trees)) for (let index = 0; index < 500; index += 1) tree.sample(false);
  for (let round = 0; round < READ_ROUNDS; round += 1) {
    for (const [key, { tree }] of Object.entries(trees)) {
      const started = performance.now();
      for (let index = 0; index < READS_PER_ROUND; index += 1) {
        if (tree.sample(false) === undefined) throw new Error(`the ${key} worker tree is gone`);
      }
      perRound[key].push(((performance.now() - started) * 1000) / READS_PER_ROUND);
    }
  }
  return Object.fromEntries(Object.entries(perRound).map(([key, values]) => [key, { us: median(values), rounds: values.map((value) => Number(value.toFixed(2))), processes: trees[key].processes }]));
}

/** On-CPU ns of every thread of `pid` and its descendants (the worker trees, the engine's processes), by pid:tid. */
function treeCpu(pid) {
  const threads = new Map();
  for (const member of [pid, ...descendants(pid)]) {
    for (const [tid, entry] of cpuSnapshot(member)) threads.set(`${member}:${tid}`, entry.ns);
  }
  return threads;
}

/** µs of CPU per call spent by the whole tree between two {@link treeCpu} snapshots (threads that ended are lost). */
function treeCpuPerCall(before, after, calls) {
  let total = 0;
  for (const [key, ns] of after) total += ns - (before.get(key) ?? 0);
  return Number((total / 1000 / calls).toFixed(1));
}

async function startUp(ctx, variant) {
  const server = await startServer(ctx.modules, { args: [CLI, ...variant.args], env: ctx.serverEnv(variant.env), label: `sandbox bench start-up (${variant.key})` });
  try {
    const initialize = server.timing.initializedAt - server.timing.spawnedAt;
    const result = await server.call('execute', { code: CELL });
    const firstExecute = performance.now() - server.timing.spawnedAt;
    checkExecuteResult(result);
    return { initialize, firstExecute };
  } finally {
    await server.close();
  }
}

export async function measureSandbox(ctx) {
  // Start-up, one spawn of each kind per rep.
  const starts = { plain: { initialize: [], firstExecute: [] }, sandboxed: { initialize: [], firstExecute: [] } };
  const startVariants = VARIANTS.slice(0, 2);
  for (let rep = 0; rep < ctx.n.sandboxStarts; rep += 1) {
    for (let offset = 0; offset < startVariants.length; offset += 1) {
      const variant = startVariants[(rep + offset) % startVariants.length];
      const measured = await startUp(ctx, variant);
      starts[variant.key].initialize.push(measured.initialize);
      starts[variant.key].firstExecute.push(measured.firstExecute);
      await sleep(300); // let the previous processes' exit settle before the next spawn
    }
  }
  const startPairs = starts.sandboxed.firstExecute.map((ms, rep) => ms / starts.plain.firstExecute[rep]);

  // Warm execute, four servers side by side.
  const servers = [];
  try {
    for (const variant of VARIANTS) {
      const server = await startServer(ctx.modules, { args: [CLI, ...variant.args], env: ctx.serverEnv(variant.env), label: `sandbox bench (${variant.key})` });
      servers.push(server);
      await settle(server);
      for (let index = 0; index < ctx.n.warmup; index += 1) checkExecuteResult(await server.call('execute', { code: CELL }));
    }
    const status = await servers[1].structured('runtime_status', {});
    if (!status.sandbox) throw new Error(`the --sandbox server reports no sandbox: ${JSON.stringify(status).slice(0, 300)}`);
    const layouts = Object.fromEntries(VARIANTS.map((variant, index) => [variant.key, layout(servers[index].pid)]));
    const samples = Object.fromEntries(VARIANTS.map((variant) => [variant.key, []]));
    const blockRatios = { guardOn: [], guardOff: [] };
    const snapshot = () => Object.fromEntries(VARIANTS.map((variant, index) => [variant.key, cpuSnapshot(servers[index].pid)]));
    const perBlock = Math.max(1, Math.round(ctx.n.execute / BLOCKS));
    const treeSnapshot = () => VARIANTS.map((_, index) => treeCpu(servers[index].pid));
    const cpuBefore = snapshot();
    const treeBefore = treeSnapshot();
    for (let block = 0; block < BLOCKS; block += 1) {
      // Within a block the four servers take turns call by call (the order rotated each turn), so each block's four
      // medians come from the same seconds of a machine whose load changes within seconds.
      const taken = VARIANTS.map(() => []);
      for (let call = 0; call < perBlock; call += 1) {
        for (let offset = 0; offset < VARIANTS.length; offset += 1) {
          const index = (block + call + offset) % VARIANTS.length;
          const started = performance.now();
          checkExecuteResult(await servers[index].call('execute', { code: CELL }));
          taken[index].push(performance.now() - started);
        }
      }
      const blockMedians = {};
      for (const [index, variant] of VARIANTS.entries()) {
        samples[variant.key].push(...taken[index]);
        blockMedians[variant.key] = median(taken[index]);
      }
      blockRatios.guardOn.push(blockMedians.sandboxed / blockMedians.plain);
      blockRatios.guardOff.push(blockMedians.sandboxedNoGuard / blockMedians.plainNoGuard);
    }
    const serverCpuPerCallUs = cpuPerCall(cpuBefore, snapshot(), perBlock * BLOCKS);
    const treeAfter = treeSnapshot();
    // Every process of each server (server, workers, standby, the engine's helpers): where the sandbox could add work
    // per call (the seccomp filter on each of the worker's system calls, the memory guard's reads in the server).
    const allCpuPerCallUs = Object.fromEntries(VARIANTS.map((variant, index) => [variant.key, treeCpuPerCall(treeBefore[index], treeAfter[index], perBlock * BLOCKS)]));
    const { ProcessTreeMemory } = await import(join(ROOT, 'packages/worker-supervisor/dist/process-tree-memory.js'));
    const trees = {
      plain: await guardTree(servers[0], ProcessTreeMemory),
      sandboxed: await guardTree(servers[1], ProcessTreeMemory),
      sandboxedWholeTree: await guardTree(servers[1], ProcessTreeMemory, { wholeTree: true }),
    };
    let guardDispatchRead;
    try {
      guardDispatchRead = dispatchReads(trees);
    } finally {
      for (const { tree } of Object.values(trees)) tree.close();
    }
    return {
      method:
        `start-up: ${ctx.n.sandboxStarts} reps, one spawn of each kind per rep, order rotated; warm: 4 servers side by side ` +
        `taking turns call by call, ${BLOCKS} blocks of ${perBlock} calls each, after ${ctx.n.warmup} warm-up calls each`,
      engine: status.sandbox.engine,
      startUp: {
        plain: { initialize: summarize(starts.plain.initialize), firstExecute: summarize(starts.plain.firstExecute), samples: starts.plain },
        sandboxed: { initialize: summarize(starts.sandboxed.initialize), firstExecute: summarize(starts.sandboxed.firstExecute), samples: starts.sandboxed },
        firstExecuteRatio: spread(startPairs),
      },
      warm: Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, { samples: values, summary: summarize(values) }])),
      pairedRatio: Object.fromEntries(Object.entries(blockRatios).map(([key, values]) => [key, spread(values)])),
      serverCpuPerCallUs,
      allCpuPerCallUs,
      guardDispatchRead,
      layouts,
    };
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
}
