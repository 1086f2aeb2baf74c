import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { environmentPython, managedEnvironmentDirectory, probePython } from '@ipython-mcp/worker-supervisor';

/** What the worker needs (python/pyproject.toml: `ipython>=8.12`, extras `msgpack` and `state`, i.e. dill for `--state`). */
const REQUIREMENTS = ['ipython>=8.12', 'msgpack>=1.0', 'dill>=0.3.8'];
// dill is probed too: an environment an older setup made without it is refreshed, so `--state` works after `setup`.
const VERSIONS_PROBE = 'import IPython, msgpack, dill; print(IPython.__version__, ".".join(map(str, msgpack.version)), dill.__version__)';
const HAS_PIP_PROBE = 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("pip") else 1)';

/** Runs a command with its output on our stderr (stdout is kept for the one result line). */
function run(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, { stdio: ['ignore', 2, 2] });
  return result.status === 0;
}

function hasUv(): boolean {
  return spawnSync('uv', ['--version'], { stdio: 'ignore' }).status === 0;
}

function progress(message: string): void {
  process.stderr.write(`ipython-mcp: ${message}\n`);
}

/** How packages get into the environment: uv when it is on PATH (fast), else the environment's own pip. */
type Installer = 'uv' | 'pip';

/**
 * Installs `packages` into the environment of `python`, showing the installer's own progress on stderr (a pip
 * install takes 10-15 s): pip's progress bars on a terminal, plain lines when stderr is not one.
 */
function install(installer: Installer, python: string, packages: string[], options: { upgrade: boolean }): boolean {
  const flags = options.upgrade ? ['--upgrade'] : [];
  if (installer === 'uv') return run('uv', ['pip', 'install', '--python', python, ...flags, ...packages]);
  const progressBar = process.stderr.isTTY ? [] : ['--progress-bar', 'off'];
  return run(python, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...progressBar, ...flags, ...packages]);
}

function readyLine(directory: string, python: string, versions: string, added: string[]): string {
  const extra = added.length > 0 ? `; added: ${added.join(', ')}` : '';
  return `ipython-mcp: managed Python environment is ready at ${directory} (python: ${python}; IPython, msgpack, dill: ${versions}${extra})\n`;
}

/** Adds `--with` packages to an environment that is already ready. */
function addPackages(directory: string, python: string, packages: string[], upgrade: boolean): number {
  const installer: Installer | undefined = hasUv() ? 'uv' : probePython(python, HAS_PIP_PROBE).ok ? 'pip' : undefined;
  if (installer === undefined) {
    progress(`${python} has no pip and uv is not on PATH: install uv, or rebuild the environment with \`ipython-mcp setup --upgrade\``);
    return 1;
  }
  progress(`installing ${packages.join(', ')} into ${directory} with ${installer}`);
  if (!install(installer, python, packages, { upgrade })) {
    progress(`installing ${packages.join(', ')} failed (see the output above); check the package names and network access to PyPI`);
    return 1;
  }
  return 0;
}

/**
 * Creates (or, with `upgrade`, refreshes) the managed worker environment at `$IPYTHON_MCP_HOME/venv` (default
 * `~/.local/share/ipython-mcp/venv`): uv when it is on PATH, else `python -m venv` + pip. A venv whose
 * interpreter no longer runs is rebuilt. `withPackages` (requirements or wheel paths) are installed too, also into
 * an environment that is already ready. Progress goes to stderr; stdout gets one line naming the environment.
 * Returns the exit code.
 */
export function setupCommand(basePython: string | undefined, upgrade: boolean, withPackages: string[] = []): number {
  const directory = managedEnvironmentDirectory();
  const python = environmentPython(directory);
  const base = basePython || (process.platform === 'win32' ? 'python' : 'python3');
  const installed = existsSync(python) ? probePython(python, VERSIONS_PROBE) : undefined;
  if (installed?.ok && !upgrade) {
    const code = withPackages.length > 0 ? addPackages(directory, python, withPackages, false) : 0;
    if (code === 0) process.stdout.write(readyLine(directory, python, installed.stdout, withPackages));
    return code;
  }
  if (existsSync(python) && !probePython(python, 'pass').ok && existsSync(join(directory, 'pyvenv.cfg'))) {
    // The interpreter it was made from is gone (a removed Python, a moved home): start over.
    progress(`${python} no longer runs; rebuilding ${directory}`);
    rmSync(directory, { recursive: true, force: true });
  }
  mkdirSync(dirname(directory), { recursive: true });
  const uv = hasUv();
  const packages = [...REQUIREMENTS, ...withPackages];
  progress(`${existsSync(python) ? 'refreshing' : 'creating'} ${directory} with ${uv ? 'uv' : 'venv + pip'} (installs ${packages.join(', ')} from PyPI)`);
  if (!existsSync(python)) {
    // `--seed` puts pip into the uv environment too: agents type `!pip install x` and `python -m pip`, which
    // must reach this environment rather than another pip further down PATH.
    progress(`creating the virtual environment`);
    const created = uv ? run('uv', ['venv', '--quiet', '--seed', '--python', base, directory]) : run(base, ['-m', 'venv', directory]);
    if (!created) {
      progress(`could not create a virtual environment with ${base}; install Python 3.10+ (with its venv module) or pass --python PATH`);
      return 1;
    }
  }
  // An environment an older setup made with uv has no pip yet: give it one, as `--seed` does for new ones.
  if (uv && !probePython(python, HAS_PIP_PROBE).ok) packages.push('pip');
  progress(`installing ${packages.join(', ')} (the installer's progress follows)`);
  const ok = install(uv ? 'uv' : 'pip', python, packages, { upgrade });
  const versions = ok ? probePython(python, VERSIONS_PROBE) : undefined;
  if (!versions?.ok) {
    progress(`installing ${packages.join(', ')} into the managed environment failed (see the output above); check the package names and network access to PyPI, and retry`);
    return 1;
  }
  process.stdout.write(readyLine(directory, python, versions.stdout, withPackages));
  return 0;
}
