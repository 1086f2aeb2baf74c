/**
 * A notebook file through the Jupyter server's contents API, for a server without real-time collaboration: read the
 * saved file, write it back only if it has not changed since it was read (its `last_modified`, checked again just
 * before the write). The contents API cannot see what a person typed in JupyterLab and has not saved; JupyterLab
 * itself warns the person that the file changed on disk when they next save, so their work is not lost silently.
 */
import type { CellJson } from './notebook-cells-read.js';

/** Why the file could not be read or written. */
export class NotebookFileError extends Error {
  readonly reason: 'not_found' | 'not_a_notebook' | 'outside_root' | 'changed' | 'refused';

  constructor(reason: NotebookFileError['reason'], message: string) {
    super(message);
    this.name = 'NotebookFileError';
    this.reason = reason;
  }
}

/** The server and the notebook's path (relative to the server's root). */
export interface NotebookFileOptions {
  readonly url: string;
  readonly token: string;
  readonly path: string;
  readonly timeoutMs?: number | undefined;
}

/** A notebook file as read: its nbformat content and when it was last written. */
export interface NotebookFile {
  readonly content: { cells: CellJson[] } & Record<string, unknown>;
  readonly lastModified: string;
}

function endpoint(options: NotebookFileOptions, query: string): string {
  const path = options.path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
  return `${options.url.replace(/\/+$/, '')}/api/contents/${path}${query}`;
}

async function call(options: NotebookFileOptions, method: string, query: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  if (options.path.split('/').includes('..')) throw new NotebookFileError('outside_root', `the path ${options.path} leaves the server's root`);
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (options.token !== '') headers.Authorization = `token ${options.token}`;
  let response: Response;
  try {
    response = await fetch(endpoint(options, query), {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    throw new NotebookFileError('refused', `the Jupyter server could not be reached: ${(error as Error).message}`);
  }
  const text = await response.text().catch(() => '');
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // an HTML error page: the status says enough
  }
  if (response.status === 404) throw new NotebookFileError('not_found', `the notebook ${options.path} does not exist on the server`);
  if (response.status === 400) throw new NotebookFileError('not_a_notebook', `the server cannot read ${options.path} as a notebook: ${String(json.message ?? 'unreadable').slice(0, 300)}`);
  if (!response.ok) throw new NotebookFileError('refused', `the contents API answered HTTP ${response.status} for ${options.path}`);
  return { status: response.status, json };
}

/** Reads the notebook file. */
export async function readNotebookFile(options: NotebookFileOptions): Promise<NotebookFile> {
  const { json } = await call(options, 'GET', '?type=notebook&content=1');
  const content = json.content as NotebookFile['content'] | undefined;
  if (json.type !== 'notebook' || content === undefined || !Array.isArray(content.cells)) throw new NotebookFileError('not_a_notebook', `${options.path} is not a notebook`);
  return { content, lastModified: String(json.last_modified) };
}

/** Writes `content` to the notebook file if it is still as read at `lastModified`; otherwise nothing is written. */
export async function writeNotebookFile(options: NotebookFileOptions, content: NotebookFile['content'], lastModified: string): Promise<string> {
  const { json: now } = await call(options, 'GET', '?type=notebook&content=0');
  if (String(now.last_modified) !== lastModified) {
    throw new NotebookFileError('changed', `${options.path} changed on the server since it was read (saved at ${String(now.last_modified)}); nothing was written: read it again and redo the edit`);
  }
  const { json } = await call(options, 'PUT', '', { type: 'notebook', format: 'json', content });
  return String(json.last_modified);
}
