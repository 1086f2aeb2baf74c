import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode as McpErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { Runtime, silentLogger, type Logger, type OperationMeta, type OperationOutcome, type RunOptions, type RuntimeOptions } from '@ipython-mcp/worker-supervisor';
import { OPERATION_FACTS, type OperationName, type OperationParams } from '@ipython-mcp/protocol';
import { DynamicCatalog } from './dynamic-catalog.js';
import { runtimeOptionsFromSettings, type Settings } from './settings.js';
import { STABLE_TOOLS, STABLE_TOOL_NAMES, findStableTool } from './stable-tools.js';
import { catalogEffectOf, type CatalogEffect, type ResultRules, type StableToolDefinition } from './tool-definition.js';
import { DYNAMIC_TOOL_RESULT, ResultWriter } from './tool-result.js';
import { toMcpTool } from './published-tools.js';
import { statusOf, type SandboxStatus } from './status-report.js';
import { progressReporter } from './progress.js';
import { RelistGate } from './relist-gate.js';
import { takeTimeout, takesOwnTimeout, withTimeoutProperty } from './call-deadline.js';
import { DEFAULT_NAMESPACE, namespaceFilePath } from './namespace-files.js';

type CallToolRequest = z.infer<typeof CallToolRequestSchema>;
type ToolCallExtra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];
import { openJournal, type JournalRecorder } from './journal-recorder.js';
import { serveJournalResource } from './journal-resource.js';
import { restoreNotice } from './state-notice.js';

/** Options of {@link createIpythonMcpServer} and {@link createNamespace}. */
export interface IpythonMcpServerOptions {
  /** Python interpreter for the worker. */
  python: string;
  settings: Settings;
  logger?: Logger | undefined;
  /** Server version reported in `initialize`. */
  version?: string | undefined;
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  /** Keep a warm standby worker (default true). */
  warmStandby?: boolean | undefined;
  forceJsonCodec?: boolean | undefined;
  /** Where the workers run (see {@link RuntimeOptions.backend}; default: local Python processes): tests, embedders. */
  backend?: RuntimeOptions['backend'];
  /**
   * The namespace's name (default `default`). Per-namespace files (the journal; see {@link namespaceFilePath})
   * derive their paths from it, so two namespaces of one server never share a file.
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
   * Check every result against its tool's output schema; a result that fails is a server bug and the call fails.
   * Default: only when `NODE_ENV` is `development` or `test` (result-check.ts says why); production keeps the fast path.
   */
  checkResults?: boolean | undefined;
}

/**
 * What a namespace's sessions share about its `--state` restore: whether the first listing must still ask the
 * worker for the registrations it restored, and whether the first execute still owes the line naming what came back.
 */
interface RestoreDue {
  tools: boolean;
  notice: boolean;
}

/** A server bound to its runtime; close() ends both. */
export interface IpythonMcpServer {
  server: Server;
  runtime: Runtime;
  catalog: DynamicCatalog;
  close(): Promise<void>;
}

/** One MCP session attached to a {@link Namespace}. */
export interface NamespaceSession {
  server: Server;
  /** Detaches the session (its transport closed); the namespace and its runtime go on. */
  release(): void;
}

/**
 * One namespace: one runtime (worker, standby, queue), one dynamic catalog, one journal, shared by every MCP
 * session attached to it. Sessions come and go; only close() ends the runtime.
 */
export interface Namespace {
  readonly name: string;
  readonly runtime: Runtime;
  readonly catalog: DynamicCatalog;
  /** Sessions attached and not yet released. */
  readonly sessionCount: number;
  /** A new MCP server (not yet connected to a transport) whose tools act on this namespace. */
  attach(): NamespaceSession;
  /** Ends the runtime (queued and active requests answer runtime_closed), the journal, then every session. */
  close(): Promise<void>;
}

/** Builds the MCP server (not yet connected to a transport). The worker starts in the background at once. */
export function createIpythonMcpServer(options: IpythonMcpServerOptions): IpythonMcpServer {
  const namespace = createNamespace(options);
  const { server } = namespace.attach();
  return { server, runtime: namespace.runtime, catalog: namespace.catalog, close: () => namespace.close() };
}

/** Builds a namespace with no session yet. The worker starts in the background at once. */
export function createNamespace(options: IpythonMcpServerOptions): Namespace {
  const logger = options.logger ?? silentLogger;
  const name = options.namespace ?? DEFAULT_NAMESPACE;
  const sessions = new Set<{ server: Server; relist: RelistGate }>();
  const catalog = new DynamicCatalog(() => {
    // list_changed reaches every attached session; each keeps its own re-list gate (see RelistGate).
    for (const session of sessions) {
      session.relist.noteNotified();
      session.server.sendToolListChanged().catch(() => undefined);
    }
  });
  // Per-namespace files (journal, --state snapshot) derive their paths from the name; `default` keeps the path given.
  const settings: Settings = {
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
  const journal = openJournal(settings, runtime, logger, options.version ?? '0.0.0');
  runtime.start();
  const restoreDue: RestoreDue = { tools: settings.stateFile !== null, notice: settings.stateFile !== null };
  const status = (): Record<string, unknown> => ({
    ...statusOf(runtime, catalog, journal, options.sandbox),
    ...(options.reportSessions ? { namespace: name, sessions: sessions.size } : {}),
  });
  return {
    name,
    runtime,
    catalog,
    get sessionCount() {
      return sessions.size;
    },
    attach() {
      const relist = new RelistGate();
      const session = { server: createSessionServer(options, runtime, catalog, journal, status, relist, restoreDue), relist };
      sessions.add(session);
      return { server: session.server, release: () => void sessions.delete(session) };
    },
    async close() {
      await runtime.close();
      await journal?.close();
      const open = [...sessions];
      sessions.clear();
      await Promise.all(open.map((session) => session.server.close().catch(() => undefined)));
    },
  };
}

/** One session's MCP server: the stable and dynamic tools, acting on the namespace's runtime and catalog. */
function createSessionServer(
  options: IpythonMcpServerOptions,
  runtime: Runtime,
  catalog: DynamicCatalog,
  journal: JournalRecorder | undefined,
  status: () => Record<string, unknown>,
  relist: RelistGate,
  restoreDue: RestoreDue,
): Server {
  const server = new Server(
    { name: 'ipython-mcp', version: options.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions:
        'One persistent IPython namespace. Use execute to run code and keep state; list/search/inspect to discover it; ' +
        'call_function to call live functions with JSON arguments; register_tool to publish a function as its own tool. ' +
        'runtime_status never waits in the queue. Not a sandbox: code runs with the server user\'s permissions.',
    },
  );
  const results = new ResultWriter({ checkResults: options.checkResults });
  if (journal) serveJournalResource(server, journal);
  reportStartupFailures(server, runtime);
  const maxTimeoutSeconds = options.settings.maxOperationTimeoutSeconds;
  const publishedStableTools = STABLE_TOOLS.map((tool) => toMcpTool(tool, maxTimeoutSeconds));

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const mark = relist.mark();
    // --state: the first worker may restore registrations no session has seen; the first listing asks for them.
    if (catalog.needsDiscovery || restoreDue.tools) {
      if (await catalog.refresh(runtime, extra.signal)) restoreDue.tools = false;
    }
    relist.noteListed(mark);
    const dynamic = catalog.tools().map((tool) => ({ ...tool, inputSchema: withTimeoutProperty(tool.inputSchema, maxTimeoutSeconds) }));
    return { tools: [...publishedStableTools, ...dynamic] };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // A call that changed the tool list answers once the client has re-read it (see RelistGate).
    const mark = relist.mark();
    const result = await callTool(request, extra);
    if (relist.holds(mark)) await relist.settle(mark);
    return result;
  });

  const callTool = async (request: CallToolRequest, extra: ToolCallExtra): Promise<CallToolResult> => {
    const name = request.params.name;
    let args = request.params.arguments ?? {};
    const runOptions: RunOptions = { signal: extra.signal, requestId: extra.requestId };
    const stable = findStableTool(name);
    if (stable !== undefined) {
      if (stable.takesDeadline === true) {
        const taken = takeTimeout(args, maxTimeoutSeconds);
        if (!taken.ok) return badTimeout(results, stable, taken);
        args = taken.args;
        if (taken.timeoutMs !== undefined) runOptions.timeoutMs = taken.timeoutMs;
      }
      // The usual well-formed execute skips zod (plainInput); anything else is checked by the tool's model.
      let data = stable.plainInput?.(args);
      if (data === undefined) {
        const parsed = stable.input.safeParse(args);
        if (!parsed.success) return invalidArguments(results, stable, parsed.error);
        data = parsed.data as Record<string, unknown>;
      }
      if (stable.op === null) return results.success(stable, status());
      const progress = progressReporter(request.params._meta?.progressToken, extra.sendNotification);
      if (progress) runOptions.onEvent = progress.onEvent;
      try {
        const outcome = await runtime.run(stable.op, data as OperationParams<OperationName>, runOptions);
        // Reconcile the snapshot now, so list_changed goes out (with the new revision) before the result.
        if (outcome.ok && mustReconcile(catalogEffectOf(stable), outcome.meta, catalog, runtime)) await catalog.reconcileAfter(runtime);
        const result = stableResult(stable, outcome, catalog, results);
        if (restoreDue.notice && stable.cellContent === true) {
          restoreDue.notice = false;
          const restored = runtime.status().snapshot?.lastRestore;
          if (restored && outcome.meta.epoch === 1) prependLine(result, restoreNotice(restored));
        }
        journal?.stableTool(stable, data, outcome);
        return result;
      } finally {
        if (progress) await progress.settle();
      }
    }
    return callDynamicTool(name, args, runOptions, catalog, runtime, results, journal, maxTimeoutSeconds);
  };

  return server;
}

/** Puts `line` first in the result's text block (a text block of its own when it has none). */
function prependLine(result: CallToolResult, line: string | undefined): void {
  if (line === undefined) return;
  const first = result.content[0];
  if (first?.type === 'text') result.content[0] = { ...first, text: `${line}\n${first.text}` };
  else result.content.unshift({ type: 'text', text: line });
}

/**
 * A start-up failure goes where clients show server problems: an MCP log message (level error) with the setting
 * and the fix, sent once the client has initialized (a notification before that may be dropped). Every tool call
 * then fails with the same text (runtime_unavailable), and runtime_status.error holds it.
 */
function reportStartupFailures(server: Server, runtime: Runtime): void {
  let initialized = false;
  let pending: string | undefined;
  const send = (error: string) => {
    server
      .sendLoggingMessage({ level: 'error', logger: 'ipython-mcp', data: `ipython-mcp cannot run Python code: ${error}` })
      .catch(() => undefined);
  };
  const previous = server.oninitialized;
  server.oninitialized = () => {
    previous?.();
    initialized = true;
    if (pending !== undefined) send(pending);
    pending = undefined;
  };
  runtime.onUnavailable((error) => {
    if (initialized) send(error);
    else pending = error;
  });
}

function invalidArguments(results: ResultWriter, tool: ResultRules, error: z.ZodError): CallToolResult {
  const issues = error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`);
  return results.failure(tool, { code: 'invalid_arguments', message: `invalid arguments for ${tool.name}: ${issues.join('; ')}`.slice(0, 1000) });
}

/** `name`: the tool as the client named it (a dynamic tool's rules are shared, so they do not hold its name). */
function badTimeout(results: ResultWriter, tool: ResultRules, taken: { message: string; details: Record<string, unknown> }, name = tool.name): CallToolResult {
  return results.failure(tool, { code: 'invalid_arguments', message: `invalid arguments for ${name.slice(0, 200)}: ${taken.message}`, details: taken.details });
}

/** The result of a finished stable tool call, the catalog already reconciled when the call needed it. */
function stableResult(tool: StableToolDefinition, outcome: OperationOutcome, catalog: DynamicCatalog, results: ResultWriter): CallToolResult {
  if (!outcome.ok) return results.failure(tool, outcome.error, outcome.meta);
  // The writer only reads the worker's result; a copy is made only for a field the server overrides.
  let structured = outcome.result;
  if (catalogEffectOf(tool) === 'changes') {
    // Explicitly unregistered names become plain unknown tools (not stale ones).
    if (tool.withdrawnTools) catalog.forget(tool.withdrawnTools(outcome.result));
    // Clients see the server's catalog revision (monotonic across worker replacement), never the worker's.
    if ('revision' in structured) structured = { ...structured, revision: catalog.revision };
  }
  return results.success(tool, structured, outcome.meta);
}

async function callDynamicTool(
  name: string,
  args: Record<string, unknown>,
  runOptions: RunOptions,
  catalog: DynamicCatalog,
  runtime: Runtime,
  results: ResultWriter,
  journal: JournalRecorder | undefined,
  maxTimeoutSeconds: number,
): Promise<CallToolResult> {
  if (catalog.get(name) === undefined && catalog.needsDiscovery) await catalog.refresh(runtime, runOptions.signal);
  // One immutable snapshot entry serves the whole call: its validator, and its fingerprint, which the worker
  // checks against the live registration before invoking.
  const entry = catalog.get(name);
  if (entry === undefined) {
    const reason = catalog.staleReason(name);
    if (reason === undefined) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 200)}`);
    return staleFailure(results, name, reason);
  }
  // The deadline argument, unless the function takes a `timeout_seconds` of its own (then it is the function's).
  if (!takesOwnTimeout(entry.registration.input_schema)) {
    const taken = takeTimeout(args, maxTimeoutSeconds);
    if (!taken.ok) return badTimeout(results, DYNAMIC_TOOL_RESULT, taken, name);
    args = taken.args;
    if (taken.timeoutMs !== undefined) runOptions = { ...runOptions, timeoutMs: taken.timeoutMs };
  }
  if (!entry.validate(args)) {
    const problems = (entry.validate.errors ?? [])
      .slice(0, 5)
      .map((error) => `${error.instancePath || '(arguments)'} ${error.message ?? 'is invalid'}`)
      .join('; ');
    return results.failure(DYNAMIC_TOOL_RESULT, {
      code: 'invalid_arguments',
      message: `invalid arguments for ${name}: ${problems}`.slice(0, 1000),
      details: { issues: (entry.validate.errors ?? []).slice(0, 5).map((error) => ({ path: error.instancePath.slice(0, 200), keyword: error.keyword })) },
    });
  }
  const outcome = await runtime.run(
    'call_tool',
    { tool_name: name, arguments: args, fingerprint: entry.registration.fingerprint },
    runOptions,
  );
  journal?.call(entry.registration.name, args, outcome, name);
  if (!outcome.ok) {
    if (outcome.error.code !== 'tool_not_found' && outcome.error.code !== 'stale_registration') return results.failure(DYNAMIC_TOOL_RESULT, outcome.error, outcome.meta);
    // The snapshot was behind the worker: reconcile (and notify) before answering.
    await catalog.reconcileAfter(runtime);
    if (outcome.error.code === 'stale_registration') return results.failure(DYNAMIC_TOOL_RESULT, outcome.error, outcome.meta);
    const reason = catalog.staleReason(name);
    if (reason === undefined) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 200)}`);
    return staleFailure(results, name, reason, outcome.meta);
  }
  // The tool may have changed the namespace, and so other registrations: reconcile in the background (joined, so
  // a burst of calls adds at most one discover to the queue) without holding this result back.
  if (mustReconcile(OPERATION_FACTS.call_tool.catalogEffect, outcome.meta, catalog, runtime)) void catalog.reconcileAfter(runtime);
  return results.success(DYNAMIC_TOOL_RESULT, outcome.result, outcome.meta);
}

/**
 * Whether a successful call must be followed by a `discover`, by the tool's declared catalog effect. When the
 * worker sent its registry revision (`catalog_revision`) for the current epoch, only a revision the snapshot does
 * not reflect needs one: an execute that touched no registration costs no second round trip. Without it (an older
 * worker, or one holding no registrations): registry operations always reconcile, namespace mutations when there
 * are registrations that they could have made stale.
 */
function mustReconcile(effect: CatalogEffect, meta: OperationMeta, catalog: DynamicCatalog, runtime: Runtime): boolean {
  if (effect === 'none') return false;
  const revision = meta.catalogRevision;
  if (revision !== undefined && meta.epoch === runtime.epoch) return !catalog.reflects(revision, meta.epoch);
  return effect === 'changes' || catalog.size > 0;
}

function staleFailure(results: ResultWriter, name: string, reason: string, meta?: OperationMeta): CallToolResult {
  const shown = name.slice(0, 80);
  return results.failure(
    DYNAMIC_TOOL_RESULT,
    { code: 'stale_registration', message: `tool ${JSON.stringify(shown)} is stale (${reason}); register it again`, details: { tool_name: shown, reason } },
    meta,
  );
}
