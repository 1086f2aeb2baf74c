// Real, independent clients against the built server: the Codex CLI and Claude Code (their `mcp` commands, as
// docs/clients.md tells users to run them), the MCP Inspector CLI, and the official Python MCP SDK. Each client
// is installed from its registry once into the test cache (fixtures/client-clis.ts), every process runs with a deadline, and a marker in
// the environment proves that no server or worker outlives its client. Nothing here calls a model.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startServer, testPython } from './harness.js';
import { docsBlock } from './fixtures/docs-blocks.js';
import { CLAUDE_CODE_VERSION, CLIENTS_CACHE, CODEX_VERSION, INSPECTOR_VERSION, INSTALL_TIMEOUT_MS, PYTHON_MCP_VERSION, pinnedCliBin } from './fixtures/client-clis.js';
import {
  REPO_ROOT,
  killMarkedProcesses,
  newMarker,
  runBounded,
  runOk,
  waitForNoMarkedProcesses,
} from './fixtures/processes.js';

const STABLE_TOOLS = [
  'call_function', 'execute', 'inspect', 'job', 'list', 'register_tool', 'reload', 'remove', 'reset', 'runtime_status', 'search', 'unregister_tool',
];

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-clients-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A bin directory whose `ipython-mcp` is this checkout's built server, as a user's PATH would have it. */
const shimBin = join(scratch, 'bin');
mkdirSync(shimBin);
symlinkSync(CLI, join(shimBin, 'ipython-mcp'));

describe('Codex CLI', () => {
  let codex: string;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const runCodex = (args: string[], cwd = home) => runBounded(codex, args, { env, cwd, timeoutMs: 60_000 });

  beforeAll(async () => {
    const bin = await pinnedCliBin(`@openai/codex@${CODEX_VERSION}`);
    codex = join(bin, 'codex');
    home = mkdtempSync(join(scratch, 'codex-home-'));
    mkdirSync(join(home, '.codex'));
    env = { ...process.env, HOME: home, CODEX_HOME: join(home, '.codex'), PATH: `${bin}:${process.env.PATH ?? ''}` };
    // If the binary cannot run on this machine the whole suite must fail, loudly: there is no skip.
    const version = await runCodex(['--version']);
    if (version.code !== 0) throw new Error(`the codex binary from @openai/codex@${CODEX_VERSION} cannot run here:\n${version.stderr}${version.stdout}`);
    expect(version.stdout).toContain(`codex-cli ${CODEX_VERSION}`);
  }, INSTALL_TIMEOUT_MS + 60_000);

  async function storedEntry(name: string, cwd = home): Promise<Record<string, any>> {
    const result = await runCodex(['mcp', 'get', name, '--json'], cwd);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, any>;
  }

  it('stores the docs\' `codex mcp add` command with its --env settings', async () => {
    const added = await runBounded('bash', ['-euo', 'pipefail', '-c', docsBlock('codex-add')], { env, cwd: home, timeoutMs: 60_000 });
    expect(added.code, added.stderr).toBe(0);
    const entry = await storedEntry('ipython');
    expect(entry.transport).toMatchObject({
      type: 'stdio',
      command: 'ipython-mcp',
      args: [],
      env: { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '20', IPYTHON_MCP_PRELOAD_MODULES: 'math,json' },
    });
    expect(Object.keys(entry.transport.env)).toHaveLength(2);
    expect(entry.enabled).toBe(true);
  });

  it('keeps server arguments after `--` (a source checkout registered by path)', async () => {
    const added = await runCodex(['mcp', 'add', 'ipython-source', '--env', `IPYTHON_MCP_PYTHON=${testPython()}`, '--', 'node', CLI, '--log-level', 'info']);
    expect(added.code, added.stderr).toBe(0);
    const entry = await storedEntry('ipython-source');
    expect(entry.transport).toMatchObject({ command: 'node', args: [CLI, '--log-level', 'info'], env: { IPYTHON_MCP_PYTHON: testPython() } });
  });

  it('reads the docs\' project-scoped .codex/config.toml, once the project is trusted', async () => {
    const project = mkdtempSync(join(scratch, 'codex-project-'));
    mkdirSync(join(project, '.codex'));
    writeFileSync(join(project, '.codex', 'config.toml'), `${docsBlock('codex-config-toml')}\n`);
    const projectHome = mkdtempSync(join(scratch, 'codex-home-'));
    const codexHome = join(projectHome, '.codex');
    mkdirSync(codexHome);
    const projectEnv = { ...env, HOME: projectHome, CODEX_HOME: codexHome };
    const get = () => runBounded(codex, ['mcp', 'get', 'ipython', '--json'], { env: projectEnv, cwd: project, timeoutMs: 60_000 });

    const untrusted = await get();
    expect(untrusted.code).not.toBe(0);
    expect(untrusted.stderr).toContain("No MCP server named 'ipython' found");

    writeFileSync(join(codexHome, 'config.toml'), `[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n`);
    const trusted = await get();
    expect(trusted.code, trusted.stderr).toBe(0);
    const entry = JSON.parse(trusted.stdout) as Record<string, any>;
    expect(entry.transport).toMatchObject({
      type: 'stdio',
      command: 'ipython-mcp',
      args: ['--log-level', 'info'],
      env: { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '20', IPYTHON_MCP_PRELOAD_MODULES: 'math,json' },
    });
    expect(entry.startup_timeout_sec).toBe(20);
    expect(entry.tool_timeout_sec).toBe(60);
  });

  it('removes the entry with `codex mcp remove ipython`', async () => {
    const removed = await runCodex(['mcp', 'remove', 'ipython']);
    expect(removed.code, removed.stderr).toBe(0);
    const after = await runCodex(['mcp', 'get', 'ipython', '--json']);
    expect(after.code).not.toBe(0);
    expect((await storedEntry('ipython-source')).transport.command).toBe('node');
  });
});

describe('Claude Code CLI', () => {
  let claude: string;
  let project: string;
  let env: NodeJS.ProcessEnv;
  const marker = newMarker();
  const runClaude = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runBounded(claude, args, { env: { ...env, ...extra }, cwd: project, timeoutMs: 90_000 });
  afterEach(() => killMarkedProcesses(marker));

  beforeAll(async () => {
    claude = join(await pinnedCliBin(`@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`), 'claude');
    const home = mkdtempSync(join(scratch, 'claude-home-'));
    project = mkdtempSync(join(scratch, 'claude-project-'));
    env = {
      ...process.env,
      HOME: home,
      PATH: `${shimBin}:${process.env.PATH ?? ''}`,
      IPYTHON_MCP_PYTHON: testPython(),
      [marker.name]: marker.value,
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
    const version = await runClaude(['--version']);
    if (version.code !== 0) throw new Error(`claude from @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} cannot run here:\n${version.stderr}`);
  }, INSTALL_TIMEOUT_MS + 60_000);

  it('adds the server with the docs\' command, and `claude mcp get` connects to it', async () => {
    const added = await runBounded('bash', ['-euo', 'pipefail', '-c', docsBlock('claude-add')], {
      env: { ...env, PATH: `${join(claude, '..')}:${env.PATH ?? ''}` },
      cwd: project,
      timeoutMs: 90_000,
    });
    expect(added.code, added.stderr).toBe(0);
    const got = await runClaude(['mcp', 'get', 'ipython']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(/Status: [✓✔] Connected/);
    expect(got.stdout).toMatch(/Command: ipython-mcp\n/);
    expect(got.stdout).toContain('IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS=20');
    expect(await waitForNoMarkedProcesses(marker, 15_000)).toEqual([]);
  });

  it('reports a failed connection when the binary is not on its PATH (the check above can fail)', async () => {
    // The test runner's PATH may hold the repository's own node_modules/.bin (it links ipython-mcp): drop every
    // directory that has an ipython-mcp, so the configured command really cannot be found.
    const withoutServer = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((directory) => directory.length > 0 && !existsSync(join(directory, 'ipython-mcp')))
      .join(delimiter);
    const got = await runClaude(['mcp', 'get', 'ipython'], { PATH: withoutServer });
    expect(got.stdout).toMatch(/Status: ✘ Failed to connect/);
  });

  it('reports a misconfigured interpreter as a failed connection, not as healthy', async () => {
    const added = await runClaude(['mcp', 'add', 'badpy', '--env', 'IPYTHON_MCP_PYTHON=/nonexistent/python', '--', 'ipython-mcp']);
    expect(added.code, added.stderr).toBe(0);
    const listed = await runClaude(['mcp', 'list']);
    expect(listed.stdout).toMatch(/badpy: .*✘ Failed to connect/);
    expect(listed.stdout).not.toMatch(/badpy: .*[✓✔] Connected/);
    expect((await runClaude(['mcp', 'remove', 'badpy'])).code).toBe(0);
  });

  it('removes the entry with `claude mcp remove ipython`', async () => {
    const removed = await runClaude(['mcp', 'remove', 'ipython']);
    expect(removed.code, removed.stderr).toBe(0);
    const after = await runClaude(['mcp', 'get', 'ipython']);
    expect(after.code).not.toBe(0);
  });
});

describe('MCP Inspector CLI', () => {
  let inspector: string;
  const marker = newMarker();
  afterEach(() => killMarkedProcesses(marker));

  beforeAll(async () => {
    inspector = join(await pinnedCliBin(`@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`), 'mcp-inspector');
  }, INSTALL_TIMEOUT_MS + 60_000);

  /** One Inspector invocation: it launches the server over stdio, sends one request, prints JSON, exits. */
  async function inspect(args: string[]): Promise<Record<string, any>> {
    const result = await runBounded(
      inspector,
      ['--cli', '-e', `IPYTHON_MCP_PYTHON=${testPython()}`, 'node', CLI, ...args],
      { env: { ...process.env, [marker.name]: marker.value }, cwd: scratch, timeoutMs: 90_000 },
    );
    expect(result.timedOut).toBe(false);
    expect(result.code, result.stderr).toBe(0);
    expect(await waitForNoMarkedProcesses(marker, 15_000)).toEqual([]);
    return JSON.parse(result.stdout) as Record<string, any>;
  }

  it('lists the twelve stable tools', async () => {
    const listed = await inspect(['--method', 'tools/list']);
    expect((listed.tools as Array<{ name: string }>).map((tool) => tool.name).sort()).toEqual(STABLE_TOOLS);
  });

  it('calls execute (state built over statements of one cell) and runtime_status', async () => {
    const executed = await inspect(['--method', 'tools/call', '--tool-name', 'execute', '--tool-arg', 'code=x = 41\ny = x + 1\ny']);
    expect(executed.isError).toBeFalsy();
    expect(executed.structuredContent).toEqual({ execution_count: 1, result: { value: 42 } });
    expect(executed.content).toEqual([{ type: 'text', text: 'Out[1]: 42' }]);
    const status = await inspect(['--method', 'tools/call', '--tool-name', 'runtime_status']);
    expect(status.structuredContent).toMatchObject({ state: expect.stringMatching(/^(starting|ready)$/), epoch: 1 });
    expect(status.structuredContent).not.toHaveProperty('queue_depth');
  });

  it('starts each invocation with a new server lifespan, so earlier names are gone', async () => {
    // The Inspector CLI is one-shot over stdio: one server per invocation. Persistence across calls within one
    // lifespan is what the Python SDK client below checks.
    const fresh = await inspect(['--method', 'tools/call', '--tool-name', 'execute', '--tool-arg', 'code=x']);
    expect(fresh.isError).toBe(true);
    expect(fresh.structuredContent).toMatchObject({ status: 'error', error: { type: 'NameError' } });
  });
});

describe('Python MCP SDK client', () => {
  const marker = newMarker();
  let python: string;
  afterEach(() => killMarkedProcesses(marker));

  beforeAll(async () => {
    // A separate environment, so the worker's own test environment (.venv) stays as the worker sees it.
    const venv = process.env.IPYTHON_MCP_CLIENTS_VENV ?? join(CLIENTS_CACHE, `python-mcp-${PYTHON_MCP_VERSION}`);
    python = join(venv, 'bin', 'python');
    const stamp = join(venv, `.mcp-${PYTHON_MCP_VERSION}`);
    if (!existsSync(stamp)) {
      await runOk('python3', ['-m', 'venv', venv], { timeoutMs: 120_000 });
      await runOk(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `mcp==${PYTHON_MCP_VERSION}`], { timeoutMs: INSTALL_TIMEOUT_MS });
      writeFileSync(stamp, '');
    }
  }, INSTALL_TIMEOUT_MS + 150_000);

  it('executes, keeps state between calls, and reads runtime_status; nothing outlives the session', async () => {
    const script = join(REPO_ROOT, 'apps', 'ipython-mcp', 'test', 'fixtures', 'python_mcp_client.py');
    const result = await runBounded(python, [script, process.execPath, CLI], {
      env: { ...process.env, IPYTHON_MCP_PYTHON: testPython(), [marker.name]: marker.value },
      timeoutMs: 120_000,
    });
    expect(result.timedOut).toBe(false);
    expect(result.code, result.stderr).toBe(0);
    const seen = JSON.parse(result.stdout) as Record<string, any>;
    expect(seen.server_name).toBe('ipython-mcp');
    expect(seen.tools).toEqual(STABLE_TOOLS);
    // The Python SDK validates structured content against the output schema too.
    expect(seen.second).toEqual({ result: { value: 42 }, execution_count: seen.first_execution_count + 1 });
    expect(seen.runtime_status).toMatchObject({ state: 'ready', epoch: 1 });
    for (const absent of ['queue_depth', 'active', 'error']) expect(seen.runtime_status).not.toHaveProperty(absent);
    expect(seen.worker_pid).not.toBe(seen.server_pid);
    expect(await waitForNoMarkedProcesses(marker, 15_000)).toEqual([]);
  });
});

describe('the client JSON in docs/clients.md', () => {
  const marker = newMarker();
  afterEach(() => killMarkedProcesses(marker));

  it('is valid JSON in each client\'s shape, and the Cursor entry launches a working server', async () => {
    const vscode = JSON.parse(docsBlock('json-vscode')) as { servers: Record<string, any> };
    expect(vscode.servers.ipython).toMatchObject({ type: 'stdio', command: 'ipython-mcp', args: [] });
    const cursor = JSON.parse(docsBlock('json-cursor')) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> };
    const entry = cursor.mcpServers.ipython!;
    expect(entry.command).toBe('ipython-mcp');

    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: {
        ...(process.env as Record<string, string>),
        PATH: `${shimBin}:${process.env.PATH ?? ''}`,
        IPYTHON_MCP_PYTHON: testPython(),
        [marker.name]: marker.value,
        ...entry.env,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'docs-json', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'execute', arguments: { code: '6 * 7' } }, undefined, { timeout: 60_000 });
      expect((result.structuredContent as Record<string, any>).result).toEqual({ value: 42 });
    } finally {
      await client.close();
    }
    expect(await waitForNoMarkedProcesses(marker, 15_000)).toEqual([]);
  });
});

describe('the docs tour: build, import, edit, reload', () => {
  it('works step by step as docs/clients.md describes', async () => {
    const library = mkdtempSync(join(scratch, 'agent-lib-'));
    const module = join(library, 'stats_tools.py');
    writeFileSync(module, '"""Small statistics helpers."""\n\ndef mean(values: list[float]) -> float:\n    """Arithmetic mean."""\n    return sum(values) / len(values)\n');
    const server = await startServer({ IPYTHON_MCP_LIBRARY_PATHS: library, IPYTHON_MCP_PRELOAD_MODULES: 'stats_tools' });
    try {
      const first = await server.structured('execute', { code: 'data = [3, 1, 4, 1, 5]\nstats_tools.mean(data)' });
      expect(first.result).toEqual({ value: 2.8 });
      const inspected = await server.structured('inspect', { name: 'stats_tools.mean' });
      expect(JSON.stringify(inspected)).toContain('values: list[float]');
      expect(JSON.stringify(inspected)).toContain('Arithmetic mean.');
      const called = await server.structured('call_function', { name: 'stats_tools.mean', arguments: { values: [1, 2] } });
      expect(JSON.stringify(called)).toContain('1.5');

      writeFileSync(module, 'def mean(values: list[float]) -> float:\n    return round(sum(values) / len(values))\n');
      const reloaded = await server.call('reload', { modules: ['stats_tools'] });
      expect(reloaded.isError).toBeFalsy();
      const after = await server.structured('execute', { code: 'stats_tools.mean(data), len(data)' });
      expect(after.result).toEqual({ value: [3, 5] });

      await server.structured('execute', { code: 'def spread(values: list[float]) -> float:\n    return max(values) - min(values)' });
      const registered = await server.call('register_tool', { name: 'spread' });
      expect(registered.isError).toBeFalsy();
      const tools = await server.client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain('spread');
      const spread = await server.call('spread', { values: [1, 4, 2] });
      expect(JSON.stringify(spread.structuredContent ?? spread.content)).toContain('3');
    } finally {
      await server.close();
    }
  });
});
