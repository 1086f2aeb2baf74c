// Detached cells: what asking for `detach_after_seconds` costs, as ratios taken in the same run on one warm server.
// - A cell that ends before its detach time: execute("1+1", detach_after_seconds=30) against execute("1+1").
// - A cell that detaches: execute(cell, detach_after_seconds=0.01) and then job(wait_seconds) for its result, against
//   the same cell run in one blocking execute. The cell sleeps 50 ms, so it is still running at its detach time.
// The variants run in interleaved blocks with the order rotated, and each ratio is the median over blocks of the
// block medians' ratio, so a drifting machine load hits both sides alike.
import { settle, startServer } from '../lib/mcp.mjs';
import { quantile, summarize } from '../lib/stats.mjs';
import { CELL } from './execute.mjs';

const median = (values) => quantile(values, 0.5);
const BLOCKS = 20;
const SLEEP_CELL = 'import time as _t\n_t.sleep(0.05)\n2';

function valueOf(result, what) {
  const value = result.structuredContent?.result?.value;
  if (result.isError || value !== 2) throw new Error(`${what} failed: ${JSON.stringify(result).slice(0, 300)}`);
}

/** The loops, each one call (or the detach + job pair) per sample. */
const LOOPS = {
  plain: async (server) => valueOf(await server.call('execute', { code: CELL }), 'execute("1+1")'),
  detachUnused: async (server) => valueOf(await server.call('execute', { code: CELL, detach_after_seconds: 30 }), 'execute("1+1", detach_after_seconds=30)'),
  blockingSleep: async (server) => valueOf(await server.call('execute', { code: SLEEP_CELL }), 'blocking 50 ms cell'),
  detachedSleep: async (server) => {
    const look = await server.call('execute', { code: SLEEP_CELL, detach_after_seconds: 0.01 });
    const job = look.structuredContent?.job;
    if (look.structuredContent?.status !== 'running' || typeof job !== 'string') throw new Error(`the 50 ms cell did not detach: ${JSON.stringify(look).slice(0, 300)}`);
    valueOf(await server.call('job', { job, wait_seconds: 30 }), 'job wait');
  },
};

export async function measureDetach(ctx) {
  const server = await startServer(ctx.modules, { env: ctx.serverEnv({}), label: 'detach bench' });
  try {
    await settle(server);
    for (const loop of Object.values(LOOPS)) for (let index = 0; index < Math.min(ctx.n.warmup, 20); index += 1) await loop(server);
    for (let index = 0; index < ctx.n.warmup; index += 1) await LOOPS.plain(server);
    // Fast cells: n each; 50 ms cells: a tenth of that (at least 2 per block).
    const perBlock = { plain: Math.max(1, Math.round(ctx.n.execute / BLOCKS)), detachUnused: Math.max(1, Math.round(ctx.n.execute / BLOCKS)) };
    perBlock.blockingSleep = Math.max(2, Math.round(ctx.n.execute / BLOCKS / 10));
    perBlock.detachedSleep = perBlock.blockingSleep;
    const keys = Object.keys(LOOPS);
    const samples = Object.fromEntries(keys.map((key) => [key, []]));
    const blockRatios = { detachUnused: [], detachedSleep: [] };
    for (let block = 0; block < BLOCKS; block += 1) {
      const blockMedian = {};
      for (let offset = 0; offset < keys.length; offset += 1) {
        const key = keys[(block + offset) % keys.length];
        const taken = [];
        for (let call = 0; call < perBlock[key]; call += 1) {
          const started = performance.now();
          await LOOPS[key](server);
          taken.push(performance.now() - started);
        }
        samples[key].push(...taken);
        blockMedian[key] = median(taken);
      }
      blockRatios.detachUnused.push(blockMedian.detachUnused / blockMedian.plain);
      blockRatios.detachedSleep.push(blockMedian.detachedSleep / blockMedian.blockingSleep);
    }
    const result = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, { samples: values, summary: summarize(values) }]));
    return { ...result, pairedRatio: Object.fromEntries(Object.entries(blockRatios).map(([key, values]) => [key, { median: median(values), blocks: values }])) };
  } finally {
    await server.close();
  }
}
