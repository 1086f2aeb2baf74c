/**
 * The connection to one Jupyter server: validated options, `@jupyterlab/services` settings for Node, and the one
 * place that turns what the server (or the network) said into a {@link JupyterKernelError}.
 */
import { ServerConnection } from '@jupyterlab/services';
import WebSocket from 'ws';
import { JupyterKernelError, redactUrl } from './errors.js';
import type { JupyterKernelErrorDetails } from './errors.js';
import { installServicesConsole } from './services-console.js';

/** Default bound on one REST call, so a server that accepts the connection and never answers cannot hang us. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** Where the Jupyter server is and how to authenticate to it. */
export interface JupyterServerOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8888/` (a path prefix such as `/user/ana/` is kept). */
  readonly url: string;
  /**
   * The server's token, which the caller reads from `JUPYTER_TOKEN` or `IPYTHON_MCP_JUPYTER_TOKEN`. It is sent in
   * the `Authorization` header, the WebSocket's upgrade request included (and, for the WebSocket, also as the
   * `token` query parameter), and never in a message.
   */
  readonly token: string;
  /** Bound on one REST call in milliseconds; default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  readonly requestTimeoutMs?: number | undefined;
}

/** {@link JupyterServerOptions} with defaults filled in and the URL checked. */
export interface ResolvedServer {
  /** `@jupyterlab/services` settings: Node's fetch with a timeout, `ws` as the WebSocket. */
  readonly settings: ServerConnection.ISettings;
  /** The base URL without query, safe to log. */
  readonly displayUrl: string;
  readonly requestTimeoutMs: number;
}

/**
 * Checks the options and builds the services settings.
 *
 * @param options - URL, token and timeout
 * @returns the resolved server
 * @throws JupyterKernelError `jupyter_invalid_options` for a URL that is not http(s) or a bad timeout
 */
export function resolveServer(options: JupyterServerOptions): ResolvedServer {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    throw new JupyterKernelError('jupyter_invalid_options', { reason: 'url is not a URL' });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new JupyterKernelError('jupyter_invalid_options', { url: redactUrl(options.url), reason: 'url must be http: or https:' });
  }
  if (parsed.search !== '' || parsed.username !== '' || parsed.password !== '') {
    throw new JupyterKernelError('jupyter_invalid_options', {
      url: redactUrl(options.url),
      reason: 'pass the token separately, not in the URL',
    });
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(requestTimeoutMs) || requestTimeoutMs <= 0) {
    throw new JupyterKernelError('jupyter_invalid_options', { reason: 'requestTimeoutMs must be a positive number' });
  }
  const baseUrl = parsed.href.endsWith('/') ? parsed.href : `${parsed.href}/`;
  const wsUrl = `${parsed.protocol === 'https:' ? 'wss:' : 'ws:'}${baseUrl.slice(parsed.protocol.length)}`;
  const boundedFetch = (input: Request | string | URL, init?: RequestInit): Promise<Response> =>
    fetch(input, { ...init, signal: AbortSignal.timeout(requestTimeoutMs) });
  const settings = ServerConnection.makeSettings({
    baseUrl,
    appUrl: '',
    wsUrl,
    token: options.token,
    appendToken: true,
    fetch: boundedFetch as ServerConnection.ISettings['fetch'],
    // ws's WebSocket speaks the browser API the services use; the type definitions differ only in details.
    WebSocket: authorizedWebSocket(options.token) as unknown as ServerConnection.ISettings['WebSocket'],
  });
  // The services' console lines never reach stdout (the MCP channel): services-console.ts.
  installServicesConsole();
  return { settings, displayUrl: redactUrl(baseUrl), requestTimeoutMs };
}

/**
 * `ws`'s WebSocket with the token in the upgrade request's `Authorization` header. A browser cannot set that
 * header, so the services also put the token in the URL; but JupyterHub's single-user servers ignore a URL token
 * unless the request says it comes from a browser (`Sec-Fetch-Mode: websocket`), and answer 403. The header is
 * what every Jupyter server, gateway and hub accepts from a program.
 *
 * @param token - the server's token; empty for none
 * @returns the WebSocket class the services construct with `(url, protocols)`
 */
export function authorizedWebSocket(token: string): new (address: string | URL, protocols?: string | string[]) => WebSocket {
  if (token === '') return WebSocket;
  const headers = { Authorization: `token ${token}` };
  return class AuthorizedWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  };
}

/**
 * Turns a failure of one REST call into a typed error.
 *
 * @param error - what the services call threw
 * @param server - the server it was sent to
 * @param details - the names the call was about (kernel id, notebook path, kernelspec)
 * @returns the typed error to throw
 */
export function toJupyterError(error: unknown, server: ResolvedServer, details: JupyterKernelErrorDetails = {}): JupyterKernelError {
  if (error instanceof JupyterKernelError) return error;
  const url = server.displayUrl;
  if (error instanceof ServerConnection.ResponseError) {
    const status = error.response.status;
    if (status === 401 || status === 403) return new JupyterKernelError('jupyter_unauthorized', { url, status });
    return new JupyterKernelError('jupyter_bad_response', { ...details, url, status, reason: error.message.slice(0, 200), cause: error });
  }
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : '';
  // The services wrap fetch's rejection in a NetworkError (a TypeError) that keeps only the message.
  if (name === 'TimeoutError' || name === 'AbortError' || /timeout|aborted/i.test(message)) {
    return new JupyterKernelError('jupyter_unreachable', { url, reason: `no answer within ${server.requestTimeoutMs} ms`, cause: error });
  }
  if (error instanceof TypeError) {
    // fetch's "fetch failed" hides the reason (ECONNREFUSED, ENOTFOUND) in its cause.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const reason = typeof cause?.code === 'string' ? cause.code : error.message;
    return new JupyterKernelError('jupyter_unreachable', { url, reason, cause: error });
  }
  if (error instanceof SyntaxError) {
    return new JupyterKernelError('jupyter_bad_response', { ...details, url, reason: 'the answer was not JSON', cause: error });
  }
  return new JupyterKernelError('jupyter_bad_response', { ...details, url, reason: String(error).slice(0, 200), cause: error });
}
