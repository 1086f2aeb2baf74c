// Real agent turns against a server "on another machine": `--http 0.0.0.0:PORT --http-allow-remote
// --http-allow-host 127.0.0.2`, dialled through 127.0.0.2 (a second loopback address, so no traffic leaves this
// machine). `claude -p` and `codex exec` each set a name in one run and read it in the next, over plain HTTP and
// over HTTPS with a self-signed certificate made by docs/clients.md's own block; a client that dials a host the
// server does not list gets 403 and runs nothing. The SSH-tunnel recipe runs too, through a real sshd on 127.0.0.2. Assertions are on what each client handed its stand-in model.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
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
const TEST_TIMEOUT_MS = 2 * RUN_TIMEOUT_MS + 90_000;
/** The box's address as the clients dial it. */
const REMOTE = '127.0.0.2';
/** An address of this machine that the server is not told about. */
const UNLISTED = '127.0.0.3';
const DOCS_PORT = '8765';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-remote-agents-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const shimBin = join(scratch, 'bin');
mkdirSync(shimBin);
symlinkSync(CLI, join(shimBin, 'ipython-mcp'));

interface RemoteServer {
  /** The URL a client on the laptop dials. */
  url: string;
  port: string;
  token: string;
  /** The self-signed certificate, over HTTPS. */
  cert?: string;
  /** The client's HOME (its project inside). */
  home: string;
  child: ChildProcess;
  stderr: () => string;
}

const serverMarker = newMarker();
let running: RemoteServer | undefined;

/**
 * Starts the box's server. Over HTTPS: docs/clients.md's `remote-tls-serve` block as written, with HOST and SAN
 * set as its text says and a free port for 8765. Over HTTP: the same bind and allowed host without the TLS flags.
 */
async function startRemote(tls: boolean, plainArgs = ['--http', '0.0.0.0:0', '--http-allow-remote', '--http-allow-host', '"$HOST"']): Promise<RemoteServer> {
  const box = mkdtempSync(join(scratch, 'box-'));
  const home = mkdtempSync(join(scratch, 'laptop-'));
  mkdirSync(join(home, 'project'));
  const token = randomBytes(24).toString('hex');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: box,
    PATH: `${shimBin}:${process.env.PATH ?? ''}`,
    IPYTHON_MCP_PYTHON: testPython(),
    IPYTHON_MCP_HTTP_TOKEN: token,
    HOST: REMOTE,
    SAN: `IP:${REMOTE}`,
    [serverMarker.name]: serverMarker.value,
  };
  for (const name of ['IPYTHON_MCP_HOME', 'XDG_DATA_HOME', 'IPYTHON_MCP_HTTP']) delete env[name];
  const script = tls
    ? docsBlock('remote-tls-serve').replaceAll(DOCS_PORT, '0').replace('ipython-mcp --http', 'exec ipython-mcp --http')
    : `exec ipython-mcp ${plainArgs.join(' ')}`;
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { env, cwd: box, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderrText = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderrText += chunk.toString('utf8')));
  let url = '';
  let port = '';
  await retry(() => {
    const match = /ready on (https?:\/\/([^/:]+):(\d+)\/mcp) /.exec(stderrText);
    if (match === null) throw new Error(`no ready banner yet: ${stderrText.slice(-500)}`);
    expect(match[2]).toBe(plainArgs[1]?.startsWith('127.0.0.1') && !tls ? '127.0.0.1' : REMOTE);
    url = match[1] as string;
    port = match[3] as string;
  }, 30_000);
  expect(url.startsWith(tls ? 'https://' : 'http://')).toBe(true);
  // One warning line, only when the token travels in clear.
  expect(stderrText.includes('travel in clear text'), stderrText).toBe(!tls && !(plainArgs[1] ?? '').startsWith('127.'));
  expect(stderrText).not.toContain(token);
  running = { url, port, token, home, child, stderr: () => stderrText, ...(tls ? { cert: join(box, 'cert.pem') } : {}) };
  return running;
}

async function stopRemote(server: RemoteServer): Promise<void> {
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
  if (running) await stopRemote(running).catch(() => killMarkedProcesses(serverMarker));
});

const seen = (model: StandInModel, index: number) => JSON.stringify(model.turns[index]?.toolResult ?? null);
const SET_X: Step[] = [{ tool: 'execute', input: { code: 'x = 41\n"x is set"' } }, { text: 'Done.' }];
const READ_X: Step[] = [{ tool: 'execute', input: { code: 'f"x + 1 == 42: {x + 1 == 42}"' } }, { text: 'Done.' }];

/** The trust a client process needs for the server's certificate (none over plain HTTP). */
function trust(server: RemoteServer, cli: 'claude' | 'codex'): Record<string, string> {
  if (server.cert === undefined) return {};
  return cli === 'claude' ? { NODE_EXTRA_CA_CERTS: server.cert } : { CODEX_CA_CERTIFICATE: server.cert };
}

/** docs/clients.md's `claude mcp add` line for the box, pointed at `host` (the scheme follows the server). */
async function addToClaudeCode(server: RemoteServer, bin: string, host = REMOTE): Promise<void> {
  let command = (docsBlock('claude-remote-add').split('\n')[0] as string).replaceAll(DOCS_PORT, server.port);
  if (server.cert === undefined) command = command.replace('https://', 'http://');
  // A second add for the same name replaces the first.
  command = `claude mcp remove ipython >/dev/null 2>&1 || true\n${command}`;
  const added = await runBounded('bash', ['-euo', 'pipefail', '-c', command], {
    env: { ...process.env, HOME: server.home, HOST: host, TOKEN: server.token, PATH: `${bin}:${process.env.PATH ?? ''}`, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
    cwd: join(server.home, 'project'),
    timeoutMs: 60_000,
  });
  expect(added.code, added.stderr + added.stdout).toBe(0);
}

async function claudeRun(suite: AgentSuite, server: RemoteServer, script: Step[], prompt: string): Promise<StandInModel> {
  const model = await startStandInModel('anthropic', script);
  try {
    expectRun(await runClaudeCode({ bin: suite.bin(), model, prompt, home: server.home, marker: suite.marker, clientEnv: trust(server, 'claude') }));
  } finally {
    await model.close();
  }
  return model;
}

async function codexRun(suite: AgentSuite, server: RemoteServer, script: Step[], prompt: string): Promise<StandInModel> {
  const url = server.url;
  const configToml = `${docsBlock('codex-remote-toml').replace(/"https:\/\/[^"]+"/, JSON.stringify(url))}\nrequired = true\n`;
  const model = await startStandInModel('responses', script);
  try {
    expectRun(
      await runCodexExec({
        bin: suite.bin(),
        model,
        prompt,
        home: server.home,
        marker: suite.marker,
        catalog: CODEX_CATALOG,
        configToml,
        clientEnv: { IPYTHON_MCP_HTTP_TOKEN: server.token, ...trust(server, 'codex') },
      }),
    );
  } finally {
    await model.close();
  }
  return model;
}

for (const tls of [false, true]) {
  const scheme = tls ? 'HTTPS (self-signed certificate)' : 'plain HTTP';
  describe(`a server on 0.0.0.0 dialled through ${REMOTE}, ${scheme}`, () => {
    const claude = agentSuite('claude');
    const codex = agentSuite('codex');

    it('claude -p sets x = 41, a new claude -p run reads x + 1 == 42', async () => {
      const server = await startRemote(tls);
      await addToClaudeCode(server, claude.bin());
      const first = await claudeRun(claude, server, SET_X, 'Set x.');
      expect(first.clientName(first.turns[0]!, 'execute')).toBe('mcp__ipython__execute');
      expect(seen(first, 1)).toContain('x is set');
      const second = await claudeRun(claude, server, READ_X, 'Read x.');
      expect(seen(second, 1)).toContain('x + 1 == 42: True');
    }, TEST_TIMEOUT_MS);

    it('codex exec sets x = 41, a new codex exec run reads x + 1 == 42', async () => {
      const server = await startRemote(tls);
      const first = await codexRun(codex, server, SET_X, 'Set x.');
      expect(seen(first, 1)).toContain('x is set');
      const second = await codexRun(codex, server, READ_X, 'Read x.');
      expect(seen(second, 1)).toContain('x + 1 == 42: True');
    }, TEST_TIMEOUT_MS);
  });
}

describe('a client that dials a host the server does not list', () => {
  const claude = agentSuite('claude');

  it(`claude -p through ${UNLISTED} is refused (403): the model is never offered the tools and no cell runs`, async () => {
    const server = await startRemote(false);
    await addToClaudeCode(server, claude.bin(), UNLISTED);
    const marker = join(server.home, 'ran');
    const model = await startStandInModel('anthropic', [{ tool: 'execute', input: { code: `open(${JSON.stringify(marker)}, "w").close()` } }, { text: 'Done.' }]);
    let result;
    try {
      result = await runClaudeCode({ bin: claude.bin(), model, prompt: 'Run a cell.', home: server.home, marker: claude.marker });
    } finally {
      await model.close();
    }
    expect(result.timedOut).toBe(false);
    // Every request Claude Code made of the model came without the server's tools.
    expect(model.turns).toEqual([]);
    expect(model.sideRequests.some((request) => request.startsWith('POST'))).toBe(true);
    // The same address and port with a listed Host works: the refusal was the Host, not the network.
    await addToClaudeCode(server, claude.bin());
    const listed = await claudeRun(claude, server, [{ tool: 'execute', input: { code: `import os; os.path.exists(${JSON.stringify(marker)})` } }, { text: 'Done.' }], 'Look.');
    expect(seen(listed, 1)).toContain('false');
  }, TEST_TIMEOUT_MS);
});

/** A free TCP port on 127.0.0.1 (closed again before use). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createTcpServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Spawns a long-lived helper process that the test ends; resolves once `ready` returns true. */
async function helper(command: string, args: string[], ready: (output: string) => boolean, label: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  helpers.push(child);
  await retry(() => {
    if (child.exitCode !== null) throw new Error(`${label} exited ${child.exitCode}: ${output.slice(-1000)}`);
    if (!ready(output)) throw new Error(`${label} not ready: ${output.slice(-500)}`);
  }, 30_000);
  return { child, output: () => output };
}

let helpers: ChildProcess[] = [];
afterEach(async () => {
  // The ssh client first, then sshd (whose per-connection process ends with the connection).
  for (const child of helpers.reverse()) {
    if (child.exitCode === null) child.kill('SIGTERM');
    if (child.pid !== undefined && !(await waitForExit(child.pid, 10_000))) child.kill('SIGKILL');
  }
  helpers = [];
  // No per-connection sshd left behind.
  await retry(() => expect(spawnSync('pgrep', ['-f', '^sshd: '], { encoding: 'utf8' }).stdout.trim()).toBe(''), 10_000);
});

describe('the SSH-tunnel recipe (docs/clients.md ssh-tunnel)', () => {
  const claude = agentSuite('claude');

  it('a loopback-only server on the "box", reached through `ssh -N -L` from the "laptop": claude -p sets and reads x', async () => {
    // The box: an sshd on 127.0.0.2 that admits one key, and the server as the docs' first block runs it (loopback).
    const keys = mkdtempSync(join(scratch, 'ssh-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keys, 'host')]);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keys, 'user')]);
    writeFileSync(join(keys, 'authorized_keys'), readFileSync(join(keys, 'user.pub')), { mode: 0o600 });
    const sshPort = await freePort();
    writeFileSync(
      join(keys, 'sshd_config'),
      [
        `ListenAddress ${REMOTE}:${sshPort}`,
        `HostKey ${join(keys, 'host')}`,
        `AuthorizedKeysFile ${join(keys, 'authorized_keys')}`,
        `PidFile ${join(keys, 'sshd.pid')}`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        'UsePAM no',
        'AllowTcpForwarding local',
        'PermitTTY no',
        '',
      ].join('\n'),
    );
    // The privilege-separation directory the Debian package makes at boot; a container may not have it yet.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    await helper('/usr/sbin/sshd', ['-D', '-e', '-f', join(keys, 'sshd_config')], (output) => output.includes('listening on'), 'sshd');

    const server = await startRemote(false, ['--http', '127.0.0.1:0']);
    expect(server.stderr()).not.toContain('WARNING');
    // The laptop: the docs' ssh command, its ports made free ones and `gpu-box` the sshd above.
    const localPort = await freePort();
    const block = docsBlock('ssh-tunnel');
    const [, forward = ''] = /-L (\S+)/.exec(block) ?? [];
    expect(forward).toBe(`${DOCS_PORT}:127.0.0.1:${DOCS_PORT}`);
    const words = block.replace(forward, `${localPort}:127.0.0.1:${server.port}`).trim().split(/\s+/);
    expect(words.slice(0, 2)).toEqual(['ssh', '-N']);
    expect(words.at(-1)).toBe('gpu-box');
    const sshOptions = ['-p', String(sshPort), '-i', join(keys, 'user'), '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'ExitOnForwardFailure=yes', '-v'];
    await helper('ssh', [...words.slice(1, -1), ...sshOptions, `root@${REMOTE}`], (output) => output.includes('Entering interactive session') || output.includes('pledge: network') || output.includes('forwarding_success'), 'ssh -N -L');
    const tunnelled = { ...server, port: String(localPort) };
    await addToClaudeCode(tunnelled, claude.bin(), '127.0.0.1');
    const first = await claudeRun(claude, tunnelled, SET_X, 'Set x.');
    expect(seen(first, 1)).toContain('x is set');
    const second = await claudeRun(claude, tunnelled, READ_X, 'Read x.');
    expect(seen(second, 1)).toContain('x + 1 == 42: True');
  }, TEST_TIMEOUT_MS);
});
