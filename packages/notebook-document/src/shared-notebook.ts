/**
 * One notebook's shared document, as JupyterLab itself holds it: jupyter-collaboration's document session (`PUT
 * api/collaboration/session/PATH` → file id and server session), then the room's WebSocket
 * (`api/collaboration/room/json:notebook:FILE_ID?sessionId=…`) synced into a `YNotebook` of `@jupyter/ydoc` by
 * y-websocket's provider. The agent's presence is this connection's awareness state. The token travels in the
 * `Authorization` header and the WebSocket's `token` parameter, and in no message this module makes.
 */
import { randomBytes } from 'node:crypto';
import { YNotebook } from '@jupyter/ydoc';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import { Awareness } from 'y-protocols/awareness';
import { Doc } from 'yjs';

/** Where the notebook is and who the agent is. */
export interface SharedNotebookOptions {
  /** The Jupyter server's base URL (`http://127.0.0.1:8888/`), without query. */
  readonly url: string;
  /** The server's token; may be empty. Never logged. */
  readonly token: string;
  /** The notebook's path relative to the server's root. */
  readonly path: string;
  /** The name JupyterLab shows for the agent among the collaborators. */
  readonly displayName: string;
  /** Bound on the document session and the first sync; default {@link DEFAULT_SYNC_TIMEOUT_MS}. */
  readonly timeoutMs?: number | undefined;
}

/** Default bound on opening a notebook's shared document. */
export const DEFAULT_SYNC_TIMEOUT_MS = 10_000;

/** Why the shared document could not be opened, in words a person can act on. */
export class SharedNotebookError extends Error {
  /** `no_collaboration` (the server has no collaboration endpoints), `not_found`, `refused`, `timeout`. */
  readonly reason: 'no_collaboration' | 'not_found' | 'refused' | 'timeout';

  constructor(reason: SharedNotebookError['reason'], message: string) {
    super(message);
    this.name = 'SharedNotebookError';
    this.reason = reason;
  }
}

/** The state of the room's connection. */
export type SharedNotebookState = 'connected' | 'reconnecting' | 'closed';

/** An open shared notebook. */
export interface SharedNotebook {
  readonly notebook: YNotebook;
  /** The file id jupyter-collaboration gave the notebook (stable across renames). */
  readonly fileId: string;
  /** `connected` while synced with the room; `reconnecting` while the provider retries; `closed` for good. */
  state(): SharedNotebookState;
  /** Why the room closed for good (the file deleted, the session refused), once it did. */
  closedReason(): string | undefined;
  /** Leaves the room (the awareness state is withdrawn first, so the agent leaves the collaborators' list). */
  close(): void;
  /** Shows the agent under another name (its MCP client's, once known) in the collaborators' list and on its cursor. */
  rename(displayName: string): void;
}

/** Colours JupyterLab draws collaborators with: a fixed one for the agent, so a person learns to recognise it. */
const AGENT_COLOR = 'var(--jp-collaborator-color7)';

/**
 * The awareness `user` field JupyterLab's collaborator list and cursors read. JupyterLab's list shows one entry per
 * username and document: `connection` (one per attached ipython-mcp) keeps two agents of the same name apart.
 */
export function agentUser(displayName: string, connection?: string): Record<string, string> {
  const words = displayName.replace(/ \(agent\)$/, '').split(/[\s_()-]+/).filter((word) => word !== '');
  const initials = words.length === 0 ? 'AI' : words.slice(0, 2).map((word) => word[0]!.toUpperCase()).join('');
  const username = `ipython-mcp-${displayName}${connection === undefined ? '' : `-${connection}`}`;
  return { username, name: displayName, display_name: displayName, initials, color: AGENT_COLOR, avatar_url: '' };
}

function join(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

function encodePath(path: string): string {
  return path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
}

/**
 * Opens the shared document of the notebook at `options.path` and waits for the first sync.
 *
 * @throws SharedNotebookError: the server has no collaboration endpoints, the notebook is not there, the room
 *   refused the connection, or the sync did not finish in time
 */
export async function openSharedNotebook(options: SharedNotebookOptions): Promise<SharedNotebook> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (options.token !== '') headers.Authorization = `token ${options.token}`;
  let response: Response;
  try {
    response = await fetch(join(options.url, `api/collaboration/session/${encodePath(options.path)}`), {
      method: 'PUT',
      headers,
      body: JSON.stringify({ format: 'json', type: 'notebook' }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new SharedNotebookError('refused', `the collaboration endpoint could not be reached: ${(error as Error).message}`);
  }
  const text = await response.text().catch(() => '');
  // The extension answers in JSON (a missing file too); a server without it has no such route, and answers with
  // its HTML "not found" page.
  const json = (response.headers.get('content-type') ?? '').includes('json');
  if (!json && (response.status === 404 || response.status === 403)) {
    throw new SharedNotebookError('no_collaboration', 'the Jupyter server has no real-time collaboration (install jupyter-collaboration in its environment)');
  }
  if (response.status === 404) throw new SharedNotebookError('not_found', `the notebook ${options.path} does not exist on the server`);
  if (!response.ok) throw new SharedNotebookError('refused', `the collaboration endpoint answered HTTP ${response.status}`);
  let session: { fileId?: unknown; sessionId?: unknown } = {};
  try {
    session = JSON.parse(text) as typeof session;
  } catch {
    // checked below
  }
  if (typeof session.fileId !== 'string' || typeof session.sessionId !== 'string') {
    throw new SharedNotebookError('refused', 'the collaboration endpoint answered without a file id and session');
  }
  return connectRoom(options, session.fileId, session.sessionId, timeoutMs);
}

/**
 * `ws` with the token also in the upgrade request's `Authorization` header: JupyterHub's single-user servers ignore a
 * token in a WebSocket's URL unless the request comes from a browser.
 */
function roomWebSocket(token: string): typeof globalThis.WebSocket {
  if (token === '') return WebSocket as unknown as typeof globalThis.WebSocket;
  const headers = { Authorization: `token ${token}` };
  class RoomWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  }
  return RoomWebSocket as unknown as typeof globalThis.WebSocket;
}

function connectRoom(options: SharedNotebookOptions, fileId: string, sessionId: string, timeoutMs: number): Promise<SharedNotebook> {
  const notebook = new YNotebook({ disableDocumentWideUndoRedo: true });
  const wsBase = join(options.url, 'api/collaboration/room').replace(/^http/, 'ws');
  const params: Record<string, string> = { sessionId };
  if (options.token !== '') params.token = options.token;
  const provider = new WebsocketProvider(wsBase, `json:notebook:${fileId}`, notebook.ydoc, {
    params,
    awareness: notebook.awareness,
    WebSocketPolyfill: roomWebSocket(options.token),
    // Codes 4400-4499 (a file not found, a bad request) are permanent: the provider stops and says `closed`.
    maxBackoffTime: 2_000,
  });
  const connection = randomBytes(4).toString('hex');
  notebook.awareness.setLocalStateField('user', agentUser(options.displayName, connection));
  // JupyterLab's collaborators panel lists the users of its global awareness room, with the document each has open.
  const globalDoc = new Doc();
  const globalAwareness = new Awareness(globalDoc);
  globalAwareness.setLocalState({ user: agentUser(options.displayName, connection), current: `notebook:${options.path.replace(/^\/+/, '')}` });
  const presence = new WebsocketProvider(wsBase, 'JupyterLab:globalAwareness', globalDoc, {
    params: options.token === '' ? {} : { token: options.token },
    awareness: globalAwareness,
    WebSocketPolyfill: roomWebSocket(options.token),
    maxBackoffTime: 2_000,
  });
  let closed: string | undefined;
  let everSynced = false;
  const shared: SharedNotebook = {
    notebook,
    fileId,
    state: () => (closed !== undefined ? 'closed' : provider.wsconnected && provider.synced ? 'connected' : 'reconnecting'),
    closedReason: () => closed,
    close: () => {
      if (closed === undefined) closed = 'closed by ipython-mcp';
      notebook.awareness.setLocalState(null);
      globalAwareness.setLocalState(null);
      provider.destroy();
      presence.destroy();
      globalAwareness.destroy();
      globalDoc.destroy();
      notebook.dispose();
    },
    rename: (displayName) => {
      if (closed !== undefined) return;
      notebook.awareness.setLocalStateField('user', agentUser(displayName, connection));
      globalAwareness.setLocalStateField('user', agentUser(displayName, connection));
    },
  };
  return new Promise<SharedNotebook>((resolve, reject) => {
    const timer = setTimeout(() => fail(new SharedNotebookError('timeout', `the notebook's shared document did not sync within ${timeoutMs} ms`)), timeoutMs);
    const fail = (error: SharedNotebookError): void => {
      clearTimeout(timer);
      if (everSynced) return;
      shared.close();
      reject(error);
    };
    provider.on('closed', (event: { code?: number; reason?: string } | null) => {
      const code = event?.code ?? 0;
      closed = code === 4404 ? 'the notebook was deleted or moved' : `the collaboration room closed the connection (code ${code})`;
      if (!everSynced) fail(new SharedNotebookError(code === 4404 ? 'not_found' : 'refused', closed));
    });
    provider.on('connection-close', (event: { code?: number; reason?: string } | null) => {
      // A session the server cannot resume (1003 with a JSON reason) is final, like a permanent close.
      if (event?.code === 1003 && !everSynced) fail(new SharedNotebookError('refused', 'the collaboration room refused the document session'));
    });
    provider.on('sync', (synced: boolean) => {
      if (!synced || everSynced) return;
      everSynced = true;
      clearTimeout(timer);
      resolve(shared);
    });
  });
}
