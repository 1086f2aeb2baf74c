// The opt-in sandbox: the worker's launch wrapped in @anthropic-ai/sandbox-runtime (bubblewrap on Linux, Seatbelt on
// macOS). This module only turns a SandboxRequest into that engine's policy and a WorkerLaunch; the isolation is
// the engine's. The engine is imported lazily, so a server without --sandbox does not load it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SandboxStatus } from '@ipython-mcp/mcp-server';
import type { LaunchCommand, WorkerLaunch } from '@ipython-mcp/worker-supervisor';
import type { SandboxRequest } from './sandbox-request.js';

const ENGINE_PACKAGE = '@anthropic-ai/sandbox-runtime';

/**
 * Credential places the worker may never read, relative to the home directory. A list to extend: a feature that
 * keeps a secret on disk (e.g. an HTTP transport's token file) adds its path through `extraDenyRead`.
 */
export const CREDENTIAL_PATHS: readonly string[] = Object.freeze([
  '.ssh',
  '.aws',
  '.config/gcloud',
  '.azure',
  '.docker/config.json',
  '.netrc',
  '.git-credentials',
]);

/** What each engine error means a person should do (matched on the engine's own wording). */
const FIXES: ReadonlyArray<[RegExp, string]> = [
  [/bubblewrap|bwrap/i, 'install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`)'],
  [/socat/i, 'install socat (`apt-get install socat`)'],
  [/ripgrep|\brg\b/i, 'install ripgrep (`apt-get install ripgrep`)'],
  [/unsupported platform/i, 'the sandbox runs on Linux (bubblewrap) and macOS (Seatbelt) only; run without --sandbox or on one of those'],
];

/** A sandbox that is running: the launch wrapper for the runtime, what runtime_status says, and its clean-up. */
export interface RunningSandbox {
  launch: WorkerLaunch;
  status: SandboxStatus;
  /** The worker's temporary directory (TMPDIR inside): writable by it, removed on close and after a SIGKILL. */
  temporaryDirectory: string;
  /** Stops the engine's proxies and removes the worker's temporary directory. */
  close(): Promise<void>;
}

/** Where the sandbox lets the worker write and what it may not read, for a server in `cwd`. */
export interface SandboxPaths {
  cwd: string;
  /** The server's runtime files the worker writes (IPython's directory: history, profile). */
  runtimeDirectories: readonly string[];
  /** Further paths no cell may read (secrets of other features). */
  extraDenyRead?: readonly string[] | undefined;
}

type Engine = typeof import('@anthropic-ai/sandbox-runtime');

async function loadEngine(): Promise<Engine> {
  return import(ENGINE_PACKAGE) as Promise<Engine>;
}

function engineVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    return (require(`${ENGINE_PACKAGE}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function engineName(): string {
  const os = process.platform === 'darwin' ? 'Seatbelt' : process.platform === 'linux' ? 'bubblewrap' : process.platform;
  return `${ENGINE_PACKAGE} ${engineVersion()} (${os})`;
}

/** One line naming what is missing and how to add it. */
function problemLine(errors: readonly string[]): string {
  const fixes = errors.map((error) => FIXES.find(([pattern]) => pattern.test(error))?.[1]).filter((fix): fix is string => fix !== undefined);
  const fix = fixes.length > 0 ? [...new Set(fixes)].join('; ') : 'see docs/sandbox.md';
  return `--sandbox was asked for, but the sandbox engine cannot run here: ${errors.join('; ')}. Fix: ${fix}; or run without --sandbox.`;
}

/**
 * Why the engine cannot run here, as one line, or undefined when it can. Beyond the engine's own dependency check
 * it runs `true` inside the sandbox once, which is what catches a kernel without unprivileged user namespaces.
 */
export async function sandboxProblem(): Promise<string | undefined> {
  let engine: Engine;
  try {
    engine = await loadEngine();
  } catch (error) {
    return problemLine([`${ENGINE_PACKAGE} cannot be loaded (${(error as Error).message.split('\n')[0]})`]);
  }
  const manager = engine.SandboxManager;
  if (!manager.isSupportedPlatform()) return problemLine(['unsupported platform']);
  const check = manager.checkDependencies();
  if (check.errors.length > 0) return problemLine(check.errors);
  return undefined;
}

/** The server's own child processes now (Linux; empty elsewhere). */
function ownChildren(): Set<number> {
  try {
    return new Set(readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return new Set();
  }
}

/**
 * The engine starts helpers on the host (socat bridges to its proxies) and ends them when it is reset, which a
 * SIGKILLed server never does. A small watchdog reads its stdin, a pipe from this process: at end of file (the
 * server is gone, however it died) it SIGKILLs those helpers. The orphaned helpers still hold their pids then, so
 * the kill reaches only them. It also removes the worker's temporary directory and the engine's socket files. A
 * graceful close ends the watchdog first and cleans up itself.
 */
function helperWatchdog(helpers: readonly number[], leftovers: readonly string[]): ChildProcess | undefined {
  const kill = helpers.length > 0 ? `kill -9 ${helpers.join(' ')} 2>/dev/null; ` : '';
  const remove = leftovers.length > 0 ? `rm -rf -- ${leftovers.map(quoteShell).join(' ')}` : ':';
  const watchdog = spawn('/bin/sh', ['-c', `read _ignored; ${kill}${remove}`], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  watchdog.on('error', () => undefined);
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return watchdog;
}

function quoteShell(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Env var that carries the worker's command through the engine's shell layers to the trampoline. */
const COMMAND_VARIABLE = 'IPYTHON_MCP_SANDBOXED_COMMAND';

/**
 * Starts the engine (its proxies) with the policy for `request` and returns the worker's launch wrapper. Throws an
 * Error whose message is one line naming what is missing when the engine cannot run: the caller exits with code 2
 * and starts no worker.
 */
export async function startSandbox(request: SandboxRequest, paths: SandboxPaths): Promise<RunningSandbox> {
  const problem = await sandboxProblem();
  if (problem !== undefined) throw new Error(problem);
  const engine = await loadEngine();
  const manager = engine.SandboxManager;
  const home = homedir();
  // The worker's own temporary directory: TMPDIR inside, removed when the server closes.
  const temporary = mkdtempSync(join(tmpdir(), 'ipython-mcp-sandbox-'));
  const writes = [resolve(paths.cwd), temporary, ...paths.runtimeDirectories, ...request.write.map((directory) => resolve(paths.cwd, directory))];
  const denyRead = [...CREDENTIAL_PATHS.map((path) => join(home, path)), ...(paths.extraDenyRead ?? []), ...request.denyRead.map((path) => resolve(paths.cwd, path))];
  const childrenBefore = ownChildren();
  let watchdog: ChildProcess | undefined;
  try {
    await manager.initialize({
      network: { allowedDomains: [...request.allowDomains], deniedDomains: [] },
      filesystem: { denyRead, allowWrite: writes, denyWrite: [] },
    });
    const sockets = [manager.getLinuxHttpSocketPath(), manager.getLinuxSocksSocketPath()].filter((path): path is string => typeof path === 'string');
    watchdog = helperWatchdog([...ownChildren()].filter((pid) => !childrenBefore.has(pid)), [temporary, ...sockets]);
    // The worker's command is fixed per server, but a launch wrapper must be synchronous (replacements are spawned on
    // the hot path): the engine wraps a trampoline once, and each launch hands it the real command in the environment,
    // which the engine passes through.
    const wrapped = await manager.wrapWithSandboxArgv(`eval "$${COMMAND_VARIABLE}"`);
    const [file, ...args] = wrapped.argv;
    if (file === undefined) throw new Error('the sandbox engine returned an empty command');
    const probe = spawnSync(file, args, { env: { ...wrapped.env, [COMMAND_VARIABLE]: 'exit 0' }, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
    if (probe.status !== 0) {
      const reason = probe.stderr?.toString('utf8').trim().split('\n').slice(-1)[0]?.slice(0, 300) || `exit ${String(probe.status ?? probe.signal)}`;
      throw new Error(problemLine([`a test command failed inside the sandbox (${reason}); unprivileged user namespaces may be off (sysctl kernel.unprivileged_userns_clone=1)`]));
    }
    const launch: WorkerLaunch = (command: LaunchCommand): LaunchCommand => ({
      file,
      args,
      // bubblewrap and the engine's shells exit with 128 + N when the worker dies by signal N.
      signalsAsExitCodes: true,
      env: {
        ...wrapped.env,
        ...command.env,
        [COMMAND_VARIABLE]: `TMPDIR=${quoteShell(temporary)} exec ${[command.file, ...command.args].map(quoteShell).join(' ')}`,
      },
    });
    return {
      launch,
      temporaryDirectory: temporary,
      status: { engine: engineName(), network: request.allowDomains.length > 0 ? [...request.allowDomains] : 'none', writes },
      close: async () => {
        watchdog?.kill('SIGKILL');
        await manager.reset().catch(() => undefined);
        rmSync(temporary, { recursive: true, force: true });
      },
    };
  } catch (error) {
    watchdog?.kill('SIGKILL');
    await manager.reset().catch(() => undefined);
    rmSync(temporary, { recursive: true, force: true });
    throw error;
  }
}
