import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  CODE_INPUT_DESCRIPTION,
  CodeMode,
  CodeModeError,
  IPythonKernel,
  RESTART_INPUT_DESCRIPTION,
  consentSummary,
  type AskConsent,
  type CodeModeReturn,
  type ConsentGate,
  type NestedToolCall,
  type PolicySettings,
  type JsonSchema,
  type ToolDefinition,
} from '@ipython-mcp/code-mode';
import { closeOnStdioEnd, StdioEraRouter, stdioTransport } from '@ipython-mcp/mcp-server';
import { Server as ModernServer } from '@modelcontextprotocol/server';
import type { Logger, WorkerBackend } from '@ipython-mcp/worker-supervisor';
import type { CodeModeServersConfig } from './code-mode-config.js';
import { ASK_TIMEOUT_MS, canElicitForm, cannotElicit, codeModeConsentGate, consentAnswerOf, consentElicitation } from './code-mode-consent.js';
import { functionNames } from './code-mode-names.js';
import { ConsentRounds } from './code-mode-rounds.js';
import { UpstreamServer } from './upstream-server.js';

/** The one tool this server offers. */
export const RUN_CODE_TOOL = 'run_code';

/** Options of {@link CodeModeMcpServer}. */
export interface CodeModeMcpServerOptions {
  config: CodeModeServersConfig;
  /** The kernel's Python interpreter. */
  python: string;
  version: string;
  logger?: Logger | undefined;
  /** Where the kernel lives when it is not a local worker: a Jupyter kernel (`--jupyter`), closed with the server. */
  kernelBackend?: CodeModeKernelBackend | undefined;
  /** `--consent` flags as settings: they come before the servers file's (`consent` in {@link CodeModeServersConfig}). */
  consentFlags?: PolicySettings | undefined;
}

/** A worker backend for run_code's kernel, with whether a warm standby may run beside it and how to let it go. */
export interface CodeModeKernelBackend {
  readonly backend: WorkerBackend;
  /** False for a kernel someone else owns: a second worker would take it over from the first. */
  readonly warmStandby: boolean;
  /** The kernel is someone else's: never restarted, so run_code's `restart: true` is refused. */
  readonly attached: boolean;
  close(): Promise<void>;
}

// An MCP client retries as it sees fit; Code Mode's own retry budget is for agent loops, not for a server.
const UNLIMITED_RETRIES = Number.MAX_SAFE_INTEGER;
/**
 * How long the first tools/list and run_code wait for upstream servers to start. Clients give a server about 30 s
 * to answer (Claude Code's MCP_TIMEOUT), so one slow upstream must not hold the answer that long: a server still
 * starting then is listed as starting, and its functions arrive with a tools/list_changed once it is up.
 */
const READY_WAIT_MS = 10_000;

/**
 * Code Mode over MCP servers: starts every upstream server as an MCP client, and serves one `run_code` tool whose
 * persistent kernel has every upstream tool as a synchronous Python function. An upstream list change rebuilds the
 * functions and the description and is passed on as `tools/list_changed`.
 */
export class CodeModeMcpServer {
  readonly server: Server;
  readonly upstreams: UpstreamServer[];
  private readonly kernel: IPythonKernel;
  private readonly kernelBackend: CodeModeKernelBackend | undefined;
  private readonly config: CodeModeServersConfig;
  private codeMode: CodeMode;
  /** The session's consent: each tool's policy and the tools the person allowed for the rest of it. */
  readonly consent: ConsentGate;
  private readonly rounds = new ConsentRounds();
  /** `server.tool` of each function, for run_code's summary of what ran. */
  private labels = new Map<string, string>();
  private description = '';
  private ready: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;

  private readonly version: string;

  constructor(options: CodeModeMcpServerOptions) {
    this.config = options.config;
    this.version = options.version;
    const kernelBackend = options.kernelBackend;
    this.kernelBackend = kernelBackend;
    this.kernel = new IPythonKernel({
      python: options.python,
      warmStandby: kernelBackend?.warmStandby ?? true,
      logger: options.logger,
      ...(kernelBackend === undefined ? {} : { backend: kernelBackend.backend, attached: kernelBackend.attached }),
    });
    this.upstreams = options.config.servers.map((config) => new UpstreamServer(config, options.version));
    this.consent = codeModeConsentGate(options.config.consent, options.consentFlags ?? {});
    this.codeMode = this.build();
    this.server = new Server(
      { name: 'ipython-mcp-code-mode', version: options.version },
      { capabilities: { tools: { listChanged: true } } },
    );
    this.server.setRequestHandler(ListToolsRequestSchema, () => this.listTools());
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.callTool(request.params, extra.signal, this.legacyAsk(extra)));
  }

  /** The same run_code for a protocol 2026-07-28 client (`server/discover`), on the v2 SDK's server. */
  modernServer(): ModernServer {
    const server = new ModernServer({ name: 'ipython-mcp-code-mode', version: this.version }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler('tools/list', async () => (await this.listTools()) as never);
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const round = {
        requestState: ctx.mcpReq.requestState<string>(),
        inputResponses: ctx.mcpReq.inputResponses,
        envelope: ctx.mcpReq.envelope as Record<string, unknown> | undefined,
        signal: ctx.mcpReq.signal,
      };
      // A question for the person is an `input_required` answer; the run waits for the retried call.
      return (await this.rounds.round(round, (ask, signal) => this.callTool(request.params, signal, ask))) as never;
    });
    return server;
  }

  /**
   * Asking on the 2025 era: an `elicitation/create` request to the client, sent as part of the tools/call (over HTTP
   * it travels on that call's stream). A client that did not declare elicitation is not asked: the call is refused.
   */
  private legacyAsk(extra: RequestHandlerExtra<ServerRequest, ServerNotification>): AskConsent {
    return async (question, signal) => {
      const clientName = this.server.getClientVersion()?.name;
      if (!canElicitForm(this.server.getClientCapabilities())) return cannotElicit(clientName);
      const result = await extra.sendRequest({ method: 'elicitation/create', params: consentElicitation(question) }, ElicitResultSchema, {
        timeout: ASK_TIMEOUT_MS,
        ...(signal === undefined ? {} : { signal }),
      });
      return consentAnswerOf(result, clientName);
    };
  }

  private async listTools(): Promise<{ tools: Tool[] }> {
    await this.ready;
    return { tools: [this.runCodeTool()] };
  }

  private async callTool(params: { name: string; arguments?: Record<string, unknown> | undefined }, signal: AbortSignal, ask: AskConsent): Promise<CallToolResult> {
    await this.ready;
    if (params.name !== RUN_CODE_TOOL) return errorResult(`unknown tool "${params.name}": this server has only run_code`);
    return this.runCode(params.arguments ?? {}, signal, ask);
  }

  /**
   * Starts the upstream servers (all at once) and the kernel. Requests wait until every upstream has settled, or
   * {@link READY_WAIT_MS} at most.
   */
  start(): void {
    for (const upstream of this.upstreams) upstream.onChange = () => this.changed();
    const started = Promise.all(this.upstreams.map((upstream) => upstream.start()));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, READY_WAIT_MS);
      timer.unref();
    });
    this.ready = Promise.race([started.then(() => clearTimeout(timer)), waited]).then(() => {
      this.codeMode = this.build();
    });
    // The first run_code call should not pay for the kernel's start; a failure shows on that call instead.
    void this.kernel.start().catch(() => undefined);
  }

  /** run_code's description as the client sees it now. */
  get runCodeDescription(): string {
    return this.description;
  }

  /** Ends every upstream server and the kernel. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.rounds.close();
      await Promise.allSettled([...this.upstreams.map((upstream) => upstream.close()), this.kernel.shutdown()]);
      // Every kernel the backend started is shut down; an attached one is left running.
      await this.kernelBackend?.close().catch(() => undefined);
      await this.server.close().catch(() => undefined);
    })();
    return this.closing;
  }

  /** SIGKILL for any upstream child still alive: for the process `exit` hook. */
  killUpstreamsNow(): void {
    for (const upstream of this.upstreams) upstream.killNow();
  }

  private async runCode(input: Record<string, unknown>, signal: AbortSignal, ask: AskConsent): Promise<CallToolResult> {
    const calls: NestedToolCall[] = [];
    try {
      const result = await this.codeMode.runCode(input, { signal, ask, nestedCalls: calls });
      return this.withSummary(toMcpResult(result.return), calls);
    } catch (error) {
      if (CodeModeError.isInstance(error)) return this.withSummary(errorResult(error.message), calls);
      throw error;
    }
  }

  /** The result with a last text block saying what each nested call's consent decision was, counted per tool. */
  private withSummary(result: CallToolResult, calls: readonly NestedToolCall[]): CallToolResult {
    const summary = consentSummary(calls.map((call) => ({ label: this.labels.get(call.toolName) ?? call.toolName, decision: call.decision })));
    if (summary === '') return result;
    return { ...result, content: [...result.content, { type: 'text', text: summary }] };
  }

  private runCodeTool(): Tool {
    return {
      name: RUN_CODE_TOOL,
      description: this.description,
      inputSchema: {
        type: 'object',
        properties: {
          code: { type: 'string', description: CODE_INPUT_DESCRIPTION },
          restart: { type: 'boolean', description: RESTART_INPUT_DESCRIPTION, default: false },
          timeout_seconds: this.codeMode.timeoutSecondsSchema,
        },
        required: ['code'],
        additionalProperties: false,
      },
    };
  }

  private changed(): void {
    if (this.closing !== undefined) return;
    const before = this.description;
    this.codeMode = this.build();
    if (this.description !== before) void this.server.sendToolListChanged().catch(() => undefined);
  }

  private build(): CodeMode {
    const entries = this.upstreams.flatMap((upstream) => upstream.tools.map((tool) => ({ upstream, tool })));
    const names = functionNames(entries.map(({ upstream, tool }) => ({ server: upstream.config.name, prefix: upstream.config.prefix, tool: tool.name })));
    // Annotations may have changed with the list: policies are resolved again (the session's yeses stay).
    this.consent.reset();
    this.labels = new Map(entries.map(({ upstream, tool }, index) => [names[index] ?? tool.name, `${upstream.config.name}.${tool.name}`]));
    const definitions = entries.map(({ upstream, tool }, index): ToolDefinition => {
      const name = names[index] ?? tool.name;
      // After the tool's own words, so the summary line the description shows is still its first sentence.
      const origin = name === tool.name ? '' : `\n\n(The tool "${tool.name}" of the MCP server "${upstream.config.name}".)`;
      return {
        name,
        group: upstream.config.name,
        description: `${tool.description ?? ''}${origin}`.trim(),
        inputSchema: tool.inputSchema as JsonSchema,
        outputSchema: tool.outputSchema as JsonSchema | undefined,
        annotations: tool.annotations,
        originalName: tool.name,
        // The upstream server validates its own input; a second check here could only disagree with it.
        validate: (value) => ({ success: true, value }),
        execute: (value: Record<string, unknown>, context) => upstream.call(tool.name, value, context.signal),
      };
    });
    const codeMode = new CodeMode({
      tools: definitions,
      kernel: this.kernel,
      maxToolCalls: this.config.maxToolCalls,
      timeout: this.config.timeoutMs,
      maxCodeRetries: UNLIMITED_RETRIES,
      descriptionBudget: this.config.descriptionBudget,
      consent: this.consent,
      groups: this.upstreams.map((upstream) => ({ name: upstream.config.name, status: serverStatus(upstream) })),
      descriptionNote:
        'The functions are the tools of these MCP servers, listed by server. A tool whose name several servers offer ' +
        "is prefixed with its server's name (`<server>_<tool>`). A tool returns its structured content when it has " +
        'one, else its text (parsed when the text is JSON); an error result raises ToolCallError.',
    });
    this.description = codeMode.description;
    return codeMode;
  }
}

/** The status line of an upstream server in run_code's description. */
function serverStatus(upstream: UpstreamServer): string {
  const count = upstream.tools.length;
  if (upstream.state === 'ready' || upstream.state === 'starting') return `${upstream.state}, ${count} tool${count === 1 ? '' : 's'}`;
  const effect = count > 0 ? 'its functions raise ToolCallError' : 'none of its tools are defined';
  return `NOT AVAILABLE (${upstream.reason}); ${effect}`;
}

/** A run_code return as MCP content: JSON text for a value; text and image content for a content list. */
export function toMcpResult(value: CodeModeReturn): CallToolResult {
  if (value.kind === 'value') return { content: [{ type: 'text', text: JSON.stringify(value.value) }] };
  return {
    content: value.parts.map((part) =>
      part.type === 'text' ? { type: 'text' as const, text: part.text } : { type: 'image' as const, data: part.data, mimeType: part.mediaType },
    ),
  };
}

function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/**
 * Serves Code Mode over this process's stdin/stdout, in the era the client opens with (2025 `initialize` or
 * 2026-07-28 `server/discover`, as `ipython-mcp` itself: decision 0012). Stdin EOF, a transport close, SIGTERM and SIGINT all end the
 * upstream servers and the kernel, then resolve `closed`.
 */
export async function serveCodeModeStdio(options: CodeModeMcpServerOptions): Promise<{ instance: CodeModeMcpServer; closed: Promise<void> }> {
  const instance = new CodeModeMcpServer(options);
  // A hard exit (process.exit elsewhere) still takes the upstream servers down.
  process.once('exit', () => instance.killUpstreamsNow());
  const closed = closeOnStdioEnd(instance.server, () => instance.close());
  instance.start();
  const router = new StdioEraRouter(stdioTransport(), () => instance.modernServer());
  await instance.server.connect(router.legacy);
  await router.start();
  return { instance, closed };
}
