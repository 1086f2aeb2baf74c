// Real agent turns over Streamable HTTP: one long-lived `ipython-mcp --http` server, started and
// configured exactly as docs/clients.md's "Over HTTP" blocks say (http-serve, claude-http-add, codex-http-toml;
// the port is the only change), and the real `claude -p` / `codex exec` runs against it, each a new process with
// a scripted stand-in model on 127.0.0.1. A name one run sets is read by the next run, and a Claude Code run and
// a Codex run at the same time see each other's names. Assertions are on what each client handed its model.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CLI, testPython, waitForExit } from './harness.js';
import { retry } from './http-harness.js';
import { RUN_TIMEOUT_MS, agentSuite, expectRun, runClaudeCode, runCodexExec, type AgentSuite } from './fixtures/agent-runs.js';
import { docsBlock } from './fixtures/docs-blocks.js';
import { killMarkedProcesses, newMarker, runBounded, waitForNoMarkedProcesses } from './fixtures/processes.js';
import { startStandInModel, type StandInModel, type Step } from './fixtures/stand-in-model.js';

const CODEX_CATALOG = fileURLToPath(new URL('./fixtures/codex-model-catalog.json', import.meta.url));
/** Two CLI runs one after the other (or at once), each bounded by RUN_TIMEOUT_MS, plus the server around them. */
const TEST_TIMEOUT_MS = 2 * RUN_TIMEOUT_MS + 60_000;
/** The port the docs' blocks name; the test serves on a free one and puts it in their place. */
const DOCS_PORT = '8765';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-http-agents-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A bin directory whose `ipython-mcp` is this checkout's built server, as a user's PATH would have it. */
const shimBin = join(scratch, 'bin');
mkdirSync(shimBin);
symlinkSync(CLI, join(shimBin, 'ipython-mcp'));

/** The docs' long-lived server, run in one user's HOME (so the token file is where the docs' commands read it). */
interface DocsServer {
  home: string;
  port: string;
  /** The token file the docs name (`~/.local/share/ipython-mcp/http-token`) in this HOME. */
  tokenFile: string;
  child: ChildProcess;
  stderr: () => string;
}

const serverMarker = newMarker();
let running: DocsServer | undefined;

/** Starts the docs' `ipython-mcp --http 8765` (on port 0, a free one) with no token in its environment. */
async function startDocsServer(extraEnv: Record<string, string> = {}): Promise<DocsServer> {
  const home = mkdtempSync(join(scratch, 'user-'));
  mkdirSync(join(home, 'project'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    PATH: `${shimBin}:${process.env.PATH ?? ''}`,
    IPYTHON_MCP_PYTHON: testPython(),
    [serverMarker.name]: serverMarker.value,
    ...extraEnv,
  };
  // The docs' token file is the generated one in the default home: nothing may point elsewhere.
  for (const name of ['IPYTHON_MCP_HOME', 'XDG_DATA_HOME', 'IPYTHON_MCP_HTTP_TOKEN', 'IPYTHON_MCP_HTTP']) delete env[name];
  const command = docsBlock('http-serve').replace(DOCS_PORT, '0');
  const child = spawn('bash', ['-c', `exec ${command}`], { env, cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderrText = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderrText += chunk.toString('utf8')));
  let port = '';
  await retry(() => {
    const match = /ready on http:\/\/127\.0\.0\.1:(\d+)\/mcp /.exec(stderrText);
    if (match === null) throw new Error(`no ready banner yet: ${stderrText.slice(-500)}`);
    port = match[1] as string;
  }, 30_000);
  const tokenFile = join(home, '.local', 'share', 'ipython-mcp', 'http-token');
  // The banner names the file the docs' commands read, never the token.
  expect(stderrText).toContain(`bearer token from ${tokenFile}`);
  expect(stderrText).not.toContain(readFileSync(tokenFile, 'utf8').trim());
  running = { home, port, tokenFile, child, stderr: () => stderrText };
  return running;
}

/** SIGTERM, as a user ends it: exit 0, and nothing of it (server, workers) left. */
async function stopDocsServer(server: DocsServer): Promise<void> {
  running = undefined;
  const exited = new Promise<number | null>((resolve) => {
    if (server.child.exitCode !== null) resolve(server.child.exitCode);
    else server.child.once('exit', (code) => resolve(code));
  });
  server.child.kill('SIGTERM');
  if (!(await waitForExit(server.child.pid as number, 20_000))) server.child.kill('SIGKILL');
  expect(await exited, server.stderr().slice(-2000)).toBe(0);
  expect(await waitForNoMarkedProcesses(serverMarker, 15_000)).toEqual([]);
}

afterEach(async () => {
  if (running) await stopDocsServer(running).catch(() => killMarkedProcesses(serverMarker));
});

/** A docs block with the test server's port in place of the docs' one. */
const withPort = (server: DocsServer, name: string) => docsBlock(name).replaceAll(DOCS_PORT, server.port);

/** Everything the client handed back for the previous tool call, as text. */
const seen = (model: StandInModel, index: number) => JSON.stringify(model.turns[index]?.toolResult ?? null);

/** Waits (in the stand-in, before it answers) until `model` has received `count` main-conversation requests. */
const untilTurns = (model: () => StandInModel | undefined, count: number) => () =>
  retry(() => expect(model()?.turns.length ?? 0).toBeGreaterThanOrEqual(count), 60_000);

const SET_X: Step[] = [{ tool: 'execute', input: { code: 'x = 41\n"x is set"' } }, { text: 'Done.' }];
const READ_X: Step[] = [{ tool: 'execute', input: { code: 'f"x + 1 == 42: {x + 1 == 42}"' } }, { text: 'Done.' }];

/** Runs the docs' `claude mcp add --transport http …` in the user's project (Claude Code's local scope). */
async function addToClaudeCode(server: DocsServer, bin: string): Promise<void> {
  const added = await runBounded('bash', ['-euo', 'pipefail', '-c', withPort(server, 'claude-http-add')], {
    env: { ...process.env, HOME: server.home, PATH: `${bin}:${process.env.PATH ?? ''}`, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
    cwd: join(server.home, 'project'),
    timeoutMs: 60_000,
  });
  expect(added.code, added.stderr + added.stdout).toBe(0);
}

/** One `claude -p` run in the user's project, with the server `claude mcp add` stored (no --mcp-config). */
async function claudeRun(suite: AgentSuite, server: DocsServer, script: Step[], prompt: string): Promise<StandInModel> {
  const model = await startStandInModel('anthropic', script);
  try {
    expectRun(await runClaudeCode({ bin: suite.bin(), model, prompt, home: server.home, marker: suite.marker }));
  } finally {
    await model.close();
  }
  return model;
}

/**
 * One `codex exec` run with the docs' `[mcp_servers.ipython]` entry (`url`, `bearer_token_env_var`) in its config
 * and the token in its environment, read from the file as the docs' `$(cat …)` does. `required = true` is the
 * docs' advice for scripts: wait for the server before the first model request.
 */
async function codexRun(suite: AgentSuite, server: DocsServer, model: StandInModel, prompt: string, mcp2026 = false): Promise<void> {
  // Codex's opt-in to protocol 2026-07-28 (a feature, off by default) goes in its own table after the docs' entry.
  const configToml = `${withPort(server, 'codex-http-toml')}\nrequired = true\n${mcp2026 ? '[features]\nmcp_2026_07_28 = true\n' : ''}`;
  const token = readFileSync(server.tokenFile, 'utf8').replace(/\n+$/, '');
  expectRun(
    await runCodexExec({
      bin: suite.bin(),
      model,
      prompt,
      home: server.home,
      marker: suite.marker,
      catalog: CODEX_CATALOG,
      configToml,
      clientEnv: { IPYTHON_MCP_HTTP_TOKEN: token },
    }),
  );
}

describe('Claude Code over HTTP (claude mcp add --transport http, then claude -p)', () => {
  const suite = agentSuite('claude');

  it('one run sets x = 41 and exits; a second, new run reads x + 1 == 42', async () => {
    const server = await startDocsServer();
    await addToClaudeCode(server, suite.bin());
    const first = await claudeRun(suite, server, SET_X, 'Set x.');
    expect(first.clientName(first.turns[0]!, 'execute')).toBe('mcp__ipython__execute');
    expect(seen(first, 1)).toContain('x is set');
    const second = await claudeRun(suite, server, READ_X, 'Read x.');
    expect(seen(second, 1)).toContain('x + 1 == 42: True');
    expect((second.turns[1]?.toolResult as Record<string, any>).is_error).not.toBe(true);
  }, TEST_TIMEOUT_MS);
});

describe.each([{ mcp2026: false }, { mcp2026: true }])('Codex over HTTP (url + bearer_token_env_var, then codex exec; [features] mcp_2026_07_28 = $mcp2026)', ({ mcp2026 }) => {
  const suite = agentSuite('codex');

  it('one run sets x = 41 and exits; a second, new run reads x + 1 == 42', async () => {
    const server = await startDocsServer({ IPYTHON_MCP_LOG_LEVEL: 'info' });
    const once = async (script: Step[], prompt: string) => {
      const model = await startStandInModel('responses', script);
      try {
        await codexRun(suite, server, model, prompt, mcp2026);
      } finally {
        await model.close();
      }
      return model;
    };
    const first = await once(SET_X, 'Set x.');
    expect(seen(first, 1)).toContain('x is set');
    const second = await once(READ_X, 'Read x.');
    expect(seen(second, 1)).toContain('x + 1 == 42: True');
    // What the server saw: a 2025-era client opens a session (`initialize`); a 2026-07-28 one never does.
    expect(server.stderr().includes('"session opened"')).toBe(!mcp2026);
  }, TEST_TIMEOUT_MS);
});

describe('Claude Code and Codex at the same time on /mcp', () => {
  const claude = agentSuite('claude');
  const codex = agentSuite('codex');

  it('both runs complete, each seeing the name the other set', async () => {
    const server = await startDocsServer();
    await addToClaudeCode(server, claude.bin());
    let claudeModel: StandInModel | undefined;
    let codexModel: StandInModel | undefined;
    // Each run sets its name, then reads the other's only once the other's model has seen its own name set (its
    // second request), so the two runs overlap by construction and neither read can come too early.
    claudeModel = await startStandInModel('anthropic', [
      { tool: 'execute', input: { code: 'from_claude = "set by Claude Code"' } },
      { tool: 'execute', input: { code: 'from_codex' }, hold: untilTurns(() => codexModel, 2) },
      { text: 'Done.' },
    ]);
    codexModel = await startStandInModel('responses', [
      { tool: 'execute', input: { code: 'from_codex = "set by Codex"' } },
      { tool: 'execute', input: { code: 'from_claude' }, hold: untilTurns(() => claudeModel, 2) },
      { text: 'Done.' },
    ]);
    try {
      const claudeRunning = runClaudeCode({ bin: claude.bin(), model: claudeModel, prompt: 'Share a name.', home: server.home, marker: claude.marker });
      const codexRunning = codexRun(codex, server, codexModel, 'Share a name.');
      const [claudeResult] = await Promise.all([claudeRunning, codexRunning]);
      expectRun(claudeResult);
    } finally {
      await Promise.all([claudeModel.close(), codexModel.close()]);
    }
    expect(seen(claudeModel, 2)).toContain('set by Codex');
    expect(seen(codexModel, 2)).toContain('set by Claude Code');
  }, TEST_TIMEOUT_MS);
});
