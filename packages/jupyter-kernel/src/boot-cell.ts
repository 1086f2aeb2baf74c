/**
 * The one silent cell that brings the worker's Python package into a kernel: the sources travel inside the cell
 * (base64 of deflated JSON), are installed in memory by `ipython_mcp_worker/kernel/boot.py`, and nothing is written
 * on the kernel's machine or bound in its user namespace.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';

/** Every `*.py` under `<sourceDirectory>/ipython_mcp_worker`, keyed by its `/`-separated path from `sourceDirectory`. */
export function workerSources(sourceDirectory: string): Record<string, string> {
  const sources: Record<string, string> = {};
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(sourceDirectory, relative), { withFileTypes: true })) {
      if (entry.name === '__pycache__') continue;
      const path = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.py')) sources[path] = readFileSync(join(sourceDirectory, path), 'utf8');
    }
  };
  walk('ipython_mcp_worker');
  return Object.fromEntries(Object.entries(sources).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The boot cell's code: `exec` of boot.py in a namespace of its own, with `PAYLOAD` bound.
 *
 * @param sourceDirectory - the directory that holds `ipython_mcp_worker` (workerSourceDirectory())
 */
export function bootCellCode(sourceDirectory: string): string {
  // The sources are the installation's: read, hashed and compressed once per process, not at every kernel start.
  let code = bootCells.get(sourceDirectory);
  if (code === undefined) {
    code = buildBootCell(sourceDirectory);
    bootCells.set(sourceDirectory, code);
  }
  return code;
}

const bootCells = new Map<string, string>();

function buildBootCell(sourceDirectory: string): string {
  const sources = workerSources(sourceDirectory);
  const digest = createHash('sha256').update(JSON.stringify(sources)).digest('hex');
  const payload = deflateSync(Buffer.from(JSON.stringify({ digest, sources }), 'utf8')).toString('base64');
  const boot = readFileSync(join(sourceDirectory, 'ipython_mcp_worker', 'kernel', 'boot.py'), 'utf8');
  // A JSON string literal is a valid Python string literal.
  return `exec(compile(${JSON.stringify(boot)}, "<ipython-mcp boot>", "exec"), {"__name__": "_ipython_mcp_boot", "PAYLOAD": ${JSON.stringify(payload)}})`;
}
