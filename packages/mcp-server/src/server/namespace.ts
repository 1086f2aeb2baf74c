import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Runtime, silentLogger, type Logger, type RuntimeOptions } from '@ipython-mcp/worker-supervisor';
import { DynamicCatalog, RelistGate, RequestJobs, RestoreFollowUp, STABLE_TOOL_NAMES, ToolCaller } from '../tools/index.js';
import { OutputResources, openJournal, type DocumentResources } from '../resources/index.js';
import { DEFAULT_NAMESPACE, namespaceFilePath } from './namespace-files.js';
import { createSessionServer } from './server.js';
import { createModernSessionServer, ModernTasks } from './modern-server.js';
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import { runtimeOptionsFromSettings, type Settings } from '../settings/index.js';
import { statusOf, type SandboxStatus } from './status-report.js';

/** The settings a namespace reads: every server setting but the HTTP listener's own. */
export type NamespaceSettings = Omit<Settings, 'httpMaxSessions' | 'maxNamespaces'>;

/** Options of {@link createNamespace}: what one runtime, its catalog and its journal need, and nothing of a transport. */
export interface NamespaceOptions {
  /** Python interpreter for the worker. */
  python: string;
  settings: NamespaceSettings;
  logger?: Logger | undefined;
  /** Server version reported in `initialize` (and the journal's title). */
  version?: string | undefined;
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  /** Keep a warm standby worker (default true). */
  warmStandby?: boolean | undefined;
  forceJsonCodec?: boolean | undefined;
  /** Where the workers run (see {@link RuntimeOptions.backend}; default: local Python processes): tests, embedders. */
  backend?: RuntimeOptions['backend'];
  /**
   * The namespace's name (default `default`). Per-namespace files (the journal, the snapshot; see
   * {@link namespaceFilePath}) derive their paths from it, so two namespaces of one server never share a file.
   */
  namespace?: string | undefined;
  /** Report `namespace` and the open `sessions` in runtime_status (the HTTP server, where several may attach). */
  reportSessions?: boolean | undefined;
  /** Wraps each worker's launch in an isolation engine (see {@link RuntimeOptions.launch}); the app plugs it in. */
  launch?: RuntimeOptions['launch'];
  /** Where the runtime makes its output spill directory (see {@link RuntimeOptions.outputSpillParent}). */
  outputSpillParent?: string | undefined;
  /** What runtime_status reports as `sandbox` when `launch` is an isolation engine: engine, network, writes. */
  sandbox?: SandboxStatus | undefined;
  /**
   * What runtime_status reports as `backend` when the workers live elsewhere than in local processes (a Jupyter
   * kernel: server, kernel id, policy), read at each call. Must never contain a credential.
   */
  backendStatus?: ((workers: ReturnType<Runtime['workers']>) => Record<string, unknown>) | undefined;
  /** Resources the backend serves beside the namespace's own (a Jupyter backend's attached notebook). */
  documents?: DocumentResources | undefined;
  /**
   * Check every result against its tool's output schema; a result that fails is a server bug and the call fails.
   * Default: only when `NODE_ENV` is `development` or `test` (result-check.ts says why); production keeps the fast path.
   */
  checkResults?: boolean | undefined;
}

/** Options of {@link createIpythonMcpServer}: a namespace's, with the server's whole settings. */
export interface IpythonMcpServerOptions extends NamespaceOptions {
  settings: Settings;
}

/** A server bound to its runtime; close() ends both. */
export interface IpythonMcpServer {
  server: Server;
  runtime: Runtime;
  catalog: DynamicCatalog;
  /**
   * The connection's detached cells by request id, shared by its 2025-era server and its 2026-07-28 ones: its
   * transport shows it every client message (see {@link RequestJobs}).
   */
  calls: RequestJobs;
  /** A protocol 2026-07-28 server on the same namespace (made when a client opens in that era). */
  attachModern(): ModernServer;
  close(): Promise<void>;
}

/** One MCP session attached to a {@link Namespace}. */
export interface NamespaceSession {
  server: Server;
  /** The session's detached cells by request id: its transport shows it every client message (see {@link RequestJobs}). */
  calls: RequestJobs;
  /** Detaches the session (its transport closed); the namespace and its runtime go on. */
  release(): void;
}

/**
 * One namespace: one runtime (worker, standby, queue), one dynamic catalog, one journal and one tool caller, shared
 * by every MCP session attached to it. Sessions come and go; only close() ends the runtime.
 */
export interface Namespace {
  readonly name: string;
  readonly runtime: Runtime;
  readonly catalog: DynamicCatalog;
  /** Sessions attached and not yet released. */
  readonly sessionCount: number;
  /**
   * A new MCP server (not yet connected to a transport) whose tools act on this namespace; `calls` is its
   * connection's map of detached cells by request id (a new one when not given).
   */
  attach(calls?: RequestJobs): NamespaceSession;
  /**
   * The same for a protocol 2026-07-28 session (modern-server.ts): the SDK's v2 server. Without `calls` (stateless
   * HTTP, where closing a request's stream is its cancel) a cell is stopped by its request's signal only until its
   * handle is written.
   */
  attachModern(calls?: RequestJobs): { server: ModernServer; release(): void };
  /** Ends the runtime (queued and active requests answer runtime_closed), the journal, then every session. */
  close(): Promise<void>;
}

/**
 * The namespace options out of a larger bag (the HTTP server's, which also holds the listener, the bearer token and
 * TLS): only these keys, and the settings without the listener's own, reach a namespace.
 */
export function namespaceOptionsOf(options: NamespaceOptions): NamespaceOptions {
  const { httpMaxSessions: _sessions, maxNamespaces: _namespaces, ...settings } = options.settings as Settings;
  return {
    python: options.python,
    settings,
    logger: options.logger,
    version: options.version,
    cwd: options.cwd,
    env: options.env,
    warmStandby: options.warmStandby,
    forceJsonCodec: options.forceJsonCodec,
    backend: options.backend,
    namespace: options.namespace,
    reportSessions: options.reportSessions,
    launch: options.launch,
    outputSpillParent: options.outputSpillParent,
    sandbox: options.sandbox,
    backendStatus: options.backendStatus,
    documents: options.documents,
    checkResults: options.checkResults,
  };
}

/** Builds the MCP server of one namespace with one session (not yet connected). The worker starts at once. */
export function createIpythonMcpServer(options: IpythonMcpServerOptions): IpythonMcpServer {
  const namespace = createNamespace(namespaceOptionsOf(options));
  const calls = new RequestJobs();
  const { server } = namespace.attach(calls);
  return { server, runtime: namespace.runtime, catalog: namespace.catalog, calls, attachModern: () => namespace.attachModern(calls).server, close: () => namespace.close() };
}

/** Builds a namespace with no session yet. The worker starts in the background at once. */
export function createNamespace(options: NamespaceOptions): Namespace {
  const logger = options.logger ?? silentLogger;
  const name = options.namespace ?? DEFAULT_NAMESPACE;
  const version = options.version ?? '0.0.0';
  const sessions = new Set<{ server: Pick<Server, 'sendToolListChanged' | 'close'>; relist: RelistGate }>();
  const catalog = new DynamicCatalog(() => {
    // list_changed reaches every attached session; each keeps its own re-list gate (see RelistGate).
    for (const session of sessions) {
      session.relist.noteNotified();
      session.server.sendToolListChanged().catch(() => undefined);
    }
  });
  // Per-namespace files (journal, --state snapshot) derive their paths from the name; `default` keeps the path given.
  const settings: NamespaceSettings = {
    ...options.settings,
    journal: options.settings.journal === null ? null : namespaceFilePath(options.settings.journal, name),
    stateFile: options.settings.stateFile === null ? null : namespaceFilePath(options.settings.stateFile, name),
  };
  const runtime = new Runtime({
    ...runtimeOptionsFromSettings(settings),
    python: options.python,
    backend: options.backend,
    launch: options.launch,
    outputSpillParent: options.outputSpillParent,
    reservedToolNames: [...STABLE_TOOL_NAMES],
    logger,
    cwd: options.cwd,
    env: options.env,
    warmStandby: options.warmStandby,
    forceJsonCodec: options.forceJsonCodec,
    afterInterrupt: catalog.afterInterruptPolicy(),
  });
  runtime.onEpochChange(() => catalog.clear());
  options.documents?.runtimeMade?.(runtime);
  // Spill files, images and cut results as resources: every session of this namespace reads them, no other.
  const outputs = new OutputResources(name, () => runtime.spillDirectory, undefined, settings.maxResultTokens);
  const journal = openJournal(settings, runtime, logger, version);
  runtime.start();
  const restore = new RestoreFollowUp(runtime, settings.stateFile !== null);
  const status = (): Record<string, unknown> => ({
    ...statusOf(runtime, catalog, journal, options.sandbox),
    ...(options.backendStatus ? { backend: options.backendStatus(runtime.workers()) } : {}),
    ...(options.reportSessions ? { namespace: name, sessions: sessions.size } : {}),
  });
  const maxTimeoutSeconds = settings.maxOperationTimeoutSeconds;
  const caller = new ToolCaller({ runtime, catalog, journal, restore, status, maxTimeoutSeconds, namespace: name, documentTools: options.documents?.tools });
  const modernTasks = new ModernTasks({ caller });
  return {
    name,
    runtime,
    catalog,
    get sessionCount() {
      return sessions.size;
    },
    attach(calls = new RequestJobs()) {
      const relist = new RelistGate();
      const server = createSessionServer({ version, runtime, catalog, journal, outputs, restore, caller, relist, calls, maxTimeoutSeconds, checkResults: options.checkResults, documents: options.documents });
      const session = { server, relist };
      sessions.add(session);
      return { server, calls, release: () => void sessions.delete(session) };
    },
    attachModern(calls?: RequestJobs) {
      const relist = new RelistGate();
      const parts = { version, runtime, catalog, journal, outputs, restore, caller, relist, calls, maxTimeoutSeconds, checkResults: options.checkResults, documents: options.documents };
      const server = createModernSessionServer(parts, modernTasks);
      const session = { server, relist };
      sessions.add(session);
      return { server, release: () => void sessions.delete(session) };
    },
    async close() {
      await runtime.close();
      // Detached cells ended with the runtime (their calls answered runtime_closed); nothing keeps their results.
      caller.detached.close();
      outputs.close();
      await journal?.close();
      const open = [...sessions];
      sessions.clear();
      // Results held for a re-list of the tools (a shutdown that ended the worker changed the list) go out now, and
      // are written before the sessions close: a call answered runtime_closed is answered, not cut off.
      for (const session of open) session.relist.release();
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(open.map((session) => session.server.close().catch(() => undefined)));
    },
  };
}
