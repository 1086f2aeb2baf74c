#!/usr/bin/env node
// The MCP floor: the same SDK's stdio server with one no-op tool ("echo", returns its arguments as text), nothing
// behind it. The bench measures its tools/call round trip and its spawn → initialize time with the same client,
// so the table can say how much of our figures is the MCP layer itself.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const sdk = realpathSync(join(root, 'apps/ipython-mcp/node_modules/@modelcontextprotocol/sdk'));
const load = (path) => import(pathToFileURL(join(sdk, path)).href);
const [{ Server }, { StdioServerTransport }, types] = await Promise.all([
  load('dist/esm/server/index.js'),
  load('dist/esm/server/stdio.js'),
  load('dist/esm/types.js'),
]);

const server = new Server({ name: 'bench-minimal', version: '1.0.0' }, { capabilities: { tools: {} } });
// BENCH_SHAPED_RESULT=<file>: {"tool": <a tools/list entry>, "result": <a tools/call result>}. The server then also
// lists that tool and answers every call of it with that exact result: the SDK's own cost (serialising, framing,
// parsing on both ends) of a result shaped and sized like ours, with nothing computed.
const shaped = process.env.BENCH_SHAPED_RESULT
  ? JSON.parse((await import('node:fs')).readFileSync(process.env.BENCH_SHAPED_RESULT, 'utf8'))
  : undefined;
const echo = {
  name: 'echo',
  description: 'Returns its arguments as text.',
  inputSchema: { type: 'object', properties: { code: { type: 'string' } }, additionalProperties: true },
};
const listTools = async () => ({ tools: shaped ? [echo, shaped.tool] : [echo] });
const callTool = async (request) =>
  shaped && request.params.name === shaped.tool.name
    ? shaped.result
    : { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] };
server.setRequestHandler(types.ListToolsRequestSchema, listTools);
server.setRequestHandler(types.CallToolRequestSchema, callTool);
if (process.env.BENCH_HTTP === '1') await serveHttp();
else {
  await server.connect(new StdioServerTransport());
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('close', () => process.exit(0));
}

/**
 * BENCH_HTTP=1: the same server over the SDK's own Streamable HTTP transport (lib/sdk-http.mjs): the HTTP
 * counterpart of the floors above, with nothing of ours.
 */
async function serveHttp() {
  const { serveSdkHttp } = await import('./sdk-http.mjs');
  await serveSdkHttp('bench-minimal', async (transport) => {
    const session = new Server({ name: 'bench-minimal', version: '1.0.0' }, { capabilities: { tools: {} } });
    session.setRequestHandler(types.ListToolsRequestSchema, listTools);
    session.setRequestHandler(types.CallToolRequestSchema, callTool);
    await session.connect(transport);
  });
}
