// Three agents taking turns on one kernel (issue 53, "Done when"): three ipython-mcp processes attached to the same
// kernel (`--jupyter URL --kernel ID`), each `execute("1+1")` in turn, never two at once, against one of them alone
// on the same kernel (the other two attached and idle), in interleaved rounds: each agent's median over the alone
// median, per round. Goal ≤ 1.2×. What sharing costs beyond that (every attached client hears every cell's IOPub)
// is shown by one more figure: the first agent alone before the other two attached (not interleaved).
import { CLI } from '../lib/env.mjs';
import { startServer } from '../lib/mcp.mjs';
import { ratio, spread, summarize } from '../lib/stats.mjs';
import { CELL, checkExecuteResult, timeLoop } from './execute.mjs';
import { startJupyterServer } from './jupyter.mjs';

const AGENTS = ['a', 'b', 'c'];

/** Stock server and TCP_NODELAY (jupyter.mjs): the stall of the stock server's WebSockets hides small costs. */
export async function measureJupyterTurns(ctx) {
  return { stock: await measureOn(ctx, false), nodelay: await measureOn(ctx, true) };
}

async function measureOn(ctx, nodelay) {
  const server = await startJupyterServer(ctx.python, { nodelay });
  const agents = {};
  let kernelId;
  try {
    const started = await server.rest('POST', 'api/kernels', { name: 'python3' });
    if (started.status !== 201) throw new Error(`could not start a kernel: HTTP ${started.status}`);
    kernelId = started.body.id;
    const attach = (name) =>
      startServer(ctx.modules, {
        args: [CLI, '--jupyter', server.url, '--kernel', kernelId],
        env: { ...ctx.serverEnv(), JUPYTER_TOKEN: server.token },
        label: `ipython-mcp --jupyter (agent ${name})`,
      });
    const call = (name) => async () => checkExecuteResult(await agents[name].call('execute', { code: CELL }));
    const total = ctx.n.jupyter;
    const rounds = ctx.n.rounds;
    const block = Math.max(1, Math.round(total / rounds));

    agents.a = await attach('a');
    // Before the others are there: what one agent costs with nobody else on the kernel (a reference, not a round).
    const first = await timeLoop(call('a'), block * 2, ctx.n.warmup);
    agents.b = await attach('b');
    agents.c = await attach('c');
    for (const name of AGENTS) await timeLoop(call(name), 0, ctx.n.warmup);

    // One turn: a, b, c each call once, one after the other; the samples are each agent's own calls.
    const turns = async (count) => {
      const got = Object.fromEntries(AGENTS.map((name) => [name, []]));
      for (let index = 0; index < count; index += 1) {
        for (const name of AGENTS) got[name].push(...(await timeLoop(call(name), 1, 0)));
      }
      return got;
    };
    const samples = { alone: [], ...Object.fromEntries(AGENTS.map((name) => [name, []])) };
    const perRound = [];
    for (let round = 0; round < rounds; round += 1) {
      // The same fixed CPU work each round: how much of a CPU the bench got (lib/noise.mjs).
      ctx.calibrate?.();
      const medians = {};
      const runAlone = async () => {
        const got = await timeLoop(call('a'), block, 0);
        samples.alone.push(...got);
        medians.alone = summarize(got).median;
      };
      const runTurns = async () => {
        const got = await turns(block);
        for (const name of AGENTS) {
          samples[name].push(...got[name]);
          medians[name] = summarize(got[name]).median;
        }
      };
      // The order alternates per round, so a drift of the machine's load hits both sides.
      if (round % 2 === 0) {
        await runAlone();
        await runTurns();
      } else {
        await runTurns();
        await runAlone();
      }
      perRound.push(medians);
    }
    const over = (name) => spread(perRound.map((medians) => ratio(medians[name], medians.alone)));
    return {
      nodelay,
      rounds,
      perLoop: block * rounds,
      loops: Object.fromEntries(Object.entries(samples).map(([name, got]) => [name, { summary: summarize(got) }])),
      first: { summary: summarize(first) },
      ratios: Object.fromEntries(AGENTS.map((name) => [name, over(name)])),
    };
  } finally {
    await Promise.all(Object.values(agents).map((agent) => agent.close().catch(() => undefined)));
    if (kernelId) await server.rest('DELETE', `api/kernels/${kernelId}`).catch(() => undefined);
    await server.stop();
  }
}

/** The table rows: each agent taking turns over one agent alone on the same kernel (≤ 1.2×), per server flavour. */
export function jupyterTurnsRows(measured, { row, formatRatio, judge, ciText }) {
  if (!measured) return [];
  return [...serverRows(measured.stock, 'stock jupyter server'), ...serverRows(measured.nodelay, 'same server, TCP_NODELAY on its WebSockets')];

  function serverRows(on, flavour) {
    const { loops, ratios, rounds, first } = on;
    const worstName = AGENTS.reduce((most, name) => (ratios[name].median > ratios[most].median ? name : most), AGENTS[0]);
    const each = AGENTS.map((name) => `${name} ${formatRatio(ratios[name].median)}${ciText(ratios[name])} (rounds ${formatRatio(ratios[name].min)}–${formatRatio(ratios[name].max)})`);
    return [
      row(`three agents taking turns on one kernel, ${flavour} (ours)`, {
        median: Math.max(...AGENTS.map((name) => loops[name].summary.median)),
        goal: '≤ 1.2× one agent alone',
        verdict: judge(ratios[worstName], 1.2),
        comparison: `each agent's median over the alone median, median of ${rounds} per-round ratios: ${each.join(', ')}`,
        raw: { ratios, medians: Object.fromEntries(Object.entries(loops).map(([name, loop]) => [name, loop.summary.median])) },
      }),
      row('  one agent alone on the same kernel (the others attached, idle)', {
        median: loops.alone.summary.median,
        p90: loops.alone.summary.p90,
        goal: '(reference)',
        comparison: 'interleaved with the turns, same run',
      }),
      row('  the same agent before the others attached', {
        median: first.summary.median,
        p90: first.summary.p90,
        goal: '(reference)',
        comparison: `alone with the others attached is ${formatRatio(ratio(loops.alone.summary.median, first.summary.median))} this (their listening; not interleaved)`,
      }),
    ];
  }
}
