// Hard recovery: a cell that swallows KeyboardInterrupt passes its deadline; how long after the deadline does the
// first execute succeed? A second execute is queued right behind the runaway cell, so it runs at the earliest
// moment the runtime accepts namespace operations again. Reported as (first success − deadline) − grace.
import { startServer } from '../lib/mcp.mjs';
import { sleep, track } from '../lib/procs.mjs';
import { summarize } from '../lib/stats.mjs';

export const RUNAWAY_CELL = ['while True:', '    try:', '        while True:', '            pass', '    except KeyboardInterrupt:', '        pass'].join('\n');
const TIMEOUT_S = 1;
const GRACE_S = 1;

async function waitUntil(predicate, ms, what) {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (await predicate()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function oneSample(dispatchedAt, loopOutcome, nextAt) {
  const deadlineAt = dispatchedAt + TIMEOUT_S * 1000;
  const afterDeadline = nextAt - deadlineAt;
  return { afterDeadlineMs: afterDeadline, afterGraceMs: afterDeadline - GRACE_S * 1000, loopOutcome };
}

/** Through Runtime directly, with or without the warm standby. */
export async function measureRuntimeRecovery(ctx, warmStandby) {
  const { Runtime } = ctx.modules.supervisor;
  const runtime = new Runtime({ python: ctx.python, operationTimeoutMs: TIMEOUT_S * 1000, interruptionGraceMs: GRACE_S * 1000, warmStandby });
  const samples = [];
  try {
    runtime.start();
    const first = await runtime.run('execute', { code: '0' });
    if (!first.ok) throw new Error(`worker failed to start: ${JSON.stringify(first.error)}`);
    for (let rep = 0; rep < ctx.n.recovery; rep += 1) {
      for (const pid of runtime.workerPids()) track(pid, 'recovery worker');
      if (warmStandby) await waitUntil(() => runtime.status().standby === 'ready', 30_000, 'the warm standby');
      await sleep(100);
      const dispatchedAt = performance.now();
      const loop = runtime.run('execute', { code: RUNAWAY_CELL });
      const next = runtime.run('execute', { code: '1+1' });
      const nextOutcome = await next;
      const nextAt = performance.now();
      const loopOutcome = await loop;
      if (!nextOutcome.ok || nextOutcome.result.result?.value !== 2) throw new Error(`execute after recovery failed: ${JSON.stringify(nextOutcome).slice(0, 300)}`);
      if (loopOutcome.ok || loopOutcome.error.code !== 'operation_timeout' || loopOutcome.meta.namespace !== 'reset') {
        throw new Error(`runaway cell did not end as operation_timeout/reset: ${JSON.stringify(loopOutcome).slice(0, 300)}`);
      }
      samples.push(oneSample(dispatchedAt, loopOutcome.error.code, nextAt));
    }
    const status = runtime.status();
    return {
      via: 'Runtime',
      warmStandby,
      timeoutS: TIMEOUT_S,
      graceS: GRACE_S,
      samples,
      afterGrace: summarize(samples.map((sample) => sample.afterGraceMs)),
      replacementStartupMs: status.replacementStartupMs,
    };
  } finally {
    await runtime.close();
  }
}

/** The same through a real MCP client against the server (warm standby on, its default). */
export async function measureMcpRecovery(ctx) {
  const server = await startServer(ctx.modules, {
    env: ctx.serverEnv({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: String(TIMEOUT_S), IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: String(GRACE_S) }),
  });
  const samples = [];
  try {
    await server.call('execute', { code: '0' });
    for (let rep = 0; rep < ctx.n.recovery; rep += 1) {
      for (const pid of server.children()) track(pid, 'mcp recovery worker');
      await waitUntil(async () => (await server.structured('runtime_status', {})).standby === 'ready', 30_000, 'the warm standby');
      await sleep(100);
      const dispatchedAt = performance.now();
      const loop = server.call('execute', { code: RUNAWAY_CELL });
      const next = server.call('execute', { code: '1+1' });
      const nextResult = await next;
      const nextAt = performance.now();
      const loopResult = await loop;
      if (nextResult.isError || nextResult.structuredContent?.result?.value !== 2) throw new Error(`execute after recovery failed: ${JSON.stringify(nextResult).slice(0, 300)}`);
      const code = loopResult.structuredContent?.error?.code;
      if (code !== 'operation_timeout' || loopResult.structuredContent?.runtime?.namespace !== 'reset') {
        throw new Error(`runaway cell did not end as operation_timeout/reset: ${JSON.stringify(loopResult.structuredContent).slice(0, 300)}`);
      }
      samples.push(oneSample(dispatchedAt, code, nextAt));
    }
    const status = await server.structured('runtime_status', {});
    return {
      via: 'MCP',
      warmStandby: true,
      timeoutS: TIMEOUT_S,
      graceS: GRACE_S,
      samples,
      afterGrace: summarize(samples.map((sample) => sample.afterGraceMs)),
      replacementStartupMs: status.replacement_startup_ms,
    };
  } finally {
    await server.close();
  }
}
