import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { environmentPython, managedEnvironmentDirectory, probePython } from '@ipython-mcp/worker-supervisor';

const REQUIREMENTS = ['ipython>=8.12', 'msgpack>=1.0'];

function run(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, { stdio: ['ignore', 2, 2] });
  return result.status === 0;
}

function hasUv(): boolean {
  return spawnSync('uv', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Creates (or refreshes with --upgrade) the managed worker environment: uv when it is on PATH, else venv + pip.
 * Progress goes to stderr; the environment's location is printed on stdout. Returns the exit code.
 */
export function setupCommand(basePython: string | undefined, upgrade: boolean): number {
  const directory = managedEnvironmentDirectory();
  const python = environmentPython(directory);
  const base = basePython ?? 'python3';
  const ready = existsSync(python) && probePython(python, 'import IPython, msgpack').ok;
  if (ready && !upgrade) {
    process.stdout.write(`ipython-mcp: managed Python environment is ready at ${directory}\n`);
    return 0;
  }
  mkdirSync(dirname(directory), { recursive: true });
  const uv = hasUv();
  process.stderr.write(`ipython-mcp: ${existsSync(python) ? 'refreshing' : 'creating'} ${directory} with ${uv ? 'uv' : 'venv + pip'}\n`);
  if (!existsSync(python)) {
    const created = uv ? run('uv', ['venv', '--quiet', '--python', base, directory]) : run(base, ['-m', 'venv', directory]);
    if (!created) {
      process.stderr.write(`ipython-mcp: could not create a virtual environment with ${base}; install Python 3.10+ or pass --python\n`);
      return 1;
    }
  }
  const installed = uv
    ? run('uv', ['pip', 'install', '--quiet', '--python', python, ...(upgrade ? ['--upgrade'] : []), ...REQUIREMENTS])
    : run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...(upgrade ? ['--upgrade'] : []), ...REQUIREMENTS]);
  if (!installed) {
    process.stderr.write('ipython-mcp: installing IPython into the managed environment failed (see the output above)\n');
    return 1;
  }
  process.stdout.write(`ipython-mcp: managed Python environment is ready at ${directory}\n`);
  return 0;
}
