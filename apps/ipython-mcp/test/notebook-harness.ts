// Helpers of the notebook suites (the agent's cells, the notebook tool): a person's notebook written into a Jupyter
// server's root, its session opened as JupyterLab opens it, and the saved file read back through the contents API.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RunningJupyter } from './jupyter-harness.js';

/** Writes an nbformat 4.5 notebook of `cells` (python3 kernelspec) at `path` under the server's root. */
export function writeNotebookCells(server: RunningJupyter, path: string, cells: ReadonlyArray<Record<string, unknown>>): void {
  writeFileSync(
    join(server.rootDir, path),
    JSON.stringify({ cells, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } }, nbformat: 4, nbformat_minor: 5 }),
  );
}

/** Opens the notebook's session (a python3 kernel), as JupyterLab does when the person opens it; the kernel's id. */
export async function openNotebookSession(server: RunningJupyter, path: string): Promise<string> {
  const session = await server.rest('POST', 'api/sessions', { path, type: 'notebook', name: '', kernel: { name: 'python3' } });
  expect(session.status).toBe(201);
  return (session.body as { kernel: { id: string } }).kernel.id;
}

/** The cells of the saved file, through the contents API. */
export async function savedCells(server: RunningJupyter, path: string): Promise<Array<Record<string, any>>> {
  const saved = await server.rest('GET', `api/contents/${path}?content=1`);
  return ((saved.body as { content?: { cells?: Array<Record<string, any>> } }).content?.cells ?? []) as Array<Record<string, any>>;
}

/** A cell's source or a stream's text, whether stored as one string or a list of lines. */
export function cellText(value: unknown): string {
  return Array.isArray(value) ? value.join('') : String(value ?? '');
}

/**
 * Runs `check` on the saved file's cells until it passes or `ms` have gone by. The file is read every 500 ms, not
 * faster: each read makes the server parse and validate the notebook, and a tighter loop on a loaded machine starves
 * the very save it waits for.
 */
export async function savedEventually(server: RunningJupyter, path: string, check: (cells: Array<Record<string, any>>) => void, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      check(await savedCells(server, path));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
