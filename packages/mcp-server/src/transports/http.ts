import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { silentLogger } from '@ipython-mcp/worker-supervisor';
import type { DocumentResources } from '../resources/index.js';
import { answerableAsJson, webRequest, writeWebResponse } from './http-exchange.js';
import { ModernHttp } from './http-modern.js';
import { AllowedHostError, allowedHostNames, hostHeaderName, isWildcardAddress, originHostName } from './http-hosts.js';
import {
  DEFAULT_NAMESPACE,
  NAMESPACE_NAME,
  createNamespace,
  namespaceOptionsOf,
  type IpythonMcpServerOptions,
  type Namespace,
  type NamespaceSession,
} from '../server/index.js';

/** Options of {@link serveHttp}: the server's, plus where to listen and the bearer token every request needs. */
export interface HttpServeOptions extends IpythonMcpServerOptions {
  /** Address to bind; a loopback address unless the caller allowed remote access. */
  host: string;
  /** Port to bind; 0 picks a free one (see {@link IpythonMcpHttpServer.url}). */
  port: number;
  /** The bearer token; compared in constant time, never logged. */
  token: string;
  /**
   * Host names and addresses clients may name in `Host` and `Origin`, beyond the loopback names and the bind
   * address (any port). Required, non-empty, for a wildcard bind (0.0.0.0 or ::).
   */
  allowedHosts?: readonly string[];
  /** PEM certificate chain and private key: serve HTTPS (node:https) instead of plain HTTP. */
  tls?: HttpTls;
  /**
   * Where each namespace's workers live, by namespace name (a Jupyter kernel of its own, say), or why that
   * namespace cannot be served (the text the client gets). Unset: every namespace uses `backend`.
   */
  backendFor?: ((namespace: string) => NamespaceBackend | string) | undefined;
}

/** One namespace's own backend: its workers, what runtime_status reports of it, and what ends it. */
export interface NamespaceBackend {
  backend: NonNullable<IpythonMcpServerOptions['backend']>;
  /** runtime_status's `backend` (never a credential). */
  status?: IpythonMcpServerOptions['backendStatus'];
  /** Keep a warm standby worker (default true). */
  warmStandby?: boolean | undefined;
  /** Resources the backend serves beside the namespace's own (a Jupyter backend's attached notebook). */
  documents?: DocumentResources | undefined;
  /** Called after the namespace's runtime has closed (shuts down what the backend started). */
  close?: (() => Promise<void>) | undefined;
}

/** A certificate chain and its private key, PEM. */
export interface HttpTls {
  cert: string | Buffer;
  key: string | Buffer;
}

/**
 * How long an idle connection stays open. Clients pool connections and reuse them after a pause (Codex keeps idle
 * ones for 90 s); a server that closes first races the client's next request on that socket.
 */
export const HTTP_KEEP_ALIVE_MS = 120_000;
/** node:http requires the headers timeout to exceed the keep-alive timeout. */
export const HTTP_HEADERS_TIMEOUT_MS = HTTP_KEEP_ALIVE_MS + 5_000;

/** A running Streamable HTTP server: `/mcp` is the namespace `default`, `/mcp/NAME` a namespace of its own. */
export interface IpythonMcpHttpServer {
  /** `http://HOST:PORT/mcp`. */
  readonly url: string;
  /** Namespaces created so far, by name. */
  readonly namespaces: ReadonlyMap<string, Namespace>;
  /** Open sessions, across namespaces. */
  readonly sessionCount: number;
  /** Ends every runtime (their requests answer runtime_closed), then every session, then the listener. */
  close(): Promise<void>;
}

interface OpenSession {
  transport: WebStandardStreamableHTTPServerTransport;
  session: NamespaceSession;
  namespace: string;
  /** HTTP requests of this session still open (a POST awaiting its answers, the GET notification stream). */
  open: number;
  lastSeen: number;
}

/** A session without an open request for this long may be closed to make room for a new one. */
const IDLE_SESSION_MS = 10 * 60_000;

/** Whether `host` is a loopback address (the default binding; anything else needs an explicit opt-in). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Serves MCP over the SDK's web-standard Streamable HTTP transport on node:http (http-exchange.ts in between).
 * Before a request reaches a transport it must name this server in `Host` (and in `Origin`, when a browser sends
 * one), carry the bearer token and a body within the IPC limit; otherwise it is answered 403, 401 or 413 and
 * nothing runs. Every session on one path shares that path's namespace (one runtime, queue, registry and epoch); a
 * session's end cancels its own requests and never the namespace.
 */
export async function serveHttp(options: HttpServeOptions): Promise<IpythonMcpHttpServer> {
  const logger = options.logger ?? silentLogger;
  const namespaces = new Map<string, Namespace>();
  const sessions = new Map<string, OpenSession>();
  const tokenDigest = digest(options.token);
  const bodyLimit = options.settings.maxIpcMessageBytes;
  const listedHosts = options.allowedHosts ?? [];
  if (isWildcardAddress(options.host) && listedHosts.length === 0) {
    throw new AllowedHostError(
      `binding ${options.host} accepts connections on every interface, but no host name a client may use is allowed; list them with --http-allow-host NAME (IPYTHON_MCP_HTTP_ALLOWED_HOSTS)`,
    );
  }
  const allowedHosts = allowedHostNames(options.host, listedHosts);
  let closing = false;
  const modern = new ModernHttp(bodyLimit, (error) => logger.warn('2026-07-28 request failed', { error: error.name }));

  const namespaceFor = (name: string): Namespace | string => {
    const existing = namespaces.get(name);
    if (existing) return existing;
    if (namespaces.size >= options.settings.maxNamespaces) {
      return `this server already holds ${namespaces.size} namespaces, its limit (IPYTHON_MCP_MAX_NAMESPACES); use one of them or raise the setting`;
    }
    let own: NamespaceBackend | undefined;
    if (options.backendFor !== undefined) {
      const chosen = options.backendFor(name);
      if (typeof chosen === 'string') return chosen;
      own = chosen;
    }
    const created = createNamespace({
      ...namespaceOptionsOf(options),
      namespace: name,
      reportSessions: true,
      ...(own === undefined ? {} : { backend: own.backend, backendStatus: own.status, warmStandby: own.warmStandby, documents: own.documents }),
    });
    if (own?.close !== undefined) {
      const closeNamespace = created.close.bind(created);
      const closeBackend = own.close;
      created.close = async () => {
        await closeNamespace();
        await closeBackend();
      };
    }
    namespaces.set(name, created);
    logger.info('namespace created', { namespace: name, namespaces: namespaces.size });
    return created;
  };

  const roomForSession = (): boolean => {
    if (sessions.size < options.settings.httpMaxSessions) return true;
    // A client that left without ending its session (no DELETE) must not hold a slot forever.
    let idlest: [string, OpenSession] | undefined;
    for (const entry of sessions) if (entry[1].open === 0 && (idlest === undefined || entry[1].lastSeen < idlest[1].lastSeen)) idlest = entry;
    if (idlest === undefined || Date.now() - idlest[1].lastSeen < IDLE_SESSION_MS) return false;
    sessions.delete(idlest[0]);
    void idlest[1].transport.close();
    return true;
  };

  const openSession = async (namespace: Namespace): Promise<OpenSession> => {
    const session = namespace.attach();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, entry);
        logger.info('session opened', { namespace: namespace.name, sessions: sessions.size });
      },
    });
    const entry: OpenSession = { transport, session, namespace: namespace.name, open: 0, lastSeen: Date.now() };
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      session.release();
      logger.info('session closed', { namespace: namespace.name, sessions: sessions.size });
    };
    await session.server.connect(transport);
    return entry;
  };

  // A client sends the same Host on every request: its verdict is kept (a few entries, dropped when full).
  const hostVerdicts = new Map<string, boolean>();
  const hostAllowed = (header: string | undefined): boolean => {
    if (header === undefined) return false;
    let verdict = hostVerdicts.get(header);
    if (verdict === undefined) {
      const name = hostHeaderName(header);
      verdict = name !== undefined && allowedHosts.has(name);
      if (hostVerdicts.size >= 64) hostVerdicts.clear();
      hostVerdicts.set(header, verdict);
    }
    return verdict;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host)) return refuse(res, 403, 'forbidden: the Host header does not name this server (allowed names: --http-allow-host)');
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const originName = originHostName(origin);
      if (originName === undefined || !allowedHosts.has(originName)) return refuse(res, 403, 'forbidden: requests from this Origin are not allowed (allowed names: --http-allow-host)');
    }
    if (!authorized(req.headers.authorization, tokenDigest)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return refuse(res, 401, 'unauthorized: send Authorization: Bearer <token>');
    }
    const name = namespaceName(req.url ?? '');
    if (name === undefined) return refuse(res, 404, 'not found: MCP is served at /mcp and /mcp/NAME (NAME: 1-32 of a-z, 0-9, -)');
    if (closing) return refuse(res, 503, 'the server is shutting down (runtime_closed)');
    let body: unknown;
    let raw: Buffer = Buffer.alloc(0);
    if (req.method === 'POST') {
      const read = await readBody(req, bodyLimit);
      if (read === 'too-large') return refuse(res, 413, `request body larger than ${bodyLimit} bytes (IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES)`);
      raw = read;
      try {
        body = JSON.parse(read.toString('utf8'));
      } catch {
        return jsonRpcError(res, 400, -32700, 'parse error: the body is not JSON');
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    // 2026-07-28: no session; each POST is served on its own by the path's namespace (http-modern.ts).
    if (typeof sessionId !== 'string' && req.method === 'POST' && ModernHttp.claims(body)) {
      const namespace = namespaceFor(name);
      if (typeof namespace === 'string') return jsonRpcError(res, 503, -32000, namespace);
      return modern.answer(namespace, req, res, raw, body);
    }
    let entry: OpenSession | undefined;
    if (typeof sessionId === 'string') {
      entry = sessions.get(sessionId);
      if (entry === undefined || entry.namespace !== name) return jsonRpcError(res, 404, -32001, 'session not found: initialize a new session');
    } else if (req.method === 'POST' && (Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body))) {
      if (!roomForSession()) {
        return jsonRpcError(res, 503, -32000, `too many open sessions (${sessions.size}, the limit IPYTHON_MCP_HTTP_MAX_SESSIONS); end one or raise the setting`);
      }
      const namespace = namespaceFor(name);
      if (typeof namespace === 'string') return jsonRpcError(res, 503, -32000, namespace);
      entry = await openSession(namespace);
    } else {
      return jsonRpcError(res, 400, -32000, 'bad request: no Mcp-Session-Id; send initialize first');
    }
    await dispatch(entry, req, res, body);
  };

  const dispatch = async (entry: OpenSession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    entry.open += 1;
    entry.lastSeen = Date.now();
    const requestIds = requestIdsOf(body);
    res.once('close', () => {
      entry.open -= 1;
      entry.lastSeen = Date.now();
      // The client went away before its answers: cancel those requests as MCP cancellation does (a queued one is
      // dropped, a running one interrupted; the namespace stays).
      if (!res.writableFinished) for (const requestId of requestIds) cancel(entry, requestId);
    });
    // Every client message passes the session's detached cells first: a cancel may name a call that detached.
    if (entry.session.calls.size > 0) for (const message of Array.isArray(body) ? body : [body]) if (typeof message === 'object' && message !== null) entry.session.calls.observe(message as JSONRPCMessage);
    const response = await entry.transport.handleRequest(webRequest(req), { parsedBody: body });
    await writeWebResponse(response, res, req.method === 'POST' && answerableAsJson(body));
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      logger.error('http request failed', { error: error instanceof Error ? error.name : 'unknown' });
      if (!res.headersSent) refuse(res, 500, 'internal error');
      else res.destroy();
    });
  };
  const server: Server = options.tls === undefined ? createServer(onRequest) : createTlsServer({ cert: options.tls.cert, key: options.tls.key }, onRequest);
  server.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
  server.headersTimeout = HTTP_HEADERS_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  // A wildcard address names no host a client can dial: show the first allowed name instead.
  const urlHost = isWildcardAddress(options.host) ? (listedHosts[0] ?? '127.0.0.1') : options.host;
  const shownHost = urlHost.includes(':') && !urlHost.startsWith('[') ? `[${urlHost}]` : urlHost;
  let closed: Promise<void> | undefined;
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${shownHost}:${port}/mcp`,
    namespaces,
    get sessionCount() {
      return sessions.size;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        server.close();
        // Runtimes first, so queued and active requests are answered runtime_closed on their still-open streams.
        await Promise.all([...namespaces.values()].map((namespace) => namespace.runtime.close()));
        await new Promise((resolve) => setTimeout(resolve, 50));
        await Promise.all([...namespaces.values()].map((namespace) => namespace.close()));
        await modern.close();
        await Promise.all([...sessions.values()].map((entry) => entry.transport.close().catch(() => undefined)));
        server.closeAllConnections();
      })();
      return closed;
    },
  };
}

/** `/mcp` -> `default`, `/mcp/NAME` -> NAME for a valid name, anything else undefined. */
export function namespaceName(url: string): string | undefined {
  const path = url.split('?')[0] ?? '';
  if (path === '/mcp' || path === '/mcp/') return DEFAULT_NAMESPACE;
  const match = /^\/mcp\/([^/]+)\/?$/.exec(path);
  return match?.[1] !== undefined && NAMESPACE_NAME.test(match[1]) ? match[1] : undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time check of `Authorization: Bearer <token>` (digests, so the length of the token leaks nothing). */
function authorized(header: string | undefined, tokenDigest: Buffer): boolean {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  const offered = digest(match?.[1] ?? '');
  return timingSafeEqual(offered, tokenDigest) && match !== null;
}

/** The body, or `too-large` as soon as it passes `limit` bytes (by Content-Length or by what arrived). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    return Promise.resolve('too-large');
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Answer now and discard the rest (the sender already proved it holds the token): stopping the read
        // instead would leave the client writing into a socket that resets before it reads the 413.
        req.removeAllListeners('data');
        req.resume();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function requestIdsOf(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter((message): message is JSONRPCMessage & { id: RequestId } => isJSONRPCRequest(message)).map((message) => message.id);
}

/** Hands the session a cancellation for `requestId`, as if the client had sent notifications/cancelled. */
function cancel(entry: OpenSession, requestId: RequestId): void {
  const notification: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the client disconnected' } };
  entry.session.calls.observe(notification);
  entry.transport.onmessage?.(notification);
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: message }));
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
