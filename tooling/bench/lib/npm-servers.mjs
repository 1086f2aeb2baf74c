// The tool set of the Code Mode context issue (47 tools then, 48 since ipython-mcp has `job`): three reference MCP servers from the npm registry
// (@modelcontextprotocol/server-filesystem, -memory, -everything) plus ipython-mcp itself, as a servers file for
// `ipython-mcp code-mode --servers FILE`, and the tool-list sizes a model reads through each way of serving them.
// The npm servers are installed once into the test suites' client cache (the same place and layout as
// apps/ipython-mcp/test/fixtures/client-clis.ts) and reused. Shared by tooling/bench/model-reads.mjs --code-mode
// and the e2e test that pins the figures (apps/ipython-mcp/test/code-mode-context.e2e.test.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, loadModules } from './env.mjs';
import { startServer } from './mcp.mjs';
import { toolListChars } from './model-reads.mjs';

/** The reference servers' release, pinned so a registry release cannot change the figures; bump deliberately. */
export const NPM_SERVERS_VERSION = '2026.8.31';

const CLIENTS_CACHE =
  process.env.IPYTHON_MCP_CLIENTS_CACHE ?? join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ipython-mcp', 'clients');

/** The `bin` directory of `spec` (`name@version`), installed from npm into its own prefix in the cache on first use. */
export function npmServerBin(spec) {
  const prefix = join(CLIENTS_CACHE, spec.replace(/[/@]/g, '_'));
  const stamp = join(prefix, '.installed');
  if (!existsSync(stamp)) {
    rmSync(prefix, { recursive: true, force: true });
    mkdirSync(prefix, { recursive: true });
    const installed = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', prefix, spec], {
      cwd: prefix,
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (installed.status !== 0) throw new Error(`npm install ${spec} failed: ${(installed.stderr ?? '').slice(-1000)}`);
    writeFileSync(stamp, `${spec}\n`);
  }
  return join(prefix, 'node_modules', '.bin');
}

/**
 * The four servers as `mcpServers` entries: filesystem over a fresh scratch directory (returned as `directory`),
 * memory with its file there, everything over stdio, and ipython-mcp (the built CLI) with `env`.
 */
export function fortySevenToolServers({ env = {} } = {}) {
  const directory = mkdtempSync(join(tmpdir(), 'ipython-mcp-47-tools-'));
  const bin = (name) => join(npmServerBin(`@modelcontextprotocol/${name}@${NPM_SERVERS_VERSION}`), `mcp-${name}`);
  const mcpServers = {
    filesystem: { command: bin('server-filesystem'), args: [directory] },
    memory: { command: bin('server-memory'), args: [], env: { MEMORY_FILE_PATH: join(directory, 'memory.jsonl') } },
    everything: { command: bin('server-everything'), args: ['stdio'] },
    ipython: { command: process.execPath, args: [CLI], env },
  };
  return { directory, mcpServers };
}

/**
 * Lists the tools of every server directly (one real client each) and through `ipython-mcp code-mode --servers`,
 * and returns the characters of names, descriptions and input schemas a model request carries either way.
 * `codeMode` settings go into the servers file's `codeMode` section; `modules` defaults to {@link loadModules}.
 */
export async function measureToolLists({ modules, env = {}, codeMode = {} } = {}) {
  modules ??= await loadModules();
  const { directory, mcpServers } = fortySevenToolServers({ env });
  try {
    const servers = [];
    for (const [name, config] of Object.entries(mcpServers)) {
      const server = await startServer(modules, { command: config.command, args: config.args, env: config.env ?? {}, label: name });
      try {
        const { tools } = await server.client.listTools();
        servers.push({ name, tools: tools.map((tool) => tool.name), chars: toolListChars(tools) });
      } finally {
        await server.close();
      }
    }
    const file = join(directory, 'servers.json');
    writeFileSync(file, JSON.stringify({ mcpServers, codeMode }));
    const server = await startServer(modules, { args: [CLI, 'code-mode', '--servers', file], env, label: 'code-mode server' });
    try {
      const { tools } = await server.client.listTools();
      const runCode = tools[0];
      return {
        servers,
        directTools: servers.reduce((sum, entry) => sum + entry.tools.length, 0),
        directChars: servers.reduce((sum, entry) => sum + entry.chars, 0),
        codeModeTools: tools.length,
        codeModeChars: toolListChars(tools),
        description: runCode?.description ?? '',
      };
    } finally {
      await server.close();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
