import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** Where `ipython-mcp setup` keeps the managed Python environment. */
export function managedEnvironmentDirectory(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.IPYTHON_MCP_HOME) return join(env.IPYTHON_MCP_HOME, 'venv');
  const dataHome = env.XDG_DATA_HOME && env.XDG_DATA_HOME.length > 0 ? env.XDG_DATA_HOME : join(homedir(), '.local', 'share');
  return join(dataHome, 'ipython-mcp', 'venv');
}

/**
 * The IPYTHONDIR workers get: `ipython` beside the managed environment (`$IPYTHON_MCP_HOME/ipython`, default
 * `~/.local/share/ipython-mcp/ipython`), so the worker never writes into the user's own IPython profile and one
 * `rm -rf` of ipython-mcp's home removes everything it made.
 */
export function workerIpythonDirectory(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return join(dirname(managedEnvironmentDirectory(env)), 'ipython');
}

/** The interpreter inside a virtual environment directory. */
export function environmentPython(directory: string): string {
  return process.platform === 'win32' ? join(directory, 'Scripts', 'python.exe') : join(directory, 'bin', 'python');
}

/** How the interpreter was chosen, for doctor and the ready banner. */
export interface InterpreterChoice {
  python: string;
  source: 'flag' | 'env' | 'managed' | 'path';
}

/**
 * Picks the worker's Python: `--python`, then `IPYTHON_MCP_PYTHON`, then the managed environment made by
 * `ipython-mcp setup`, then `python3` on PATH.
 */
export function chooseInterpreter(flag: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): InterpreterChoice {
  if (flag) return { python: flag, source: 'flag' };
  if (env.IPYTHON_MCP_PYTHON) return { python: env.IPYTHON_MCP_PYTHON, source: 'env' };
  const managed = environmentPython(managedEnvironmentDirectory(env));
  if (existsSync(managed)) return { python: managed, source: 'managed' };
  return { python: process.platform === 'win32' ? 'python' : 'python3', source: 'path' };
}

/** Runs a short Python snippet and returns its stdout, or an error line. */
export function probePython(python: string, code: string, timeoutMs = 20_000): { ok: true; stdout: string } | { ok: false; error: string } {
  const result = spawnSync(python, ['-c', code], { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error) {
    const code = (result.error as NodeJS.ErrnoException).code;
    return { ok: false, error: code === 'ENOENT' ? `not found: ${python}` : result.error.message };
  }
  if (result.status !== 0) {
    const tail = (result.stderr || '').trim().split('\n').slice(-1)[0] ?? '';
    return { ok: false, error: tail || `exit code ${String(result.status)}` };
  }
  return { ok: true, stdout: result.stdout.trim() };
}
