#!/usr/bin/env node
// The bare SDK floor of one protocol era, for the bench's protocol-eras section (sections/protocol-eras.mjs): one tool,
// execute({code}), answering a recorded result of ours (BENCH_ERA_RESULT), or one shaped like it ("Out[1]: 2" and its
// structured content), nothing behind it. BENCH_ERA=2025-11-25: the v1 SDK's `Server` on its stdio transport, as our
// 2025 era serves; BENCH_ERA=2026-07-28: the v2 SDK's low-level `Server` through its `serveStdio` entry, as our 2026
// era serves (era-stdio.ts).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './env.mjs';

const modules = join(ROOT, 'apps/ipython-mcp/node_modules/@modelcontextprotocol');
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const tool = { name: 'execute', description: 'Bench floor.', inputSchema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] } };
let count = 0;
// BENCH_ERA_RESULT: a recorded result of ours to answer every call with (the bench's section sets it).
const recorded = process.env.BENCH_ERA_RESULT ? JSON.parse(process.env.BENCH_ERA_RESULT) : null;
const result = () => {
  count += 1;
  if (recorded !== null) return recorded;
  return { content: [{ type: 'text', text: `Out[${count}]: 2` }], structuredContent: { execution_count: count, result: { value: 2 } } };
};

if (process.env.BENCH_ERA === '2026-07-28') {
  const [{ Server }, { serveStdio }] = await Promise.all([load('server/dist/index.mjs'), load('server/dist/stdio.mjs')]);
  serveStdio(() => {
    const server = new Server({ name: 'bench-era-floor', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: [tool] }));
    server.setRequestHandler('tools/call', async () => result());
    return server;
  });
} else {
  const [{ Server }, { StdioServerTransport }, types] = await Promise.all([load('sdk/dist/esm/server/index.js'), load('sdk/dist/esm/server/stdio.js'), load('sdk/dist/esm/types.js')]);
  const server = new Server({ name: 'bench-era-floor', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: [tool] }));
  server.setRequestHandler(types.CallToolRequestSchema, async () => result());
  await server.connect(new StdioServerTransport());
}
