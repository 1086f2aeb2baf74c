import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { environmentPython, managedEnvironmentDirectory, probePython } from '@ipython-mcp/worker-supervisor';

/** What the worker needs (python/pyproject.toml: `ipython>=8.12`, extra `msgpack`). */
const REQUIREMENTS = ['ipython>=8.12', 'msgpack>=1.0'];
const VERSIONS_PROBE = 'import IPython, msgpack; print(IPython.__version__, ".".join(map(str, msgpack.version)))';

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

/**
 * Creates (or, with `upgrade`, refreshes) the managed worker environment at `$IPYTHON_MCP_HOME/venv` (default
 * `~/.local/share/ipython-mcp/venv`): uv when it is on PATH, else `python -m venv` + pip. A venv whose
 * interpreter no longer runs is rebuilt. Progress goes to stderr; stdout gets one line naming the environment.
 * Returns the exit code.
 */
export function setupCommand(basePython: string | undefined, upgrade: boolean): number {
  const directory = managedEnvironmentDirectory();
  const python = environmentPython(directory);
  const base = basePython || (process.platform === 'win32' ? 'python' : 'python3');
  const installed = existsSync(python) ? probePython(python, VERSIONS_PROBE) : undefined;
  if (installed?.ok && !upgrade) {
    process.stdout.write(`ipython-mcp: managed Python environment is ready at ${directory} (python: ${python}; IPython, msgpack: ${installed.stdout})\n`);
    return 0;
  }
  if (existsSync(python) && !probePython(python, 'pass').ok && existsSync(join(directory, 'pyvenv.cfg'))) {
    // The interpreter it was made from is gone (a removed Python, a moved home): start over.
    progress(`${python} no longer runs; rebuilding ${directory}`);
    rmSync(directory, { recursive: true, force: true });
  }
  mkdirSync(dirname(directory), { recursive: true });
  const uv = hasUv();
  progress(`${existsSync(python) ? 'refreshing' : 'creating'} ${directory} with ${uv ? 'uv' : 'venv + pip'} (installs ${REQUIREMENTS.join(', ')} from PyPI)`);
  if (!existsSync(python)) {
    const created = uv ? run('uv', ['venv', '--quiet', '--python', base, directory]) : run(base, ['-m', 'venv', directory]);
    if (!created) {
      progress(`could not create a virtual environment with ${base}; install Python 3.10+ (with its venv module) or pass --python PATH`);
      return 1;
    }
  }
  const upgradeFlag = upgrade ? ['--upgrade'] : [];
  const ok = uv
    ? run('uv', ['pip', 'install', '--quiet', '--python', python, ...upgradeFlag, ...REQUIREMENTS])
    : run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...upgradeFlag, ...REQUIREMENTS]);
  const versions = ok ? probePython(python, VERSIONS_PROBE) : undefined;
  if (!versions?.ok) {
    progress('installing IPython into the managed environment failed (see the output above); check network access to PyPI and retry');
    return 1;
  }
  process.stdout.write(`ipython-mcp: managed Python environment is ready at ${directory} (python: ${python}; IPython, msgpack: ${versions.stdout})\n`);
  return 0;
}
