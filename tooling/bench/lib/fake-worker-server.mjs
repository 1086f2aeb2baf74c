#!/usr/bin/env node
// Our MCP server on stdio exactly as the binary builds it (createIpythonMcpServer, stdioTransport), with a fake
// worker that answers at once (lib/fake-worker.mjs) instead of Python: what our server costs in a real process
// that sleeps between calls, to set beside the bare SDK server answering the same result (the layers section).
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fakeWorkerSpawner } from './fake-worker.mjs';

const root = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const load = (path) => import(pathToFileURL(join(root, path)).href);
const [supervisor, mcp] = await Promise.all([load('packages/worker-supervisor/dist/index.js'), load('packages/mcp-server/dist/index.js')]);
const server = mcp.createIpythonMcpServer({
  python: 'unused',
  settings: mcp.defaultSettings(),
  warmStandby: false,
  spawnWorker: fakeWorkerSpawner(supervisor),
});
await server.server.connect(mcp.stdioTransport());
const end = () => void server.close().finally(() => process.exit(0));
process.stdin.on('end', end);
process.stdin.on('close', end);
