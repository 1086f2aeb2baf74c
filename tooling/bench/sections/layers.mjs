// What each layer of an execute call costs on its own, in process and without I/O, so the part of the goal ratios
// that is ours can be told from the SDK's, IPython's and the machine's (pipes, wake-ups). Nothing here crosses a
// process boundary: the MCP client and server talk over the SDK's InMemoryTransport, the runtime talks to a fake
// worker over the supervisor's InMemoryChannel, and the worker's own path runs in one Python process. Figures are
// CPU per call (user + system of this process, which here equals the work done), medians over interleaved rounds.
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PY_DIR, ROOT } from '../lib/env.mjs';
import { cpuPerCall as cpuDelta, cpuSnapshot, run, track } from '../lib/procs.mjs';
import { startServer } from '../lib/mcp.mjs';
import { MINIMAL_SERVER } from './execute.mjs';
import { quantile, spread } from '../lib/stats.mjs';
import { EXECUTE_RESULT, fakeWorkerSpawner } from '../lib/fake-worker.mjs';
import { CELL } from './execute.mjs';

const FAKE_WORKER_SERVER = join(ROOT, 'tooling/bench/lib/fake-worker-server.mjs');

async function loadLayers() {
  const sdk = realpathSync(join(ROOT, 'packages/mcp-server/node_modules/@modelcontextprotocol/sdk'));
  const load = (path) => import(pathToFileURL(path).href);
  const [client, server, memory, types, supervisor, mcp, protocol] = await Promise.all([
    load(join(sdk, 'dist/esm/client/index.js')),
    load(join(sdk, 'dist/esm/server/index.js')),
    load(join(sdk, 'dist/esm/inMemory.js')),
    load(join(sdk, 'dist/esm/types.js')),
    load(join(ROOT, 'packages/worker-supervisor/dist/index.js')),
    load(join(ROOT, 'packages/mcp-server/dist/index.js')),
    load(join(ROOT, 'packages/protocol/dist/index.js')),
  ]);
  return { Client: client.Client, Server: server.Server, InMemoryTransport: memory.InMemoryTransport, types, supervisor, mcp, protocol };
}

async function connect(layers, server) {
  const [clientEnd, serverEnd] = layers.InMemoryTransport.createLinkedPair();
  const client = new layers.Client({ name: 'bench-layers', version: '1.0.0' });
  await Promise.all([server.connect(serverEnd), client.connect(clientEnd)]);
  return client;
}

/** CPU µs per call of `count` sequential calls of fn. */
async function cpuPerCall(fn, count) {
  const before = process.cpuUsage();
  for (let index = 0; index < count; index += 1) await fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

async function measureJsLayers(ctx, rounds, calls) {
  const layers = await loadLayers();
  const { supervisor, mcp, protocol, types } = layers;
  const ours = mcp.createIpythonMcpServer({
    python: 'unused',
    settings: mcp.defaultSettings(),
    warmStandby: false,
    spawnWorker: fakeWorkerSpawner(supervisor),
  });
  const oursClient = await connect(layers, ours.server);
  const sample = await oursClient.callTool({ name: 'execute', arguments: { code: CELL } });
  if (sample.isError || sample.structuredContent?.result?.value !== 2) throw new Error(`fake execute failed: ${JSON.stringify(sample).slice(0, 300)}`);
  const { tools } = await oursClient.listTools();
  const executeTool = tools.find((tool) => tool.name === 'execute');
  // The bare SDK server of the stdio floors, in process: a no-op tool, and our execute tool answering our result.
  const bare = new layers.Server({ name: 'bench-bare', version: '1.0.0' }, { capabilities: { tools: {} } });
  const echo = { name: 'echo', inputSchema: { type: 'object', properties: { code: { type: 'string' } } } };
  bare.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: [echo, executeTool] }));
  bare.setRequestHandler(types.CallToolRequestSchema, async (request) =>
    request.params.name === 'echo' ? { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] } : sample,
  );
  const bareClient = await connect(layers, bare);
  await bareClient.listTools();
  const { Runtime } = supervisor;
  const runtime = new Runtime({ python: 'unused', warmStandby: false, memoryLimitMb: null, spawnWorker: fakeWorkerSpawner(supervisor) });
  runtime.start();
  // What the in-memory channel does instead of the codec (two structured clones), and what the real codec costs
  // the parent per call (encode the request, decode the response).
  const request = { type: 'request', id: 1, op: 'execute', params: { code: CELL } };
  const response = { type: 'response', id: 1, ok: true, result: EXECUTE_RESULT };
  const responseFrame = protocol.encodeFrame(response, 'msgpack', 1 << 24);
  const loops = {
    sdkNoop: () => bareClient.callTool({ name: 'echo', arguments: { code: CELL } }),
    sdkOurResult: () => bareClient.callTool({ name: 'execute', arguments: { code: CELL } }),
    oursMcp: () => oursClient.callTool({ name: 'execute', arguments: { code: CELL } }),
    runtime: () => runtime.run('execute', { code: CELL }),
    clones: async () => {
      structuredClone(request);
      structuredClone(response);
    },
    codec: async () => {
      protocol.encodeFrame(request, 'msgpack', 1 << 24);
      protocol.decodeBody(responseFrame.subarray(4));
    },
  };
  try {
    const names = Object.keys(loops);
    for (const name of names) await cpuPerCall(loops[name], Math.max(200, calls / 5));
    const perRound = Object.fromEntries(names.map((name) => [name, []]));
    const derived = { mcpLayer: [], runtimeGlue: [], resultShape: [] };
    for (let round = 0; round < rounds; round += 1) {
      const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
      const figures = {};
      for (const name of order) figures[name] = await cpuPerCall(loops[name], calls);
      for (const name of names) perRound[name].push(figures[name]);
      // Our MCP layer: ours through MCP less the runtime below it and less the SDK's own cost of the same result.
      derived.mcpLayer.push(figures.oursMcp - figures.runtime - figures.sdkOurResult);
      // The runtime's own JavaScript: Runtime.run over the in-memory channel, its clones swapped for the codec.
      derived.runtimeGlue.push(figures.runtime - figures.clones);
      derived.resultShape.push(figures.sdkOurResult - figures.sdkNoop);
    }
    return {
      perRound: Object.fromEntries(names.map((name) => [name, spread(perRound[name])])),
      derived: Object.fromEntries(Object.entries(derived).map(([name, values]) => [name, spread(values)])),
    };
  } finally {
    await runtime.close();
    await ours.close();
    await bareClient.close();
  }
}

async function measureWorkerLayers(ctx, rounds, calls) {
  const { stdout } = await run(ctx.python, [join(PY_DIR, 'worker_layers.py'), String(rounds), String(calls), CELL], {
    label: 'worker_layers.py',
    env: { ...process.env, PYTHONPATH: join(ROOT, 'python') },
  });
  const data = JSON.parse(stdout.trim().split('\n').pop());
  const { owner, owner_and_frame: framed, run_cell: bare } = data.per_round_us;
  return {
    perRound: { owner: spread(owner), ownerAndFrame: spread(framed), runCell: spread(bare) },
    derived: {
      workerOwn: spread(owner.map((value, index) => value - bare[index])),
      workerOwnWithFrame: spread(framed.map((value, index) => value - bare[index])),
    },
  };
}

/** Median of an array (null when empty). */
const median = (values) => quantile(values, 0.5);

/**
 * The same two servers as real stdio processes that sleep between calls: ours over the fake worker, and the bare
 * SDK server answering our result. Code that runs after a sleep runs on cold caches, so this shows what our layer
 * costs in a real process next to its in-process (warm) figure. Interleaved rounds; wall and server CPU per call.
 */
async function measureStdioLayers(ctx, rounds, calls) {
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const ours = await startServer(ctx.modules, { args: [FAKE_WORKER_SERVER], label: 'our server over a fake worker' });
  const dir = mkdtempSync(join(tmpdir(), 'bench-layers-'));
  let bare;
  try {
    track(ours.pid, 'our server over a fake worker');
    const sample = await ours.call('execute', { code: CELL });
    const { tools } = await ours.client.listTools();
    const file = join(dir, 'shape.json');
    writeFileSync(file, JSON.stringify({ tool: tools.find((tool) => tool.name === 'execute'), result: sample }));
    bare = await startServer(ctx.modules, { args: [MINIMAL_SERVER], env: { BENCH_SHAPED_RESULT: file }, label: 'bare SDK server (our result)' });
    track(bare.pid, 'bare SDK server (our result)');
    await bare.client.listTools();
    const servers = { ours, bare };
    const perRound = { ours: { wallUs: [], serverCpuUs: [] }, bare: { wallUs: [], serverCpuUs: [] } };
    const block = async (name, count, record) => {
      const server = servers[name];
      const samples = [];
      const before = cpuSnapshot(server.pid);
      for (let index = 0; index < count; index += 1) {
        const started = performance.now();
        await server.call('execute', { code: CELL });
        samples.push((performance.now() - started) * 1000);
      }
      const cpu = cpuDelta({ server: before }, { server: cpuSnapshot(server.pid) }, count).server?.totalUs ?? null;
      if (record) {
        perRound[name].wallUs.push(median(samples));
        perRound[name].serverCpuUs.push(cpu);
      }
    };
    for (const name of Object.keys(servers)) await block(name, Math.max(50, calls / 4), false);
    for (let round = 0; round < rounds; round += 1) {
      for (const name of round % 2 === 0 ? ['ours', 'bare'] : ['bare', 'ours']) await block(name, calls, true);
    }
    const delta = (key) => spread(perRound.ours[key].map((value, index) => value - perRound.bare[key][index]));
    return {
      perRound: Object.fromEntries(Object.entries(perRound).map(([name, figures]) => [name, { wallUs: spread(figures.wallUs), serverCpuUs: spread(figures.serverCpuUs) }])),
      derived: { oursWallUs: delta('wallUs'), oursServerCpuUs: delta('serverCpuUs') },
    };
  } finally {
    await ours.close();
    await bare?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The layers section: JavaScript layers (client, server, runtime) and the worker's own path, each alone. */
export async function measureLayers(ctx) {
  const rounds = ctx.n.layerRounds ?? 9;
  const js = await measureJsLayers(ctx, rounds, ctx.n.layerCalls ?? 2000);
  const worker = await measureWorkerLayers(ctx, rounds, ctx.n.workerLayerCalls ?? 300);
  const stdio = await measureStdioLayers(ctx, rounds, ctx.n.stdioLayerCalls ?? 300);
  return { rounds, js, worker, stdio, note: 'in process, no I/O; CPU µs per call, medians of per-round figures (rounds interleaved)' };
}
