import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The directory that holds the `ipython_mcp_worker` package: `dist/python` next to the built JS (copied at
 * build time), or the repository's `python/` folder when running from source.
 */
export function workerSourceDirectory(): string {
  const candidates = [join(here, 'python'), resolve(here, '..', 'dist', 'python'), resolve(here, '..', '..', '..', 'python')];
  for (const candidate of candidates) {
    if (existsSync(join(candidate, 'ipython_mcp_worker', 'worker.py'))) return candidate;
  }
  throw new Error('the ipython_mcp_worker Python package is missing from this installation');
}

/**
 * The `python -c` program that starts a worker. It first guards its process group (dies with the parent; a
 * watchdog kills whatever user code starts once the worker is gone), before the slow IPython import, so that the
 * watchdog is forked from a small process. It exits with code 4 when IPython cannot be imported, so the parent can
 * say exactly that.
 */
export function workerBootstrapCode(sourceDirectory: string = workerSourceDirectory()): string {
  return [
    'import os, sys',
    `sys.path.insert(0, ${JSON.stringify(sourceDirectory)})`,
    'from ipython_mcp_worker.ipc.lifeline import guard',
    'guard()',
    'try:',
    '    import IPython',
    'except ImportError as error:',
    '    sys.stderr.write("ipython-mcp worker: cannot import IPython: %s\\n" % error)',
    '    os._exit(4)',
    'from ipython_mcp_worker.worker import main',
    'os._exit(main())',
  ].join('\n');
}
