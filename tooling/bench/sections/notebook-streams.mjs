// The agent's streamed output in the notebook (issue 58), measured through a second document client (a reader of the
// room, as the person's page is):
//
// - how long after a print its line is in the reader's document: the cell prints 12 lines 250 ms apart, each with
//   the kernel's wall clock; the reader notes its own wall clock when the line arrives (same machine, same clock).
//   Goal: median ≤ 300 ms.
// - a cell that prints 100 lines over time (5 ms apart), with mirroring on against off, in interleaved rounds (the
//   per-round ratio of medians). Goal ≤ 1.15×.
import { ratio, spread, summarize } from '../lib/stats.mjs';

const LINES = 12;
const LINE_GAP_S = 0.25;
const STREAM_CELL = 'import time\nfor _i in range(100):\n    print("line", _i, flush=True)\n    time.sleep(0.005)';

function streamedText(cell) {
  return (cell?.getOutputs?.() ?? [])
    .filter((output) => output.output_type === 'stream')
    .map((output) => (Array.isArray(output.text) ? output.text.join('') : String(output.text)))
    .join('');
}

/** Print-to-reader latency of streamed lines, and the 100-line cell on against off. */
export async function measureNotebookStreams({ on, off, reader, rounds, perRound, checkOk }) {
  const latencies = [];
  const token = `probe${Date.now()}`;
  const code = `import time\nfor _i in range(${LINES}):\n    print("${token}", _i, repr(time.time()), flush=True)\n    time.sleep(${LINE_GAP_S})`;
  const seen = new Map();
  const onUpdate = () => {
    const cells = reader.notebook.cells;
    const cell = cells[cells.length - 1];
    if (cell === undefined || !cell.getSource().includes(token)) return;
    const now = Date.now() / 1000;
    for (const match of streamedText(cell).matchAll(new RegExp(`${token} (\\d+) ([0-9.]+)`, 'g'))) {
      if (!seen.has(match[1])) seen.set(match[1], (now - Number(match[2])) * 1000);
    }
  };
  reader.notebook.ydoc.on('update', onUpdate);
  try {
    checkOk(await on.call('execute', { code }));
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    reader.notebook.ydoc.off('update', onUpdate);
  }
  latencies.push(...seen.values());
  if (latencies.length < LINES) throw new Error(`the reader saw ${latencies.length} of ${LINES} printed lines`);

  const samples = { on: [], off: [] };
  const perRoundRatios = [];
  const loops = { on, off };
  for (let round = 0; round < rounds; round += 1) {
    const medians = {};
    for (const name of round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
      const got = [];
      for (let index = 0; index < perRound; index += 1) {
        const started = performance.now();
        checkOk(await loops[name].call('execute', { code: STREAM_CELL }));
        got.push(performance.now() - started);
      }
      samples[name].push(...got);
      medians[name] = summarize(got).median;
    }
    perRoundRatios.push(ratio(medians.on, medians.off));
  }
  return {
    latency: { samples: latencies, summary: summarize(latencies) },
    hundredLines: {
      rounds,
      loops: { on: { summary: summarize(samples.on) }, off: { summary: summarize(samples.off) } },
      onOverOff: spread(perRoundRatios),
    },
  };
}
