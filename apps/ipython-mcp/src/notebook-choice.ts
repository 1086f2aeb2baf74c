// Choosing the notebook from the conversation (`--jupyter URL` alone): the notebook tool's `list` and `open`. Until a
// notebook is open the namespace lives in a kernel ipython-mcp started (the server's default kernelspec, as
// --kernel-name does). `open` moves the runtime to the notebook's kernel (Runtime.switchBackend: a new namespace, the
// epoch advances), and the notebook's mirror and actions become the current ones: execute's cells land in it, and
// read/edit/run act on it. The kernel left behind is shut down when ipython-mcp started it (the first kernel, or a
// notebook session `open` started that no other client has joined), and left running otherwise (the person's, or
// one someone joined). One notebook is current at a time.
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { NotebookToolError, notebookTools, type DocumentResources, type NotebookActions } from '@ipython-mcp/mcp-server';
import type { JupyterBackend } from '@ipython-mcp/jupyter-kernel';
import type { JupyterKernelTarget, KernelCellObserver } from '@ipython-mcp/jupyter-kernel';
import type { Logger, Runtime, WorkerHandle } from '@ipython-mcp/worker-supervisor';
import type { JupyterRequest } from './jupyter-request.js';
import { NOTEBOOK_RESOURCE_URI, notebookDocuments, type NotebookDocuments } from './notebook-documents.js';

/** How far `list` walks the server's directories: levels below the root, directories read, notebooks listed. */
export const LIST_DEPTH = 4;
export const LIST_DIRECTORIES = 100;
export const LIST_NOTEBOOKS = 200;

/** How long one contents or sessions request may take. */
const REST_TIMEOUT_MS = 10_000;

/** How long a session `open` started is watched, once left, for its last connection (ours) to close. */
const LEAVE_WAIT_MS = 3_000;

/** Makes a backend for a kernel of the server, with the notebook's observer of the agent's cells (if any). */
export type BackendMaker = (target: JupyterKernelTarget, cells?: () => KernelCellObserver) => JupyterBackend;

/** The namespace's backend while the notebook is chosen in the conversation. */
export interface NotebookChoice {
  /** The first backend: a kernel ipython-mcp starts (the server's default kernelspec). */
  readonly backend: JupyterBackend;
  status(workers: { active: WorkerHandle | undefined; standby: WorkerHandle | undefined }): Record<string, unknown>;
  readonly documents: DocumentResources;
  /** Closes the current notebook's mirror and the backends (shuts down the kernel ipython-mcp started). */
  close(): Promise<void>;
}

/** An open notebook: its path, its kernel's backend, and its documents. */
interface OpenNotebook {
  path: string;
  backend: JupyterBackend;
  notebook: NotebookDocuments;
  /** Whether `open` started the notebook's session (it had no kernel): shut down when left, unless someone joined. */
  startedHere: boolean;
}

/** A notebook session of the server, as /api/sessions lists it. */
interface SessionModel {
  path?: string;
  type?: string;
  kernel?: { id?: string; name?: string; execution_state?: string } | null;
}

/** `path` relative to the server's root, or why it is refused (nothing is asked of the server for it). */
function rootPath(path: string): string {
  const relative = path.trim().replace(/^\/+/, '');
  if (relative === '' || relative.split(/[/\\]/).some((part) => part === '..')) {
    throw new NotebookToolError('invalid_arguments', `the path ${JSON.stringify(path)} is outside the Jupyter server's root: give a path relative to it (list shows them)`, { reason: 'outside_root' });
  }
  return relative;
}

export function notebookChoice(request: JupyterRequest, logger: Logger, make: BackendMaker): NotebookChoice {
  const first = make({ kernelName: '' });
  let current: OpenNotebook | undefined;
  let runtime: Runtime | undefined;
  let clientName: string | undefined;
  /** The open under way: opens run one at a time. */
  let opening: Promise<unknown> = Promise.resolve();
  let closed = false;
  let closing: Promise<void> | undefined;
  /** Runs of the notebook's cells under way: an open waits for them, so a run's cells all go to one kernel. */
  let runs = 0;
  let runsDone: Array<() => void> = [];
  const base = request.url.replace(/\/+$/, '');

  const rest = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (request.token !== '') headers.Authorization = `token ${request.token}`;
    let response: Response;
    try {
      response = await fetch(`${base}/${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal: AbortSignal.timeout(REST_TIMEOUT_MS) });
    } catch (error) {
      throw new NotebookToolError('runtime_unavailable', `the Jupyter server at ${base} could not be reached: ${(error as Error).message}; nothing was changed`, { reason: 'refused' });
    }
    if (response.status === 401 || response.status === 403) {
      throw new NotebookToolError('runtime_unavailable', `the Jupyter server at ${base} refused the token (HTTP ${response.status}); nothing was changed`, { reason: 'unauthorized' });
    }
    const text = await response.text().catch(() => '');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  };
  const encoded = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

  const sessions = async (): Promise<Map<string, NonNullable<SessionModel['kernel']>>> => {
    const answer = await rest('GET', 'api/sessions');
    const byPath = new Map<string, NonNullable<SessionModel['kernel']>>();
    if (answer.status !== 200 || !Array.isArray(answer.json)) return byPath;
    for (const session of answer.json as SessionModel[]) {
      if (typeof session.path === 'string' && session.kernel != null) byPath.set(session.path.replace(/^\/+/, ''), session.kernel);
    }
    return byPath;
  };

  const noNotebook = (): never => {
    throw new NotebookToolError('invalid_arguments', 'no notebook is open: notebook list shows the server\'s notebooks, notebook open {path} makes one current', { reason: 'no_notebook' });
  };
  const now = (): NotebookActions => current?.notebook.actions ?? noNotebook();

  const list = async (): Promise<string> => {
    const running = await sessions();
    const found: string[] = [];
    const queue: Array<{ path: string; depth: number }> = [{ path: '', depth: 0 }];
    let read = 0;
    let cut = false;
    while (queue.length > 0) {
      const { path, depth } = queue.shift()!;
      if (read >= LIST_DIRECTORIES) {
        cut = true;
        break;
      }
      read += 1;
      const answer = await rest('GET', `api/contents/${encoded(path)}?content=1`);
      if (answer.status !== 200) {
        if (path === '') throw new NotebookToolError('runtime_unavailable', `the Jupyter server at ${base} did not list its root (HTTP ${answer.status}): it may not serve contents (a Kernel Gateway does not)`, { reason: 'refused' });
        continue;
      }
      const entries = ((answer.json as { content?: unknown }).content ?? []) as Array<{ path?: string; type?: string }>;
      for (const entry of [...entries].sort((a, b) => String(a.path).localeCompare(String(b.path)))) {
        if (typeof entry.path !== 'string') continue;
        if (entry.type === 'notebook') {
          if (found.length >= LIST_NOTEBOOKS) cut = true;
          else found.push(entry.path);
        } else if (entry.type === 'directory') {
          if (depth + 1 <= LIST_DEPTH) queue.push({ path: entry.path, depth: depth + 1 });
          else cut = true;
        }
      }
    }
    // A notebook with a running kernel deeper than the walk went is listed too.
    for (const path of running.keys()) if (!found.includes(path) && path.endsWith('.ipynb')) found.push(path);
    const lines = found.map((path) => {
      const kernel = running.get(path);
      const kernelText = kernel === undefined ? 'no kernel' : `kernel ${kernel.name ?? '?'} ${kernel.execution_state ?? 'unknown'} (id ${kernel.id ?? '?'})`;
      return `- ${path} · ${kernelText}${current?.path === path ? ' · current' : ''}`;
    });
    const head = `${found.length} notebook${found.length === 1 ? '' : 's'} on ${base} (${running.size} with a running kernel); current: ${current?.path ?? 'none (execute runs in a kernel of its own)'}`;
    const tail = cut ? [`[not all listed: the walk stops at ${LIST_DEPTH} levels, ${LIST_DIRECTORIES} directories, ${LIST_NOTEBOOKS} notebooks; open takes any path]`] : [];
    return [head, ...lines, ...tail, 'open {path} makes one current; open {path, create: true} makes a new notebook'].join('\n');
  };

  /** Checks that `path` is a notebook (or makes one when `create`), before anything changes; whether it was made. */
  const checkNotebook = async (path: string, create: boolean): Promise<boolean> => {
    const answer = await rest('GET', `api/contents/${encoded(path)}?type=notebook&content=0`);
    if (answer.status === 200) {
      if ((answer.json as { type?: unknown } | undefined)?.type !== 'notebook') throw new NotebookToolError('invalid_arguments', `${path} is not a notebook; nothing was changed`, { reason: 'not_a_notebook' });
      // content=0 does not parse the file: a notebook that is not JSON is found by reading it.
      const full = await rest('GET', `api/contents/${encoded(path)}?type=notebook&content=1`);
      if (full.status !== 200) throw new NotebookToolError('invalid_arguments', `the server cannot read ${path} as a notebook (HTTP ${full.status}); nothing was changed`, { reason: 'not_a_notebook' });
      return false;
    }
    if (answer.status === 400) {
      const message = String((answer.json as { message?: unknown } | undefined)?.message ?? 'unreadable').slice(0, 300);
      throw new NotebookToolError('invalid_arguments', `the server cannot read ${path} as a notebook: ${message}; nothing was changed`, { reason: 'not_a_notebook' });
    }
    if (answer.status !== 404) throw new NotebookToolError('runtime_unavailable', `the contents API answered HTTP ${answer.status} for ${path}; nothing was changed`, { reason: 'refused' });
    if (!create) throw new NotebookToolError('invalid_arguments', `there is no notebook ${path} on the server; nothing was changed (list shows the notebooks; create: true makes a new one)`, { reason: 'not_found' });
    if (!path.endsWith('.ipynb')) throw new NotebookToolError('invalid_arguments', `a new notebook's path ends in .ipynb (got ${path}); nothing was changed`, { reason: 'not_a_notebook' });
    const content = { cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 };
    const made = await rest('PUT', `api/contents/${encoded(path)}`, { type: 'notebook', format: 'json', content });
    if (made.status !== 201 && made.status !== 200) {
      const message = String((made.json as { message?: unknown } | undefined)?.message ?? '').slice(0, 300);
      throw new NotebookToolError('invalid_arguments', `the server did not make the notebook ${path} (HTTP ${made.status}${message === '' ? '' : `: ${message}`}); nothing was changed`, { reason: 'not_found' });
    }
    return true;
  };

  /**
   * Closes what ipython-mcp holds of `left` (its mirror, its worker's backend), then shuts its session down if `open`
   * started it and no other client is connected to its kernel (the server's `connections`); says which.
   */
  const leave = async (left: OpenNotebook): Promise<string> => {
    const kernelId = left.backend.status().kernel_id;
    left.notebook.mirror.close();
    await left.backend.close().catch(() => undefined);
    if (!left.startedHere || kernelId === null) return `The previous notebook ${left.path} and its kernel were left running (the kernel is the notebook's session, not ipython-mcp's).`;
    const deadline = Date.now() + LEAVE_WAIT_MS;
    let connections: number | undefined;
    try {
      for (;;) {
        const kernel = await rest('GET', `api/kernels/${encodeURIComponent(kernelId)}`);
        if (kernel.status === 404) return `The previous notebook ${left.path}'s kernel is already gone.`;
        connections = (kernel.json as { connections?: unknown } | undefined)?.connections as number | undefined;
        if (typeof connections !== 'number' || connections === 0 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (connections !== 0) return `The previous notebook ${left.path} and its kernel were left running: another client is connected to it.`;
      const session = await rest('GET', 'api/sessions');
      const found = Array.isArray(session.json) ? (session.json as Array<SessionModel & { id?: string }>).find((each) => each.kernel?.id === kernelId) : undefined;
      const gone = found?.id === undefined ? await rest('DELETE', `api/kernels/${encodeURIComponent(kernelId)}`) : await rest('DELETE', `api/sessions/${encodeURIComponent(found.id)}`);
      if (gone.status >= 300 && gone.status !== 404) return `The previous notebook ${left.path}'s kernel could not be shut down (HTTP ${gone.status}): it is left running.`;
      return `The previous notebook ${left.path}'s kernel was shut down (ipython-mcp had started its session and nobody else joined it); the notebook file stays.`;
    } catch (error) {
      return `The previous notebook ${left.path}'s kernel was left running: ${(error as Error).message}`;
    }
  };

  const openNotebook = async (given: string, create: boolean): Promise<string> => {
    const path = rootPath(given);
    if (closed) throw new NotebookToolError('runtime_unavailable', 'the server is closing', { reason: 'refused' });
    if (runtime === undefined) throw new NotebookToolError('runtime_unavailable', 'the namespace is not running yet', { reason: 'refused' });
    if (current?.path === path) return `${path} is already the current notebook: nothing changed`;
    const made = await checkNotebook(path, create);
    const hadKernel = (await sessions()).has(path);
    const notebook = await notebookDocuments({ ...request, target: { notebookPath: path } }, logger);
    if (notebook === undefined) throw new Error('a notebook target has documents');
    if (clientName !== undefined) notebook.mirror.client = clientName;
    const backend = make({ notebookPath: path }, () => notebook.mirror.events());
    while (runs > 0) await new Promise<void>((resolve) => runsDone.push(resolve));
    let epoch: number;
    try {
      ({ epoch } = await runtime.switchBackend(backend, { warmStandby: false }));
    } catch (error) {
      // A session this open started for a kernel that then failed is not left behind (unless someone joined it).
      await leave({ path, backend, notebook, startedHere: !hadKernel });
      const still = current === undefined ? 'execute still runs in the kernel ipython-mcp started' : `the current notebook is still ${current.path}`;
      const code = (error as { code?: unknown }).code;
      throw new NotebookToolError('runtime_unavailable', `the kernel of ${path} could not be opened: ${(error as Error).message.slice(0, 500)}; nothing changed: ${still}${made ? ` (the new notebook ${path} was made and is left on the server)` : ''}`, {
        reason: typeof code === 'string' ? code : 'kernel_unavailable',
      });
    }
    const previous = current;
    current = { path, backend, notebook, startedHere: !hadKernel };
    const kernel = backend.status().kernel_id;
    const cells = await notebook.actions.read({ count: 1 }).then(
      (text) => /: (\d+) cells?/.exec(text)?.[1],
      () => undefined,
    );
    let left: string;
    if (previous === undefined) {
      await first.close().catch(() => undefined);
      left = 'The kernel execute ran in before was shut down (ipython-mcp had started it).';
    } else {
      left = await leave(previous);
    }
    return [
      `${made ? 'made and opened' : 'opened'} ${path}${cells === undefined ? '' : ` (${cells} cell${cells === '1' ? '' : 's'})`}: it is the current notebook. execute now runs in its kernel${kernel === null ? '' : ` ${kernel}`}` +
        `${hadKernel ? '' : ' (started for it now: shut down when you open another notebook or ipython-mcp exits, unless someone joined it)'}, each call kept as a new cell at its end; notebook read/edit/run act on it.`,
      `The namespace changed (epoch ${epoch}): names defined before are not here; the notebook's own names are. ${left}`,
    ].join('\n');
  };

  const actions: NotebookActions = {
    read: (page) => now().read(page),
    edit: (edits) => now().edit(edits),
    cellsToRun: async (selection) => {
      // A run asked for during an open runs in the notebook opened.
      await opening;
      runs += 1;
      return now().cellsToRun(selection);
    },
    runEnded: () => {
      if (runs > 0) runs -= 1;
      if (runs > 0) return;
      const waiting = runsDone;
      runsDone = [];
      for (const wake of waiting) wake();
    },
    claim: (id, code) => now().claim(id, code),
    runNote: () => current?.notebook.actions.runNote?.(),
    list,
    open: (path, create) => {
      const next = opening.then(() => openNotebook(path, create));
      opening = next.catch(() => undefined);
      return next;
    },
  };

  const documents: DocumentResources = {
    list: () => current?.notebook.documents.list() ?? [],
    read: (uri) => {
      if (current !== undefined) return current.notebook.documents.read(uri);
      if (uri === NOTEBOOK_RESOURCE_URI) return Promise.reject(new McpError(ErrorCode.InvalidParams, 'no notebook is open: the notebook tool\'s open action makes one current'));
      return undefined;
    },
    clientNamed: (name) => {
      clientName = name;
      if (current !== undefined) current.notebook.mirror.client = name;
    },
    tools: notebookTools(actions),
    runtimeMade: (made) => {
      runtime = made;
    },
  };

  return {
    backend: first,
    documents,
    status(workers) {
      if (current === undefined) {
        const status = first.status(workers);
        return {
          ...status,
          ...(status.kernel_name === '' ? { kernel_name: 'default' } : {}),
          notebook_cells: { mirrored: false, state: 'no_notebook', reason: 'no notebook is open: the notebook tool\'s open action makes one current' },
        };
      }
      return { ...current.backend.status(workers), notebook_cells: current.notebook.mirror.status(), notebook_resource: NOTEBOOK_RESOURCE_URI };
    },
    close() {
      closed = true;
      closing ??= opening.then(async () => {
        await Promise.all([first.close().catch(() => undefined), current === undefined ? undefined : leave(current)]);
      });
      return closing;
    },
  };
}
