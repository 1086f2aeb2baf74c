import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CreateTaskResult } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '@ipython-mcp/worker-supervisor';
import {
  CellTasks,
  STABLE_TOOLS,
  TASKS_CAPABILITY,
  toMcpTool,
  withDetachProperty,
  withTaskSupport,
  withTimeoutProperty,
  type DynamicCatalog,
  type RelistGate,
  type RequestJobs,
  type RestoreFollowUp,
  type ToolCaller,
} from '../tools/index.js';
import { serveResources, type DocumentResources, type JournalRecorder, type OutputResources } from '../resources/index.js';
import { ResultWriter } from '../results/index.js';

/** What one session's MCP server is wired to: its namespace's parts, and the session's own re-list gate. */
export interface SessionServerParts {
  /** Server version reported in `initialize`. */
  version: string;
  runtime: Runtime;
  catalog: DynamicCatalog;
  journal: JournalRecorder | undefined;
  /** The namespace's outputs (spill files, images) as resources, linked from results. */
  outputs: OutputResources;
  restore: RestoreFollowUp;
  caller: ToolCaller;
  relist: RelistGate;
  /**
   * The connection's detached cells by request id, fed by its transport with every client message (so a cancel
   * after a call detached stops its cell). None over stateless HTTP, where closing the stream is the cancel.
   */
  calls?: RequestJobs | undefined;
  /** The largest `timeout_seconds` a call may ask for (published in every tool's input schema). */
  maxTimeoutSeconds: number;
  /** Check each result against its tool's output schema (see {@link ResultWriter}). */
  checkResults: boolean | undefined;
  /** Resources the backend serves beside the namespace's own. */
  documents?: DocumentResources | undefined;
}

export const INSTRUCTIONS =
  'One persistent IPython namespace. Use execute to run code and keep state; list/search/inspect to discover it; ' +
  'call_function to call live functions with JSON arguments; register_tool to publish a function as its own tool. ' +
  "runtime_status never waits in the queue. Not a sandbox: code runs with the server user's permissions.";

/**
 * One session's MCP server: the SDK's request handlers over the namespace's tool caller and catalog. tools/list
 * publishes the stable tools and the catalog snapshot; tools/call hands the call to the {@link ToolCaller}.
 */
export function createSessionServer(parts: SessionServerParts): Server {
  const { runtime, relist, maxTimeoutSeconds } = parts;
  // The namespace's detached cells as MCP tasks: the SDK serves tasks/get, result, list and cancel through them.
  const tasks = new CellTasks(parts.caller);
  const server = new Server(
    { name: 'ipython-mcp', version: parts.version },
    { capabilities: { tools: { listChanged: true }, logging: {}, tasks: TASKS_CAPABILITY }, instructions: INSTRUCTIONS, taskStore: tasks },
  );
  const results = new ResultWriter({ checkResults: parts.checkResults, outputs: parts.outputs });
  serveResources(server, parts.outputs, parts.journal, parts.documents);
  tellClientName(server, parts.documents);
  reportStartupFailures(server, runtime);
  // The tools that may run as MCP tasks say so (execution.taskSupport): the stable ones once, here.
  const publishedStableTools = withTaskSupport(STABLE_TOOLS.map((tool) => toMcpTool(tool, maxTimeoutSeconds)));

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => ({ tools: await listTools(parts, publishedStableTools, extra.signal) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
    const call = { name: request.params.name, args: request.params.arguments ?? {}, requestId: extra.requestId, sendNotification: extra.sendNotification, results, calls: parts.calls };
    // A task-augmented call answers with its task at once; the call goes on as a detached cell (cell-tasks.ts).
    if (request.params.task !== undefined) return tasks.create(call);
    // A call that changed the tool list answers once the client has re-read it (see RelistGate).
    const mark = relist.mark();
    const result = await parts.caller.call({ ...call, signal: extra.signal, progressToken: request.params._meta?.progressToken });
    if (relist.holds(mark)) await relist.settle(mark);
    return result;
  });

  return server;
}

/** The client's name from `initialize`, for what the backend writes on the agent's behalf (the notebook's cells). */
function tellClientName(server: Server, documents: DocumentResources | undefined): void {
  if (documents?.clientNamed === undefined) return;
  const previous = server.oninitialized;
  server.oninitialized = () => {
    previous?.();
    const name = server.getClientVersion()?.name;
    if (typeof name === 'string') documents.clientNamed?.(name);
  };
}

/**
 * The tool list of one session (both protocol eras): the stable tools as published once, then the catalog's
 * snapshot. --state: the first worker may restore registrations no session has seen; the first listing asks for them.
 */
export async function listTools(parts: SessionServerParts, publishedStableTools: Tool[], signal: AbortSignal): Promise<Tool[]> {
  const { runtime, catalog, relist, restore, maxTimeoutSeconds } = parts;
  const mark = relist.mark();
  if (catalog.needsDiscovery || restore.toolsDue) {
    if (await catalog.refresh(runtime, signal)) restore.toolsListed();
  }
  relist.noteListed(mark);
  const dynamic = catalog.tools().map((tool) => ({ ...tool, inputSchema: withDetachProperty(withTimeoutProperty(tool.inputSchema, maxTimeoutSeconds)) }));
  return [...publishedStableTools, ...(parts.documents?.tools?.list(maxTimeoutSeconds) ?? []), ...withTaskSupport(dynamic)];
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
