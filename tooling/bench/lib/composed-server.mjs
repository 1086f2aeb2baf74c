#!/usr/bin/env node
// The composed floor: the least program with our composition (MCP client → Node server → Python child, four
// wake-ups per call) and none of our code. A bare SDK Server with one tool, execute({code}) (zod input), listed
// as ours lists it (our recorded definition, output schema included, so the client checks the same schema), whose
// handler writes one length-prefixed JSON frame to a Python child over a pipe and awaits its reply:
// python/floor.py --frames, a plain IPython shell's run_cell configured like the run_cell floor (history off).
// It answers in our execute result's shape: the recorded result (BENCH_SHAPED_RESULT, as for minimal-server.mjs)
// with its text and structured content filled from the child's reply. BENCH_PYTHON is the child's interpreter;
// BENCH_HTTP=1 serves it over the SDK's Streamable HTTP instead of stdio (the HTTP composed floor); BENCH_ERA=2026-07-28
// serves it on the v2 SDK over stdio (protocol 2026-07-28).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { ROOT, sdkFile } from './env.mjs';
import { startFrameChild } from './pipe-echo.mjs';

const load = (path) => import(pathToFileURL(sdkFile(path)).href);
// The zod the SDK itself imports (its sibling in the pnpm store), so its schema checks see one zod.
const [{ Server }, { StdioServerTransport }, types, { z }] = await Promise.all([
  load('dist/esm/server/index.js'),
  load('dist/esm/server/stdio.js'),
  load('dist/esm/types.js'),
  load('../../zod/index.js'),
]);
// BENCH_ERA=2026-07-28: the same composition on the v2 SDK's low-level `Server` through its `serveStdio` entry
// (`server/discover`, the per-request envelope), as our 2026 era serves it (transports/era-stdio.ts), so a 2026-era
// ratio has a 2026-era floor (sections/protocol-eras.mjs).
const MODERN = process.env.BENCH_ERA === '2026-07-28';
const modernDir = join(ROOT, 'apps/ipython-mcp/node_modules/@modelcontextprotocol/server/dist');
const modern = MODERN
  ? await Promise.all([import(pathToFileURL(join(modernDir, 'index.mjs')).href), import(pathToFileURL(join(modernDir, 'stdio.mjs')).href)])
  : null;

const recorded = process.env.BENCH_SHAPED_RESULT ? JSON.parse(readFileSync(process.env.BENCH_SHAPED_RESULT, 'utf8')) : {};
const template = recorded.result ?? {};
// The tool as ours lists it (with its output schema, which an SDK client then checks every result against), else a
// bare one.
const tool = recorded.tool ?? { name: 'execute', description: 'Run Python in a plain IPython shell (bench floor).', inputSchema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] } };
const input = z.object({ code: z.string() });
const child = startFrameChild(process.env.BENCH_PYTHON || 'python3', 'floor.py', ['--frames'], 'composed floor child');
// One Server per connection: over stdio one; over HTTP (BENCH_HTTP=1) one per session, as the SDK requires.
const execute = async (request) => {
  const { code } = input.parse(request.params.arguments ?? {});
  const reply = JSON.parse(await child.request(Buffer.from(JSON.stringify({ code }))));
  return {
    ...template,
    content: [{ type: 'text', text: `Out[${reply.execution_count}]: ${reply.repr}` }],
    structuredContent: { execution_count: reply.execution_count, result: { value: reply.value } },
  };
};
const newServer = () => {
  const server = new Server({ name: 'bench-composed', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: [tool] }));
  server.setRequestHandler(types.CallToolRequestSchema, execute);
  return server;
};
const newModernServer = () => {
  const server = new modern[0].Server({ name: 'bench-composed', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => ({ tools: [tool] }));
  server.setRequestHandler('tools/call', execute);
  return server;
};
const end = () => {
  child.close();
  process.exit(0);
};
if (process.env.BENCH_HTTP === '1') {
  // The composed floor over the SDK's own Streamable HTTP server (lib/sdk-http.mjs).
  const { serveSdkHttp } = await import('./sdk-http.mjs');
  await serveSdkHttp('bench-composed', (transport) => newServer().connect(transport), () => child.close());
} else if (MODERN) {
  modern[1].serveStdio(newModernServer);
  process.stdin.on('end', end);
  process.stdin.on('close', end);
} else {
  await newServer().connect(new StdioServerTransport());
  process.stdin.on('end', end);
  process.stdin.on('close', end);
}
