// Cold start: spawn → `initialize` answered, and spawn → first `execute` result, over fresh server processes.
// Every rep spawns each variant once (ours, the minimal SDK server, ours without a worker, `node -e 0`), in an
// order rotated per rep, so the spawn → initialize ratio is taken per rep from spawns seconds apart.
import { startServer } from '../lib/mcp.mjs';
import { run, sleep } from '../lib/procs.mjs';
import { MINIMAL_SERVER } from './execute.mjs';
import { spread } from '../lib/stats.mjs';
import { summarize } from '../lib/stats.mjs';

export async function measureColdStart(ctx) {
  const initialize = [];
  const firstExecute = [];
  // References: a bare `node -e 0`, the minimal SDK server, and our server whose worker cannot start at all
  // (IPYTHON_MCP_PYTHON=/bin/false), which shows what the worker's start-up costs initialize on a shared CPU.
  const bareNode = [];
  const minimal = [];
  const noWorker = [];
  const variants = [
    async () => {
      const server = await startServer(ctx.modules, { env: ctx.serverEnv() });
      try {
        initialize.push(server.timing.initializedAt - server.timing.spawnedAt);
        const result = await server.call('execute', { code: '1+1' });
        firstExecute.push(performance.now() - server.timing.spawnedAt);
        if (result.structuredContent?.result?.value !== 2) throw new Error(`first execute failed: ${JSON.stringify(result).slice(0, 300)}`);
      } finally {
        await server.close();
      }
    },
    async () => {
      const floor = await startServer(ctx.modules, { args: [MINIMAL_SERVER], label: 'minimal SDK server' });
      minimal.push(floor.timing.initializedAt - floor.timing.spawnedAt);
      await floor.close();
    },
    async () => {
      const server = await startServer(ctx.modules, { env: ctx.serverEnv({ IPYTHON_MCP_PYTHON: '/bin/false' }), label: 'server without worker' });
      noWorker.push(server.timing.initializedAt - server.timing.spawnedAt);
      await server.close();
    },
    async () => {
      const started = performance.now();
      await run(process.execPath, ['-e', '0'], { label: 'node -e 0' });
      bareNode.push(performance.now() - started);
    },
  ];
  for (let rep = 0; rep < ctx.n.coldStarts; rep += 1) {
    for (let offset = 0; offset < variants.length; offset += 1) {
      await variants[(rep + offset) % variants.length]();
      await sleep(200); // let the previous processes' exit settle before the next spawn
    }
  }
  // Per rep: our spawn → initialize over the minimal SDK server's, both from the same rep.
  const perRep = initialize.map((ms, rep) => ms / minimal[rep]);
  return {
    method: `${ctx.n.coldStarts} reps; each rep spawns ours, the minimal SDK server, ours without a worker and node -e 0 once, in an order rotated per rep`,
    bareNode: { samples: bareNode, summary: summarize(bareNode) },
    minimalServerInitialize: { samples: minimal, summary: summarize(minimal) },
    initializeWithoutWorker: { samples: noWorker, summary: summarize(noWorker) },
    initialize: { samples: initialize, summary: summarize(initialize) },
    firstExecute: { samples: firstExecute, summary: summarize(firstExecute) },
    pairedRatio: spread(perRep),
  };
}
