// The agent's cells in a notebook's shared document (issue 49), on a Jupyter server with jupyter-collaboration:
//
// - execute("1+1") with mirroring on against off (`--notebook-cells off`): two notebooks, each with its own session
//   and kernel (one ipython-mcp per kernel), both agents warm at once and measured in interleaved rounds; the ratio
//   is taken per round from that round's medians. Goal ≤ 1.15×.
// - how long after the agent's execute starts its cell is visible to a second document client (a reader of the same
//   room, as another browser tab is): median of 15. Goal ≤ 300 ms.
// - the agent's streamed output in that reader, line by line, and a cell printing 100 lines over time with mirroring
//   on against off (notebook-streams.mjs; issue 58). Goals ≤ 300 ms and ≤ 1.15×.
//
// Run alone: `node tooling/bench/sections/notebook.mjs [python]` (prints JSON), or as the `notebook` section of
// `pnpm bench`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, ROOT } from '../lib/env.mjs';
import { startServer } from '../lib/mcp.mjs';
import { ratio, spread, summarize } from '../lib/stats.mjs';
import { CELL, checkExecuteResult, timeLoop } from './execute.mjs';
import { startJupyterServer } from './jupyter.mjs';
import { measureNotebookStreams } from './notebook-streams.mjs';

const EMPTY_NOTEBOOK = { cells: [], metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } }, nbformat: 4, nbformat_minor: 5 };
const VISIBILITY_SAMPLES = 15;

async function notebookSession(server, path) {
  const session = await server.rest('POST', 'api/sessions', { path, type: 'notebook', name: '', kernel: { name: 'python3' } });
  if (session.status !== 201) throw new Error(`could not open a session for ${path}: HTTP ${session.status}`);
  return session.body.kernel.id;
}

/**
 * @param ctx - `{ modules, python, serverEnv(), n: { jupyter, rounds, warmup } }` (what run.mjs passes)
 */
export async function measureNotebook(ctx) {
  const server = await startJupyterServer(ctx.python);
  const agents = [];
  let reader;
  try {
    const probe = await server.rest('PUT', 'api/collaboration/session/none.ipynb', { format: 'json', type: 'notebook' });
    if (probe.status === 404 && probe.body === undefined) throw new Error(`${ctx.python} has no jupyter-collaboration (the .venv test extra)`);
    for (const path of ['on.ipynb', 'off.ipynb']) writeFileSync(join(server.rootDir, path), JSON.stringify(EMPTY_NOTEBOOK));
    await notebookSession(server, 'on.ipynb');
    await notebookSession(server, 'off.ipynb');
    const start = (path, extra) =>
      startServer(ctx.modules, { args: [CLI, '--jupyter', server.url, '--notebook', path, ...extra], env: { ...ctx.serverEnv(), JUPYTER_TOKEN: server.token }, label: `ipython-mcp --notebook ${path}` });
    const on = await start('on.ipynb', []);
    agents.push(on);
    const off = await start('off.ipynb', ['--notebook-cells', 'off']);
    agents.push(off);
    const loops = {
      on: (count, warmup) => timeLoop(async () => checkExecuteResult(await on.call('execute', { code: CELL })), count, warmup),
      off: (count, warmup) => timeLoop(async () => checkExecuteResult(await off.call('execute', { code: CELL })), count, warmup),
    };
    const names = Object.keys(loops);
    for (const name of names) await loops[name](0, ctx.n.warmup);
    const rounds = ctx.n.rounds;
    const block = Math.max(1, Math.round(ctx.n.jupyter / rounds));
    const samples = { on: [], off: [] };
    const perRound = [];
    for (let round = 0; round < rounds; round += 1) {
      // The same fixed CPU work each round: how much of a CPU the bench got (lib/noise.mjs).
      ctx.calibrate?.();
      const medians = {};
      for (let index = 0; index < names.length; index += 1) {
        const name = names[(index + round) % names.length];
        const got = await loops[name](block, 0);
        samples[name].push(...got);
        medians[name] = summarize(got).median;
      }
      perRound.push(medians);
    }
    const status = await on.structured('runtime_status', {});
    if (status?.backend?.notebook_cells?.mirrored !== true) throw new Error(`mirroring is not on: ${JSON.stringify(status?.backend?.notebook_cells)}`);

    // A second document client on on.ipynb: the time from the agent's execute starting to its cell in this reader.
    const { openSharedNotebook } = await import(pathToFileURL(join(ROOT, 'packages/notebook-document/dist/index.js')).href);
    reader = await openSharedNotebook({ url: server.url, token: server.token, path: 'on.ipynb', displayName: 'bench reader' });
    const visible = [];
    for (let index = 0; index < VISIBILITY_SAMPLES; index += 1) {
      const marker = `# visibility probe ${index} ${Date.now()}`;
      const seen = new Promise((resolve) => {
        const check = () => {
          const cells = reader.notebook.cells;
          const last = cells[cells.length - 1];
          if (last !== undefined && last.getSource().includes(marker)) {
            reader.notebook.ydoc.off('update', check);
            resolve(performance.now());
          }
        };
        reader.notebook.ydoc.on('update', check);
      });
      const started = performance.now();
      const answered = on.call('execute', { code: `${marker}\n1+1` });
      const at = await seen;
      visible.push(at - started);
      checkExecuteResult(await answered);
    }
    const checkOk = (result) => {
      if (result?.isError) throw new Error(`the streaming cell failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 300)}`);
    };
    const streams = await measureNotebookStreams({ on, off, reader, rounds: Math.max(3, Math.round(rounds / 3)), perRound: 3, checkOk });
    const over = spread(perRound.map((medians) => ratio(medians.on, medians.off)));
    return {
      rounds,
      perLoop: block * rounds,
      loops: Object.fromEntries(names.map((name) => [name, { samples: samples[name], summary: summarize(samples[name]) }])),
      ratios: { onOverOff: over },
      visibility: { samples: visible, summary: summarize(visible) },
      streams,
    };
  } finally {
    reader?.close();
    for (const agent of agents) await agent.close().catch(() => undefined);
    await server.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { loadModules } = await import('../lib/env.mjs');
  const python = process.argv[2] ?? join(ROOT, '.venv/bin/python');
  const modules = await loadModules();
  const quick = process.argv.includes('--quick');
  const result = await measureNotebook({
    modules,
    python,
    serverEnv: () => ({ IPYTHON_MCP_PYTHON: python }),
    n: { jupyter: quick ? 100 : 300, rounds: quick ? 7 : 15, warmup: 20 },
  });
  const { loops, ratios, visibility, streams } = result;
  process.stdout.write(
    `${JSON.stringify(
      {
        on_median_ms: loops.on.summary.median,
        off_median_ms: loops.off.summary.median,
        on_over_off: ratios.onOverOff,
        visible_median_ms: visibility.summary.median,
        visible_p90_ms: visibility.summary.p90,
        visible_samples_ms: visibility.samples.map((value) => Math.round(value * 10) / 10),
        streamed_line_median_ms: streams.latency.summary.median,
        streamed_line_p90_ms: streams.latency.summary.p90,
        streamed_line_samples_ms: streams.latency.samples.map((value) => Math.round(value * 10) / 10),
        hundred_lines_on_median_ms: streams.hundredLines.loops.on.summary.median,
        hundred_lines_off_median_ms: streams.hundredLines.loops.off.summary.median,
        hundred_lines_on_over_off: streams.hundredLines.onOverOff,
        rounds: result.rounds,
        calls_per_side: result.perLoop,
      },
      null,
      2,
    )}\n`,
  );
  process.exit(0);
}
