// The notebook tool (issue 59) on a Jupyter server with jupyter-collaboration, the agent on a 200-cell notebook:
//
// - `notebook {action: read}` of the whole notebook, timed at the server: the client's round trip less that of a
//   minimal call of the same tool on the same server (arguments the tool refuses before it touches the notebook),
//   the two interleaved call by call in R rounds; per round, the difference of the medians over the goal.
//   Goal ≤ 100 ms.
// - `notebook {action: edit}` inserting a cell, from the call's start until a second document client of the room
//   (as another browser tab is) has the cell; per round, the median over the goal. Goal ≤ 300 ms.
//
// Both are reported as a ratio to the goal per round, with its bootstrap interval and the machine's noise
// (lib/noise.mjs), so a loaded machine gives "no verdict" rather than a wrong one.
//
// Run alone: `node tooling/bench/sections/notebook-tools.mjs [python] [--quick]` (prints JSON), or as the
// `notebook-tools` section of `pnpm bench`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, ROOT } from '../lib/env.mjs';
import { startServer } from '../lib/mcp.mjs';
import { spread, summarize } from '../lib/stats.mjs';
import { startJupyterServer } from './jupyter.mjs';

export const READ_GOAL_MS = 100;
export const EDIT_GOAL_MS = 300;
const CELLS = 200;

/** A 200-cell notebook as a person's might be: markdown notes between code cells that have run, with outputs. */
function bigNotebook() {
  const cells = [];
  for (let index = 0; index < CELLS; index += 1) {
    const id = `c${String(index).padStart(3, '0')}`;
    if (index % 4 === 0) {
      cells.push({ cell_type: 'markdown', id, metadata: {}, source: `## Step ${index / 4}\nWhat this part computes.` });
    } else {
      cells.push({
        cell_type: 'code',
        id,
        metadata: {},
        execution_count: index,
        source: `value_${index} = ${index} * 2\nprint(value_${index})`,
        outputs: [{ output_type: 'stream', name: 'stdout', text: `${index * 2}\n` }],
      });
    }
  }
  return { cells, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } }, nbformat: 4, nbformat_minor: 5 };
}

function textOf(result) {
  return (result?.content ?? []).map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

/** Checks that a read answered the whole notebook; the answer's length in characters. */
function checkRead(result) {
  const text = textOf(result);
  if (result?.isError || !text.startsWith(`notebook big.ipynb: ${CELLS}`) || !text.includes('id c199')) {
    throw new Error(`the read did not answer the whole notebook: ${text.slice(0, 300)}`);
  }
  return text.length;
}

function checkRefused(result) {
  if (result?.isError !== true || result.structuredContent?.error?.code !== 'invalid_arguments') {
    throw new Error(`the minimal call was not refused: ${JSON.stringify(result?.structuredContent ?? result?.content).slice(0, 300)}`);
  }
}

/**
 * @param ctx - `{ modules, python, serverEnv(), calibrate?(), n: { rounds, warmup } }` (what run.mjs passes)
 */
export async function measureNotebookTools(ctx, { readsPerRound = 10, editsPerRound = 5 } = {}) {
  const server = await startJupyterServer(ctx.python);
  let agent;
  let reader;
  try {
    const probe = await server.rest('PUT', 'api/collaboration/session/none.ipynb', { format: 'json', type: 'notebook' });
    if (probe.status === 404 && probe.body === undefined) throw new Error(`${ctx.python} has no jupyter-collaboration (the .venv test extra)`);
    writeFileSync(join(server.rootDir, 'big.ipynb'), JSON.stringify(bigNotebook()));
    writeFileSync(join(server.rootDir, 'edits.ipynb'), JSON.stringify(bigNotebook()));
    agent = await startServer(ctx.modules, { args: [CLI, '--jupyter', server.url], env: { ...ctx.serverEnv(), JUPYTER_TOKEN: server.token }, label: 'ipython-mcp --jupyter' });
    const open = async (path) => {
      const opened = await agent.call('notebook', { action: 'open', path });
      if (opened.isError) throw new Error(`could not open ${path}: ${textOf(opened).slice(0, 300)}`);
    };
    await open('big.ipynb');
    let answerChars = 0;
    const read = async () => {
      answerChars = checkRead(await agent.call('notebook', { action: 'read', count: CELLS }));
    };
    // The same tool on the same server, refused by its argument check: the round trip without the read.
    const minimal = async () => checkRefused(await agent.call('notebook', { action: 'read', count: 0 }));
    const timed = async (fn) => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    };
    for (let index = 0; index < ctx.n.warmup; index += 1) {
      await read();
      await minimal();
    }
    const rounds = ctx.n.rounds;
    const reads = { read: [], minimal: [], atServer: [] };
    const readRatios = [];
    for (let round = 0; round < rounds; round += 1) {
      ctx.calibrate?.();
      const got = { read: [], minimal: [] };
      // Call by call, the order alternating, so a drift of the machine's load hits both.
      for (let index = 0; index < readsPerRound; index += 1) {
        const pair = (index + round) % 2 === 0 ? ['read', 'minimal'] : ['minimal', 'read'];
        for (const name of pair) got[name].push(await timed(name === 'read' ? read : minimal));
      }
      const atServer = summarize(got.read).median - summarize(got.minimal).median;
      reads.read.push(...got.read);
      reads.minimal.push(...got.minimal);
      reads.atServer.push(atServer);
      readRatios.push(atServer / READ_GOAL_MS);
    }

    // The edit: the agent on edits.ipynb (its document), a second client of the same room watching for the cell.
    await open('edits.ipynb');
    const { openSharedNotebook } = await import(pathToFileURL(join(ROOT, 'packages/notebook-document/dist/index.js')).href);
    reader = await openSharedNotebook({ url: server.url, token: server.token, path: 'edits.ipynb', displayName: 'bench reader' });
    let inserted = 0;
    const insert = async () => {
      const marker = `# inserted ${(inserted += 1)} ${Date.now()}`;
      const seen = new Promise((resolve) => {
        const check = () => {
          if (reader.notebook.cells.some((cell) => cell.getSource() === marker)) {
            reader.notebook.ydoc.off('update', check);
            resolve(performance.now());
          }
        };
        reader.notebook.ydoc.on('update', check);
      });
      const started = performance.now();
      const answered = agent.call('notebook', { action: 'edit', edits: [{ op: 'insert', type: 'code', source: marker, after: 'c100' }] });
      const at = await seen;
      const result = await answered;
      if (result.isError || !textOf(result).startsWith('inserted code cell')) throw new Error(`the edit failed: ${textOf(result).slice(0, 300)}`);
      return { visible: at - started, answered: performance.now() - started };
    };
    for (let index = 0; index < Math.min(5, ctx.n.warmup); index += 1) await insert();
    const edits = { visible: [], answered: [] };
    const editRatios = [];
    for (let round = 0; round < rounds; round += 1) {
      ctx.calibrate?.();
      const visible = [];
      for (let index = 0; index < editsPerRound; index += 1) {
        const got = await insert();
        visible.push(got.visible);
        edits.answered.push(got.answered);
      }
      edits.visible.push(...visible);
      editRatios.push(summarize(visible).median / EDIT_GOAL_MS);
    }
    const cellsAfter = reader.notebook.cells.length;
    return {
      rounds,
      cells: CELLS,
      read: {
        perRound: readsPerRound,
        answerChars,
        loops: { read: { summary: summarize(reads.read) }, minimal: { summary: summarize(reads.minimal) } },
        atServer: { samples: reads.atServer, summary: summarize(reads.atServer) },
        overGoal: spread(readRatios),
      },
      edit: {
        perRound: editsPerRound,
        cellsAfter,
        visible: { samples: edits.visible, summary: summarize(edits.visible) },
        answered: { summary: summarize(edits.answered) },
        overGoal: spread(editRatios),
      },
    };
  } finally {
    reader?.close();
    await agent?.close().catch(() => undefined);
    await server.stop();
  }
}

/** The table rows: the read at the server over 100 ms, the edit seen by another client over 300 ms. */
export function notebookToolsRows(measured, { row, formatMs, formatRatio, judge, ciText }) {
  if (!measured) return [];
  const { read, edit, rounds } = measured;
  const range = (entry) => `rounds ${formatRatio(entry.min)}–${formatRatio(entry.max)}`;
  return [
    row(`notebook read of a ${measured.cells}-cell notebook (${Math.round(read.answerChars / 1000)}k chars), at the server (ours)`, {
      median: read.atServer.summary.median,
      goal: `≤ ${READ_GOAL_MS} ms`,
      verdict: judge(read.overGoal, 1),
      comparison:
        `${formatRatio(read.overGoal.median)}${ciText(read.overGoal)} of the goal (median of ${rounds} per-round ratios; ${range(read.overGoal)}); ` +
        `round trip ${formatMs(read.loops.read.summary.median)} less a refused call of the same tool ${formatMs(read.loops.minimal.summary.median)}, interleaved ×${read.perRound} per round`,
      raw: { overGoal: read.overGoal },
    }),
    row('  notebook edit (insert a cell) visible to a second document client', {
      median: edit.visible.summary.median,
      p90: edit.visible.summary.p90,
      goal: `≤ ${EDIT_GOAL_MS} ms after the call starts`,
      verdict: judge(edit.overGoal, 1),
      comparison:
        `${formatRatio(edit.overGoal.median)}${ciText(edit.overGoal)} of the goal (median of ${rounds} per-round medians of ${edit.perRound}; ${range(edit.overGoal)}); ` +
        `the answer came after ${formatMs(edit.answered.summary.median)}`,
      raw: { overGoal: edit.overGoal },
    }),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { loadModules } = await import('../lib/env.mjs');
  const python = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? join(ROOT, '.venv/bin/python');
  const modules = await loadModules();
  const quick = process.argv.includes('--quick');
  const result = await measureNotebookTools({ modules, python, serverEnv: () => ({ IPYTHON_MCP_PYTHON: python }), n: { rounds: quick ? 7 : 15, warmup: 10 } });
  const round = (value) => Math.round(value * 100) / 100;
  process.stdout.write(
    `${JSON.stringify(
      {
        read_round_trip_median_ms: round(result.read.loops.read.summary.median),
        minimal_call_median_ms: round(result.read.loops.minimal.summary.median),
        read_answer_chars: result.read.answerChars,
        read_at_server_median_ms: round(result.read.atServer.summary.median),
        read_over_goal: result.read.overGoal,
        edit_visible_median_ms: round(result.edit.visible.summary.median),
        edit_visible_p90_ms: round(result.edit.visible.summary.p90),
        edit_answered_median_ms: round(result.edit.answered.summary.median),
        edit_over_goal: result.edit.overGoal,
        rounds: result.rounds,
      },
      null,
      2,
    )}\n`,
  );
  process.exit(0);
}
