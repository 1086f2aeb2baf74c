// execute("1+1") on protocol 2026-07-28 against 2025-11-25 (issue 52): the same built server, one stdio process per
// era, and the bare SDK floor of each era (lib/era-floor.mjs), all four warm at once and measured in interleaved rounds
// (order rotated per round), so load drift hits every side of a ratio alike. Both eras use the v2 SDK client, so the
// client library is the same: in its default mode for 2025-11-25 (`initialize`, what 2025-era clients get from our v1
// SDK server), pinned to 2026-07-28 for the other (`server/discover`, the per-request envelope, our v2 SDK server in
// modern-server.ts behind transports/era-stdio.ts). The floors replay one recorded result of ours. Beside wall time,
// each server's own CPU per call (scheduler time of its Node process, all threads): less hostage to a loaded machine
// than wall time. The Python worker behind our two servers is the same program in both eras, so it is left out.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, ROOT } from '../lib/env.mjs';
import { cpuPerCall, cpuSnapshot, track, untrack } from '../lib/procs.mjs';
import { quantile, ratio, spread, summarize } from '../lib/stats.mjs';

const FLOOR = join(ROOT, 'tooling/bench/lib/era-floor.mjs');
const COMPOSED = join(ROOT, 'tooling/bench/lib/composed-server.mjs');
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

/** The four targets: [key, era, the server's node arguments, label]. */
const TARGETS = [
  ['ours2025', LEGACY, [CLI], `ipython-mcp on ${LEGACY} (v1 SDK server)`],
  ['ours2026', MODERN, [CLI], `ipython-mcp on ${MODERN} (v2 SDK server)`],
  ['floor2025', LEGACY, [FLOOR], `bare SDK floor ${LEGACY} (v1 Server)`],
  ['floor2026', MODERN, [FLOOR], `bare SDK floor ${MODERN} (v2 Server)`],
  // The composed floors (lib/composed-server.mjs: a bare SDK server → pipe → plain run_cell child, our tool definition
  // and result shape), one per era on that era's SDK, so each era's ratio to its composed floor is against its own SDK.
  ['composed2025', LEGACY, [COMPOSED], `composed floor ${LEGACY} (v1 Server → pipe → run_cell)`],
  ['composed2026', MODERN, [COMPOSED], `composed floor ${MODERN} (v2 Server → pipe → run_cell)`],
];

/** The v2 SDK client (the one that speaks both eras), resolved through the app that depends on it. */
async function loadClient() {
  const dir = join(ROOT, 'apps/ipython-mcp/node_modules/@modelcontextprotocol/client/dist');
  const [{ Client }, { StdioClientTransport }] = await Promise.all([import(pathToFileURL(join(dir, 'index.mjs')).href), import(pathToFileURL(join(dir, 'stdio.mjs')).href)]);
  return { Client, StdioClientTransport };
}

/** A connected client of `era` on `args`, checked to have negotiated that era. */
async function open(sdk, era, args, env, label) {
  const options = era === MODERN ? { versionNegotiation: { mode: { pin: MODERN } } } : {};
  const client = new sdk.Client({ name: 'bench-protocol-eras', version: '1' }, options);
  const transport = new sdk.StdioClientTransport({ command: process.execPath, args, env: { ...process.env, ...env, BENCH_ERA: era }, stderr: 'ignore' });
  await client.connect(transport);
  track(transport.pid, label);
  const negotiated = client.getNegotiatedProtocolVersion() === MODERN ? MODERN : LEGACY;
  if (negotiated !== era) throw new Error(`${label}: asked for ${era}, negotiated ${client.getNegotiatedProtocolVersion()}`);
  const { tools } = await client.listTools();
  return {
    pid: transport.pid,
    tools,
    call: () => client.callTool({ name: 'execute', arguments: { code: '1+1' } }),
    close: async () => {
      await client.close().catch(() => undefined);
      untrack(transport.pid);
    },
  };
}

/** A tool result as our handler made it: the keys the SDK stamps into `_meta` (`io.modelcontextprotocol/…`) left out. */
function withoutSdkMeta(result) {
  const meta = Object.fromEntries(Object.entries(result._meta ?? {}).filter(([key]) => !key.startsWith('io.modelcontextprotocol/')));
  return { ...result, _meta: meta };
}

/** Per-call wall times (ms) of `count` sequential calls, and the server's CPU per call (µs) over them. */
async function block(target, count) {
  const samples = [];
  const before = { server: cpuSnapshot(target.pid) };
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    const result = await target.call();
    samples.push(performance.now() - started);
    if (result.isError) throw new Error(`execute("1+1") failed: ${JSON.stringify(result.content).slice(0, 300)}`);
  }
  const { totalUs, threadsUs } = cpuPerCall(before, { server: cpuSnapshot(target.pid) }, count).server;
  return { samples, cpuUs: totalUs, threadsUs };
}

/**
 * A target's server CPU per call (µs): all threads, and the main thread alone. The other threads are V8's (JIT
 * compilation, GC) and swing widely from round to round while the JIT still optimizes; the main thread is where the
 * request is served, the SDK's work and ours alike.
 */
function cpuFigures(perRound, threadsPerRound) {
  const main = threadsPerRound.map((threads) => threads.main ?? 0);
  return { perRound, median: quantile(perRound, 0.5), mainPerRound: main, mainMedian: quantile(main, 0.5), threadsPerRound };
}

/** The four targets warm, then `ctx.n.rounds` rounds of a block of `ctx.n.eraCalls` calls each. */
export async function measureProtocolEras(ctx) {
  const sdk = await loadClient();
  const { rounds, eraCalls: calls, eraWarmup: warmup } = ctx.n;
  const targets = {};
  const scratch = mkdtempSync(join(tmpdir(), 'bench-protocol-eras-'));
  const shapeFile = join(scratch, 'shape.json');
  try {
    let recorded;
    for (const [key, era, args, label] of TARGETS) {
      // The floors answer one recorded result of ours, so the SDK's cost of our result's shape is on both sides; the
      // composed floors list our execute tool (its output schema, which the client checks) and fill that result's
      // shape from their run_cell child.
      const env =
        args[0] === FLOOR ? { BENCH_ERA_RESULT: recorded } : args[0] === COMPOSED ? { BENCH_SHAPED_RESULT: shapeFile, BENCH_PYTHON: ctx.python } : {};
      targets[key] = await open(sdk, era, args, ctx.serverEnv(env), label);
      if (recorded === undefined) {
        recorded = JSON.stringify(withoutSdkMeta(await targets[key].call()));
        const tool = targets[key].tools.find((entry) => entry.name === 'execute');
        writeFileSync(shapeFile, JSON.stringify({ tool, result: JSON.parse(recorded) }));
      }
    }
    const keys = Object.keys(targets);
    // A Node server's JIT keeps optimizing over its first few thousand calls; ours has more code than the floors.
    for (const key of keys) await block(targets[key], warmup);
    const wall = Object.fromEntries(keys.map((key) => [key, []]));
    const roundMedians = Object.fromEntries(keys.map((key) => [key, []]));
    const cpu = Object.fromEntries(keys.map((key) => [key, []]));
    const threads = Object.fromEntries(keys.map((key) => [key, []]));
    for (let round = 0; round < rounds; round += 1) {
      // The same fixed CPU work each round: how much of a CPU the bench got (lib/noise.mjs).
      ctx.calibrate?.();
      for (let index = 0; index < keys.length; index += 1) {
        const key = keys[(index + round) % keys.length];
        const measured = await block(targets[key], calls);
        wall[key].push(...measured.samples);
        roundMedians[key].push(quantile(measured.samples, 0.5));
        cpu[key].push(measured.cpuUs);
        threads[key].push(measured.threadsUs);
      }
    }
    const mainOf = Object.fromEntries(keys.map((key) => [key, threads[key].map((entry) => entry.main ?? 0)]));
    const perRound = (of, a, b) => spread(of[a].map((value, index) => ratio(value, of[b][index])));
    return {
      rounds,
      callsPerRound: calls,
      warmup,
      labels: Object.fromEntries(TARGETS.map(([key, , , label]) => [key, label])),
      loops: Object.fromEntries(keys.map((key) => [key, { summary: summarize(wall[key]), roundMediansMs: roundMedians[key], cpuPerCallUs: cpuFigures(cpu[key], threads[key]) }])),
      ratios: {
        wall: { ours: perRound(roundMedians, 'ours2026', 'ours2025'), floors: perRound(roundMedians, 'floor2026', 'floor2025') },
        cpu: { ours: perRound(cpu, 'ours2026', 'ours2025'), floors: perRound(cpu, 'floor2026', 'floor2025') },
        // What ours adds over the bare SDK server of its era, 2026 over 2025: the era's cost that is our code's.
        // Ours against the composed floor of its own era (same SDK, same client mode), and those two ratios' quotient.
        composed: {
          ours2025: perRound(roundMedians, 'ours2025', 'composed2025'),
          ours2026: perRound(roundMedians, 'ours2026', 'composed2026'),
          floors: perRound(roundMedians, 'composed2026', 'composed2025'),
        },
        oursOverFloor: spread(roundMedians.ours2026.map((value, index) => ratio(value - roundMedians.floor2026[index], roundMedians.ours2025[index] - roundMedians.floor2025[index]))),
        mainThreadCpu: { ours: perRound(mainOf, 'ours2026', 'ours2025'), floors: perRound(mainOf, 'floor2026', 'floor2025') },
      },
    };
  } finally {
    for (const target of Object.values(targets)) await target.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The report's rows (lib/report.mjs): the era ratio of ours (≤ 1.05×) with the floors' ratio beside it. */
export function protocolErasRows(measured, { row, formatMs, formatRatio, judge, ciText }) {
  if (!measured) return [];
  const { loops, ratios, rounds, callsPerRound, labels } = measured;
  const range = (entry) => `rounds ${formatRatio(entry.min)}–${formatRatio(entry.max)}`;
  const cpuOf = (key) => loops[key].cpuPerCallUs.median;
  const mainOf = (key) => loops[key].cpuPerCallUs.mainMedian;
  const us = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(0)} µs`;
  const over = ratios.wall.ours.median;
  // What ours adds over the bare SDK server of the same era: if it grows from one era to the other, the cause is ours.
  const above = (key, floor) =>
    `${formatMs(loops[key].summary.median - loops[floor].summary.median)} wall and ${formatMs((cpuOf(key) - cpuOf(floor)) / 1000)} server CPU over its era's floor`;
  const figure = (key, comparison) =>
    row(`  ${labels[key]}`, { median: loops[key].summary.median, p90: loops[key].summary.p90, goal: '(figure)', comparison: `${comparison}; main thread ${formatMs(mainOf(key) / 1000)}` });
  return [
    row(`goal ratio: execute("1+1") on ${MODERN} / on ${LEGACY} (ours, stdio)`, {
      value: `${formatRatio(over)}${ciText(ratios.wall.ours)}`,
      goal: '≤ 1.05×',
      verdict: judge(ratios.wall.ours, 1.05),
      comparison:
        `median of ${rounds} per-round ratios of ${callsPerRound} calls (${range(ratios.wall.ours)}); bare SDK floors ${formatRatio(ratios.wall.floors.median)} (${range(ratios.wall.floors)}); ` +
        `server CPU ${formatRatio(ratios.cpu.ours.median)}, floors ${formatRatio(ratios.cpu.floors.median)}; ` +
        `main-thread CPU per call 2026 − 2025: ours ${us(mainOf('ours2026') - mainOf('ours2025'))}, floors ${us(mainOf('floor2026') - mainOf('floor2025'))}`,
      raw: { ratio: over, ratios },
    }),
    row('  (decomposition) what ours adds over its era\'s bare SDK floor, 2026 / 2025', {
      value: formatRatio(ratios.oursOverFloor.median),
      goal: '(decomposition)',
      comparison: `per round: (ours − floor) on ${MODERN} / (ours − floor) on ${LEGACY}, wall medians (${range(ratios.oursOverFloor)}); near 1× means the era's extra cost is the SDK's`,
      raw: { ratio: ratios.oursOverFloor.median, rounds: ratios.oursOverFloor },
    }),
    figure('ours2025', `server CPU ${formatMs(cpuOf('ours2025') / 1000)} per call; ${above('ours2025', 'floor2025')}`),
    figure('ours2026', `server CPU ${formatMs(cpuOf('ours2026') / 1000)} per call (${formatRatio(ratios.cpu.ours.median)} the 2025 era's, ${range(ratios.cpu.ours)}); ${above('ours2026', 'floor2026')}`),
    figure('floor2025', `server CPU ${formatMs(cpuOf('floor2025') / 1000)} per call`),
    figure('floor2026', `server CPU ${formatMs(cpuOf('floor2026') / 1000)} per call (${formatRatio(ratios.cpu.floors.median)} the 2025 floor's, ${range(ratios.cpu.floors)})`),
    ...(ratios.composed === undefined
      ? []
      : [
          row(`  ours / composed floor of the same era and SDK, ${LEGACY} (v1 SDK)`, {
            value: formatRatio(ratios.composed.ours2025.median),
            goal: '(figure)',
            comparison: `median of per-round ratios (${range(ratios.composed.ours2025)}); floor ${formatMs(loops.composed2025.summary.median)}, server CPU ${formatMs(cpuOf('composed2025') / 1000)} per call`,
            raw: { ratio: ratios.composed.ours2025.median, rounds: ratios.composed.ours2025 },
          }),
          row(`  ours / composed floor of the same era and SDK, ${MODERN} (v2 SDK)`, {
            value: formatRatio(ratios.composed.ours2026.median),
            goal: '(figure)',
            comparison: `median of per-round ratios (${range(ratios.composed.ours2026)}); floor ${formatMs(loops.composed2026.summary.median)}, server CPU ${formatMs(cpuOf('composed2026') / 1000)} per call; composed floors 2026 / 2025 ${formatRatio(ratios.composed.floors.median)} (${range(ratios.composed.floors)})`,
            raw: { ratio: ratios.composed.ours2026.median, rounds: ratios.composed.ours2026 },
          }),
        ]),
  ];
}
