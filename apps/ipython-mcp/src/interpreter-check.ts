import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, sep } from 'node:path';
import { probePython, type InterpreterChoice } from '@ipython-mcp/worker-supervisor';

/**
 * A configured interpreter (`--python` or `IPYTHON_MCP_PYTHON`) that cannot even be started is a configuration
 * error, like a bad number: the one line naming the setting and the fix, or undefined when it can be started.
 * Whether it has IPython is the worker's start-up to find out (and doctor's).
 */
export function interpreterProblem(choice: InterpreterChoice, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (choice.source !== 'flag' && choice.source !== 'env') return undefined;
  const setting = choice.source === 'flag' ? `--python ${choice.python}` : `IPYTHON_MCP_PYTHON=${choice.python}`;
  const fix =
    'Fix: point IPYTHON_MCP_PYTHON (or --python) at a Python 3.10+ that has IPython (e.g. ~/project/.venv/bin/python), ' +
    'or unset it to use the managed environment (`ipython-mcp setup`)';
  const looksLikePath = isAbsolute(choice.python) || choice.python.includes('/') || choice.python.includes(sep);
  const path = looksLikePath ? choice.python : onPath(choice.python, env.PATH ?? '');
  if (path === undefined) return `${setting}: no such command on PATH. ${fix}`;
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return `${setting} does not exist. ${fix}`;
  }
  if (!isFile || !isExecutable(path)) return `${setting} is not an executable file. ${fix}`;
  return undefined;
}

function isExecutable(path: string): boolean {
  if (process.platform === 'win32') return true;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string, path: string): string | undefined {
  const extensions = process.platform === 'win32' ? ['', '.exe', '.cmd'] : [''];
  for (const directory of path.split(delimiter)) {
    if (directory.length === 0) continue;
    for (const extension of extensions) {
      const candidate = join(directory, command + extension);
      try {
        if (statSync(candidate).isFile() && isExecutable(candidate)) return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

const HAS_DILL_PROBE = 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("dill") else 1)';

/**
 * `--state` writes its snapshots with dill: an interpreter without it is a configuration error found before the
 * server starts (one line with the fix), never a snapshot silently not taken. Undefined when it has dill. Looks
 * the package up without importing it, so the check costs one interpreter start.
 */
export function stateDependencyProblem(python: string, stateFile: string | null): string | undefined {
  if (stateFile === null) return undefined;
  if (probePython(python, HAS_DILL_PROBE).ok) return undefined;
  return `--state (IPYTHON_MCP_STATE_FILE) needs the dill package in ${python}: run \`${python} -m pip install dill\`, or \`ipython-mcp setup\` to refresh the managed environment`;
}
