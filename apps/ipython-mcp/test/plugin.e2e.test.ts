// The repository as a plugin marketplace, installed the way docs/clients.md says with the real Claude Code and
// Codex CLIs (blocks claude-plugin-install, codex-plugin-install, …), on a machine where nothing was built: the
// repository as it would be committed is served as `OWNER/ipython-mcp` from a local bare repository (git's
// `insteadOf` in the run's own HOME, no network), and a clone of it is the local marketplace. The first session
// sets the checkout up (tooling/plugin-start.sh); a stand-in model (fixtures/stand-in-model.ts) loads a skill,
// finds `execute` through Claude Code's tool search and runs `6 * 7`. Package caches are the user's own (warm
// downloads), HOME and the client's config directories are temporary, and every process is accounted for.
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { testPython } from './harness.js';
import { agentSuite, expectRun, runClaudeCode, runCodexExec } from './fixtures/agent-runs.js';
import { CLIENTS_CACHE } from './fixtures/client-clis.js';
import { docsBlock } from './fixtures/docs-blocks.js';
import { REPO_ROOT, runBounded, runOk, type RunResult } from './fixtures/processes.js';
import { startStandInModel, type ModelTurn, type Step } from './fixtures/stand-in-model.js';

const CODEX_CATALOG = fileURLToPath(new URL('./fixtures/codex-model-catalog.json', import.meta.url));
/** The first start's set-up may take minutes (pnpm install and a build on two cores). */
const SET_UP_MS = 900_000;
const CLAUDE_PREFIX = 'mcp__plugin_ipython-mcp_ipython__';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-plugin-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }), 300_000);

/** One user's machine for the whole file: a temporary HOME, the user's own package caches. */
const home = join(scratch, 'home');
mkdirSync(join(home, 'project'), { recursive: true });
mkdirSync(join(home, '.codex'));
const realHome = homedir();
const machineEnv: Record<string, string> = {
  IPYTHON_MCP_HOME: join(home, '.local', 'share', 'ipython-mcp'),
  npm_config_cache: join(realHome, '.npm'),
  pnpm_config_store_dir: join(process.env.XDG_DATA_HOME || join(realHome, '.local', 'share'), 'pnpm', 'store'),
  PIP_CACHE_DIR: join(process.env.XDG_CACHE_HOME || join(realHome, '.cache'), 'pip'),
  UV_CACHE_DIR: join(process.env.XDG_CACHE_HOME || join(realHome, '.cache'), 'uv'),
  // Turbo's cache of build outputs, kept between test runs like the package caches.
  TURBO_CACHE_DIR: join(CLIENTS_CACHE, '..', 'plugin-turbo-cache'),
};
const machine = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, ...machineEnv, ...extra };
  for (const key of Object.keys(env)) if (key.startsWith('IPYTHON_MCP_') && !(key in machineEnv) && !(key in extra)) delete env[key];
  delete env.CI;
  return env;
};

/** `OWNER/ipython-mcp` on "GitHub": a bare repository holding the working tree as it would be committed. */
const repos = join(scratch, 'repos');
const bare = join(repos, 'OWNER', 'ipython-mcp.git');
const clone = join(scratch, 'clone', 'ipython-mcp');
async function publish(): Promise<void> {
  const identity = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.org', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.org' };
  const env = { ...process.env, ...identity, GIT_INDEX_FILE: join(scratch, 'snapshot-index') };
  const git = async (args: string[], cwd = REPO_ROOT) => (await runOk('git', args, { cwd, env, timeoutMs: 120_000 })).stdout.trim();
  // Tracked and new files, as `git add -A` sees them (git-ignored ones stay out), without touching the real index.
  await git(['add', '-A']);
  const tree = await git(['write-tree']);
  const commit = await git(['commit-tree', tree, '-p', 'HEAD', '-m', 'plugin test snapshot']);
  mkdirSync(bare, { recursive: true });
  await git(['init', '-q', '--bare', bare], bare);
  await git(['push', '-q', bare, `${commit}:refs/heads/main`]);
  await git(['symbolic-ref', 'HEAD', 'refs/heads/main'], bare);
  await git(['clone', '-q', bare, clone], scratch);
  writeFileSync(join(home, '.gitconfig'), `[url "file://${repos}/"]\n\tinsteadOf = https://github.com/\n\tinsteadOf = git@github.com:\n`);
}
const published = publish();

/** Another user of the same machine: a HOME of their own (with the same git redirect), the same package caches. */
function anotherUser(name: string): string {
  const other = join(scratch, name);
  mkdirSync(join(other, 'project'), { recursive: true });
  mkdirSync(join(other, '.codex'));
  writeFileSync(join(other, '.gitconfig'), readFileSync(join(home, '.gitconfig')));
  return other;
}

/** Runs a documented shell block in a user's HOME (the machine's first user by default) with the CLI's bin first on PATH. */
async function runDocs(name: string, bin: string, options: { user?: string; replace?: (block: string) => string } = {}): Promise<RunResult> {
  await published;
  const user = options.user ?? home;
  const block = docsBlock(name);
  const result = await runBounded('bash', ['-euo', 'pipefail', '-c', options.replace ? options.replace(block) : block], {
    env: { ...machine({ PATH: `${bin}:${process.env.PATH ?? ''}` }), HOME: user, CODEX_HOME: join(user, '.codex') },
    cwd: join(user, 'project'),
    timeoutMs: 180_000,
  });
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

/** Loads the data-session skill, finds `execute` by searching, runs `6 * 7` and the worker's interpreter. */
function claudeScript(): (turn: ModelTurn, index: number) => Step {
  return (turn, index) => {
    if (index === 0) return { tool: 'Skill', input: { skill: 'ipython-mcp:data-session' } };
    if (index === 1) return { tool: 'ToolSearch', input: { query: 'python execute' } };
    if (index === 2) return { tool: `${CLAUDE_PREFIX}execute`, input: { code: 'import sys\nprint(sys.executable)\n6 * 7' } };
    return { text: 'done' };
  };
}

const seen = (turn: ModelTurn | undefined) => JSON.stringify(turn?.toolResult ?? null);

/** The finished set-ups (tooling/plugin-start.sh) under an ipython-mcp data directory. */
function setUps(ipythonHome: string): string[] {
  const data = join(ipythonHome, 'plugin');
  if (!existsSync(data)) return [];
  return readdirSync(data).map((name) => join(data, name)).filter((path) => existsSync(join(path, '.tooling', 'plugin-ready')));
}

describe('Claude Code: the plugin from a clone of the repository', () => {
  const { bin, marker } = agentSuite('claude');

  it('installs with the options given; the first session sets the clone up, the next finds execute by tool search and runs it', async () => {
    await runDocs('claude-plugin-install', bin(), {
      replace: (block) => block.replace('OWNER/ipython-mcp', clone).replace(/(claude plugin install \S+)/, `$1 --config python=${testPython()}`),
    });
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')) as Record<string, any>;
    expect(settings.enabledPlugins?.['ipython-mcp@ipython-mcp']).toBe(true);
    expect(settings.pluginConfigs?.['ipython-mcp@ipython-mcp']?.options?.python).toBe(testPython());

    // The first session, as a user starts it: Claude Code waits 30 s (MCP_TIMEOUT) for the server. The set-up
    // runs in a process of its own, which this run waits out (settleMs) so no process outlives the test.
    const first = await startStandInModel('anthropic', claudeScript(), 'ToolSearch');
    const started = performance.now();
    try {
      const result = await runClaudeCode({
        bin: bin(), model: first, prompt: 'Use the ipython tools: compute 6 * 7', home, marker,
        docsBlock: 'claude-plugin-print', clientEnv: { ...machineEnv, ENABLE_TOOL_SEARCH: 'true' }, settleMs: SET_UP_MS,
      });
      expectRun(result);
    } finally {
      await first.close();
    }
    console.log(`[measure] Claude Code, first session from a fresh clone: the set-up was done ${((performance.now() - started) / 1000).toFixed(0)} s after the session started (warm package caches)`);
    // One set-up, in ipython-mcp's data directory, not in the clone.
    const builds = setUps(machineEnv.IPYTHON_MCP_HOME!);
    expect(builds).toHaveLength(1);
    expect(readFileSync(`${builds[0]}.log`, 'utf8')).toContain('bootstrap: done');
    expect(existsSync(join(clone, 'node_modules'))).toBe(false);

    const model = await startStandInModel('anthropic', claudeScript(), 'ToolSearch');
    try {
      const result = await runClaudeCode({
        bin: bin(), model, prompt: 'Use the ipython tools: compute 6 * 7', home, marker,
        docsBlock: 'claude-plugin-print', clientEnv: { ...machineEnv, ENABLE_TOOL_SEARCH: 'true' },
      });
      expectRun(result);
      const [opening, afterSkill, afterSearch, afterExecute] = model.turns;
      // Deferred: the first request names the tool but does not offer its schema; the skills are listed.
      expect(JSON.stringify(opening?.body)).toContain(`${CLAUDE_PREFIX}execute`);
      expect(opening?.offered).not.toContain(`${CLAUDE_PREFIX}execute`);
      expect(JSON.stringify(opening?.body)).toContain('ipython-mcp:data-session');
      // The skill's text follows its launch in the conversation.
      expect(seen(afterSkill)).toContain('ipython-mcp:data-session');
      expect(JSON.stringify(afterSkill?.body)).toContain('Load once');
      // The search by words found it, and the next request offers it.
      expect(seen(afterSearch)).toContain(`${CLAUDE_PREFIX}execute`);
      expect(afterSearch?.offered).toContain(`${CLAUDE_PREFIX}execute`);
      expect(seen(afterExecute)).toContain('42');
      // The python option reached the worker.
      expect(seen(afterExecute)).toContain(testPython());
    } finally {
      await model.close();
    }
  }, SET_UP_MS + 300_000);

  it('installs from OWNER/ipython-mcp (a copy in its cache), which the machine\'s set-up of the same files serves at once', async () => {
    const other = anotherUser('claude-other-home');
    await runDocs('claude-plugin-install', bin(), { user: other });
    const model = await startStandInModel('anthropic', claudeScript(), 'ToolSearch');
    try {
      const result = await runClaudeCode({
        bin: bin(), model, prompt: 'Use the ipython tools: compute 6 * 7', home: other, marker, docsBlock: 'claude-plugin-print',
        clientEnv: { ...machineEnv, ENABLE_TOOL_SEARCH: 'true' },
      });
      expectRun(result);
      expect(setUps(machineEnv.IPYTHON_MCP_HOME!)).toHaveLength(1);
      expect(seen(model.turns[3])).toContain('42');
      // No python option here: the managed environment the set-up made.
      expect(seen(model.turns[3])).toContain(join(machineEnv.IPYTHON_MCP_HOME!, 'venv'));
      // Claude Code ran its own copy, not the repository.
      expect(existsSync(join(other, '.claude', 'plugins', 'cache', 'ipython-mcp', 'ipython-mcp'))).toBe(true);
    } finally {
      await model.close();
    }
  }, 300_000);
});

describe('Codex: the plugin from the git source a user types', () => {
  const { bin, marker } = agentSuite('codex');
  const codexData = join(scratch, 'codex-data');

  it('installs from OWNER/ipython-mcp; the first session waits for the set-up and runs execute', async () => {
    await runDocs('codex-plugin-install', bin());
    const config = readFileSync(join(home, '.codex', 'config.toml'), 'utf8');
    expect(config).toContain('[plugins."ipython-mcp@ipython-mcp"]');
    const model = await startStandInModel('responses', [{ tool: 'execute', input: { code: '6 * 7' } }, { text: 'done' }]);
    const started = performance.now();
    try {
      const result = await runCodexExec({
        bin: bin(), model, prompt: 'Use the ipython tools: compute 6 * 7', home, marker, catalog: CODEX_CATALOG,
        docsBlock: 'codex-plugin-exec', configToml: `${config}\n${docsBlock('codex-plugin-approve')}`,
        // A data directory of its own (forwarded by the plugin's env_vars), so this first start sets up from nothing.
        clientEnv: { ...machineEnv, IPYTHON_MCP_HOME: codexData }, timeoutMs: SET_UP_MS,
      });
      console.log(`[measure] Codex, first session from the git source: ${((performance.now() - started) / 1000).toFixed(0)} s to the end of the run, set-up included (warm package caches)`);
      expectRun(result);
      expect(model.turns[0]?.offered).toContain('mcp__ipython__execute');
      expect(JSON.stringify(model.turns[0]?.body)).toContain('data-session');
      expect(seen(model.turns[1]), seen(model.turns[1]).slice(0, 2000)).toContain('42');
      expect(setUps(codexData)).toHaveLength(1);
    } finally {
      await model.close();
    }
  }, SET_UP_MS + 300_000);

  it('installs from a local clone (copied whole, so an already set-up clone serves at once)', async () => {
    const other = anotherUser('codex-other-home');
    await runDocs('codex-plugin-install', bin(), { user: other, replace: (block) => block.replace('OWNER/ipython-mcp', clone) });
    const config = readFileSync(join(other, '.codex', 'config.toml'), 'utf8');
    const model = await startStandInModel('responses', [{ tool: 'execute', input: { code: 'import os\nprint(os.getcwd())\n6 * 7' } }, { text: 'done' }]);
    try {
      const result = await runCodexExec({
        bin: bin(), model, prompt: 'Use the ipython tools: compute 6 * 7', home: other, marker, catalog: CODEX_CATALOG,
        docsBlock: 'codex-plugin-exec', configToml: `${config}\n${docsBlock('codex-plugin-approve')}`, clientEnv: machineEnv,
      });
      expectRun(result);
      expect(seen(model.turns[1])).toContain('42');
      // Codex starts a plugin's server in the plugin's folder, which it replaces at a session's start: the server
      // works from HOME there.
      expect(seen(model.turns[1])).toContain(other);
      expect(seen(model.turns[1])).not.toContain('plugins/cache');
    } finally {
      await model.close();
    }
  }, 300_000);
});

describe('the start command (tooling/plugin-start.sh) on the clone the Claude Code test set up', () => {
  const start = () => join(clone, 'tooling', 'plugin-start.sh');
  const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`;
  const options = (values: Record<string, string>) =>
    machine(Object.fromEntries(Object.entries(values).map(([key, value]) => [`IPYTHON_MCP_PLUGIN_${key}`, value])));

  it('takes options Codex leaves as ${user_config.…} placeholders for unset, and serves', async () => {
    const placeholders = { JUPYTER_URL: '${user_config.jupyter_url}', JUPYTER_TOKEN: '${user_config.jupyter_token}', JUPYTER_NOTEBOOK: '${user_config.jupyter_notebook}', PYTHON: '${user_config.python}', SANDBOX: '${user_config.sandbox}' };
    const result = await runBounded('bash', [start()], { env: options(placeholders), cwd: home, input: initialize, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n').filter((line) => line.length > 0);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).result.serverInfo.name).toBe('ipython-mcp');
    expect(result.stderr).toMatch(/^ipython-mcp \S+ ready on stdio/);
  });

  it('answers a bad option with the server\'s own message and exit 2, nothing on stdout', async () => {
    const result = await runBounded('bash', [start()], { env: options({ JUPYTER_URL: 'ftp://example.org/' }), cwd: home, input: initialize, timeoutMs: 60_000 });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--jupyter must be an http:// or https:// URL');
  });

  it('shows the set-up\'s output and exits 1 when the set-up fails, nothing on stdout, no lock left', async () => {
    // A copy of the plugin whose lockfile is broken: the set-up's `pnpm install --frozen-lockfile` refuses it.
    const broken = join(scratch, 'broken');
    await runOk('git', ['clone', '-q', bare, broken], { cwd: scratch, timeoutMs: 120_000 });
    appendFileSync(join(broken, 'pnpm-lock.yaml'), '\n: not yaml [\n');
    const data = join(scratch, 'broken-data');
    const result = await runBounded('bash', [join(broken, 'tooling', 'plugin-start.sh')], { env: machine({ IPYTHON_MCP_HOME: data }), cwd: home, input: initialize, timeoutMs: SET_UP_MS });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('ipython-mcp: set-up failed; its output follows');
    expect(result.stderr).toContain('bootstrap: installing Node dependencies');
    expect(readdirSync(join(data, 'plugin')).filter((name) => name.endsWith('.lock'))).toEqual([]);
    expect(setUps(data)).toEqual([]);
  }, SET_UP_MS);
});
