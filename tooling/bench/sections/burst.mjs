// Admission burst: while a slow cell is active, fire N concurrent execute calls at a server whose pending bound is
// 32. Expected: exactly 32 queued (and executed once each, after the slow cell), the rest runtime_busy at once.
import { evaluate, settle, startServer } from '../lib/mcp.mjs';
import { sleep } from '../lib/procs.mjs';
import { summarize } from '../lib/stats.mjs';

const MAX_PENDING = 32;

export async function measureBurst(ctx) {
  const count = ctx.n.burst;
  const slowSeconds = ctx.n.burstSlowSeconds;
  const server = await startServer(ctx.modules, {
    env: ctx.serverEnv({ IPYTHON_MCP_MAX_PENDING_OPERATIONS: String(MAX_PENDING), IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '120' }),
  });
  try {
    await evaluate(server, '_bench_hits = []');
    await settle(server);
    // The transport's own floor for the same burst: runtime_status is answered at once and never queued.
    const statusLatency = await Promise.all(
      Array.from({ length: count }, () => {
        const sentAt = performance.now();
        return server.call('runtime_status', {}).then(() => performance.now() - sentAt);
      }),
    );
    const slowStarted = performance.now();
    const slow = server.call('execute', { code: `import time as _bench_time\n_bench_time.sleep(${slowSeconds})\n'slow done'` });
    const deadline = performance.now() + 10_000;
    while (!(await server.structured('runtime_status', {})).active) {
      if (performance.now() > deadline) throw new Error('the slow cell never became active');
      await sleep(5);
    }
    const burstStarted = performance.now();
    const calls = Array.from({ length: count }, (_, index) => {
      const sentAt = performance.now();
      return server.call('execute', { code: `_bench_hits.append(${index})` }).then(
        (result) => ({ index, sentAt, doneAt: performance.now(), code: result.isError ? (result.structuredContent?.error?.code ?? 'error') : 'ok' }),
        (error) => ({ index, sentAt, doneAt: performance.now(), code: `client_error: ${String(error.message).slice(0, 80)}` }),
      );
    });
    const outcomes = await Promise.all(calls);
    const slowResult = await slow;
    const slowEndedAt = performance.now();
    const hits = await evaluate(server, '_bench_hits');
    const counts = {};
    for (const outcome of outcomes) counts[outcome.code] = (counts[outcome.code] ?? 0) + 1;
    const busy = outcomes.filter((outcome) => outcome.code === 'runtime_busy');
    const executed = outcomes.filter((outcome) => outcome.code === 'ok');
    const busyLatency = busy.map((outcome) => outcome.doneAt - outcome.sentAt);
    const lastBusyAt = Math.max(...busy.map((outcome) => outcome.doneAt));
    const executedSet = new Set(executed.map((outcome) => outcome.index));
    const duplicates = hits.length - new Set(hits).size;
    const hitsMatch = hits.length === executed.length && hits.every((index) => executedSet.has(index));
    const busyRan = busy.filter((outcome) => hits.includes(outcome.index)).length;
    return {
      calls: count,
      maxPending: MAX_PENDING,
      slowSeconds,
      slowOk: slowResult.structuredContent?.result?.value === 'slow done',
      counts,
      executed: executed.length,
      busy: busy.length,
      duplicates,
      hitsMatch,
      busyThatRan: busyRan,
      busyLatency: summarize(busyLatency),
      statusBurstLatency: summarize(statusLatency),
      allBusyWithinMs: lastBusyAt - burstStarted,
      allBusyBeforeSlowEnded: lastBusyAt < slowStarted + slowSeconds * 1000,
      slowEndedAfterMs: slowEndedAt - burstStarted,
      expected: count - MAX_PENDING === busy.length && executed.length === MAX_PENDING && duplicates === 0 && hitsMatch && busyRan === 0,
    };
  } finally {
    await server.close();
  }
}
