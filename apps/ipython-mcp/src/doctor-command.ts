import { existsSync, statSync } from 'node:fs';
import type { Settings } from '@ipython-mcp/mcp-server';
import type { InterpreterChoice } from '@ipython-mcp/worker-supervisor';
import { probePython, workerSourceDirectory } from '@ipython-mcp/worker-supervisor';
import { startSandbox } from './sandbox.js';

/** The oldest Python and IPython the worker supports (python/pyproject.toml: requires-python, dependencies). */
const MIN_PYTHON: readonly [number, number] = [3, 10];
const MIN_IPYTHON: readonly [number, number] = [8, 12];

/** One diagnostic line. A failed optional check warns without failing the run. */
interface Check {
  ok: boolean;
  optional?: boolean;
  line: string;
}

function atLeast(version: string, minimum: readonly [number, number]): boolean {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return major > minimum[0] || (major === minimum[0] && minor >= minimum[1]);
}

/** How to point the server at a working interpreter, phrased for where this one came from. */
function interpreterHint(choice: InterpreterChoice): string {
  if (choice.source === 'managed') return 'run `ipython-mcp setup --upgrade` to repair the managed environment';
  return 'run `ipython-mcp setup` (managed environment), or point --python / IPYTHON_MCP_PYTHON at a Python that has IPython';
}

/** Whether the interpreter starts at all, and whether it can host the worker. */
interface InterpreterState {
  runs: boolean;
  usable: boolean;
}

function interpreterChecks(choice: InterpreterChoice, checks: Check[]): InterpreterState {
  const python = choice.python;
  const version = probePython(python, 'import sys; print("%d.%d.%d" % sys.version_info[:3])');
  if (!version.ok) {
    checks.push({ ok: false, line: `python: ${python} (${choice.source}) cannot run: ${version.error}. Fix: ${interpreterHint(choice)}.` });
    return { runs: false, usable: false };
  }
  const supported = atLeast(version.stdout, MIN_PYTHON);
  checks.push({
    ok: supported,
    line: supported
      ? `python: ${python} (${choice.source}), Python ${version.stdout}`
      : `python: ${python} (${choice.source}) is Python ${version.stdout}, older than ${MIN_PYTHON.join('.')}. Fix: ${interpreterHint(choice)}.`,
  });
  const ipython = probePython(python, 'import IPython; print(IPython.__version__)');
  if (!ipython.ok) {
    checks.push({
      ok: false,
      line: `ipython: not importable with ${python} (${ipython.error}). Fix: \`${python} -m pip install "ipython>=${MIN_IPYTHON.join('.')}"\`, or ${interpreterHint(choice)}.`,
    });
  } else {
    const recent = atLeast(ipython.stdout, MIN_IPYTHON);
    checks.push({
      ok: recent,
      line: recent
        ? `ipython: ${ipython.stdout}`
        : `ipython: ${ipython.stdout} is older than ${MIN_IPYTHON.join('.')}. Fix: \`${python} -m pip install -U "ipython>=${MIN_IPYTHON.join('.')}"\`.`,
    });
  }
  const msgpack = probePython(python, 'import msgpack; print(".".join(map(str, msgpack.version)))');
  checks.push({
    ok: msgpack.ok,
    optional: true,
    line: msgpack.ok
      ? `msgpack: ${msgpack.stdout} (binary IPC codec)`
      : `msgpack: not installed; the JSON codec will be used. Optional: \`${python} -m pip install msgpack\` for faster IPC.`,
  });
  return { runs: true, usable: supported && ipython.ok };
}

function workerChecks(python: string, checks: Check[]): void {
  let directory: string;
  try {
    directory = workerSourceDirectory();
  } catch (error) {
    checks.push({ ok: false, line: `worker: ${(error as Error).message}. Fix: reinstall ipython-mcp (or rebuild a source checkout).` });
    return;
  }
  const imported = probePython(python, `import sys; sys.path.insert(0, ${JSON.stringify(directory)}); import ipython_mcp_worker.worker`);
  checks.push({
    ok: imported.ok,
    line: imported.ok
      ? `worker: ${directory} imports`
      : `worker: ${directory} does not import with ${python}: ${imported.error}. Fix: use a Python ${MIN_PYTHON.join('.')}+ with IPython, or reinstall ipython-mcp.`,
  });
}

/** What the worker will do for `%pip install`: the same decision, made by the worker's own code. */
const INSTALLER_PROBE = (directory: string): string =>
  [
    'import json, subprocess, sys',
    `sys.path.insert(0, ${JSON.stringify(directory)})`,
    'from ipython_mcp_worker.shell.packages import activate_environment, in_virtual_environment, installer_command',
    'activate_environment()',
    'command = installer_command(["install"])',
    'tool = None if command is None else ("pip" if command[1:3] == ["-m", "pip"] else "uv")',
    'asked = None if tool is None else (command[:3] if tool == "pip" else command[:1]) + ["--version"]',
    'version = None if asked is None else subprocess.run(asked, capture_output=True, text=True).stdout.strip()',
    'print(json.dumps({"executable": sys.executable, "prefix": sys.prefix, "venv": in_virtual_environment(), "tool": tool, "path": None if command is None else command[0], "version": version}))',
  ].join('\n');

function packageChecks(python: string, checks: Check[]): void {
  let directory: string;
  try {
    directory = workerSourceDirectory();
  } catch {
    return; // workerChecks has said so
  }
  const probe = probePython(python, INSTALLER_PROBE(directory));
  if (!probe.ok) {
    checks.push({ ok: false, optional: true, line: `packages: could not tell how to install into ${python}: ${probe.error}` });
    return;
  }
  const found = JSON.parse(probe.stdout) as { executable: string; prefix: string; venv: boolean; tool: 'pip' | 'uv' | null; path: string | null; version: string | null };
  checks.push({ ok: true, line: `environment: ${found.prefix} (${found.venv ? 'virtual environment' : 'not a virtual environment'}; interpreter ${found.executable})` });
  if (found.tool === null) {
    checks.push({
      ok: false,
      optional: true,
      line: `packages: neither pip nor uv can install into ${found.prefix}; %pip install in a cell will say so. Fix: install uv, or \`${found.executable} -m ensurepip\`, or \`ipython-mcp setup --with PACKAGE\` for the managed environment.`,
    });
    return;
  }
  const how = found.tool === 'pip' ? 'its pip' : `uv (${found.path ?? 'uv'}, this environment has no pip)`;
  checks.push({ ok: true, line: `packages: %pip install works, through ${how}: ${(found.version ?? '').split('\n')[0]}` });
}

function libraryChecks(python: string | undefined, settings: Settings, checks: Check[]): void {
  for (const path of settings.libraryPaths) {
    const ok = existsSync(path) && statSync(path).isDirectory();
    checks.push({ ok, line: ok ? `library path: ${path}` : `library path: ${path} is not a directory. Fix: correct IPYTHON_MCP_LIBRARY_PATHS (or --library-paths).` });
  }
  if (python === undefined) return;
  const modules = [...new Set([...settings.preloadModules, ...Object.keys(settings.moduleAliases)])];
  for (const module of modules) {
    // A fresh process per module, with the configured paths first, as the worker will see them.
    const code = `import sys, importlib; sys.path[:0] = ${JSON.stringify(settings.libraryPaths)}; importlib.import_module(${JSON.stringify(module)})`;
    const imported = probePython(python, code);
    checks.push({
      ok: imported.ok,
      line: imported.ok
        ? `preload: ${module} imports`
        : `preload: ${module} fails in a clean process: ${imported.error}. Fix: install it into ${python}, or correct IPYTHON_MCP_PRELOAD_MODULES / IPYTHON_MCP_MODULE_ALIASES / IPYTHON_MCP_LIBRARY_PATHS.`,
    });
  }
}

/**
 * Whether the opt-in sandbox can run here: the engine is started with the default policy and runs a test command
 * inside. Optional (a warning) unless the sandbox was asked for, when the server would refuse to start without it.
 */
async function sandboxCheck(required: boolean, checks: Check[]): Promise<void> {
  try {
    const sandbox = await startSandbox({ enabled: true, allowDomains: [], write: [], denyRead: [] }, { cwd: process.cwd(), runtimeDirectories: [] });
    await sandbox.close();
    checks.push({ ok: true, line: `sandbox: --sandbox can run here (${sandbox.status.engine})` });
  } catch (error) {
    const message = (error as Error).message.split('\n')[0] ?? '';
    checks.push({ ok: false, optional: !required, line: `sandbox: ${message.replace(/^--sandbox was asked for, but /, '')}` });
  }
}

/**
 * Checks the worker interpreter, IPython, msgpack (optional), the worker's own source, how packages can be installed
 * into its environment (pip or uv; optional), library paths, preload imports and whether the opt-in sandbox can run
 * (required when `sandboxRequired`). Prints one line per check (a failing line carries a `Fix:` hint) and returns
 * the exit code: 0 when every required check passes, 1 otherwise.
 */
export async function doctorCommand(choice: InterpreterChoice, settings: Settings, sandboxRequired = false): Promise<number> {
  const checks: Check[] = [];
  const interpreter = interpreterChecks(choice, checks);
  if (interpreter.usable) {
    workerChecks(choice.python, checks);
    packageChecks(choice.python, checks);
  }
  libraryChecks(interpreter.runs ? choice.python : undefined, settings, checks);
  await sandboxCheck(sandboxRequired, checks);
  for (const check of checks) process.stdout.write(`${check.ok ? 'ok  ' : check.optional ? 'warn' : 'FAIL'} ${check.line}\n`);
  const failed = checks.filter((check) => !check.ok && !check.optional).length;
  process.stdout.write(failed === 0 ? 'doctor: all required checks passed\n' : `doctor: ${failed} check(s) failed\n`);
  return failed === 0 ? 0 : 1;
}
