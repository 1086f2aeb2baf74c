import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { selectsTool, type UpstreamServerConfig } from './code-mode-config.js';
import { upstreamValue } from './upstream-result.js';

/** Where an upstream server is in its life. */
export type UpstreamState = 'starting' | 'ready' | 'failed' | 'exited' | 'closed';

const STDERR_TAIL_CHARS = 2000;
const MAX_REASON_CHARS = 300;

/**
 * One upstream MCP server, run as a child process and spoken to as an MCP client over stdio. It never throws
 * out of {@link UpstreamServer.start}: a server that does not start, or exits later, is a state with a reason,
 * and every call to its tools then fails with that reason.
 */
export class UpstreamServer {
  readonly config: UpstreamServerConfig;
  /** The selected tools of the last listing (kept after an exit, so calls get a clear error, not a NameError). */
  tools: Tool[] = [];
  /** Called after the tool list or the state changed. */
  onChange: () => void = () => undefined;

  private stateValue: UpstreamState = 'starting';
  private reasonValue = '';
  private client: Client | undefined;
  private transport: StdioClientTransport | undefined;
  private stderrTail = '';
  private refreshing: Promise<void> = Promise.resolve();

  constructor(config: UpstreamServerConfig, private readonly clientVersion: string) {
    this.config = config;
  }

  get state(): UpstreamState {
    return this.stateValue;
  }

  /** Why the server is not ready ('' when it is). */
  get reason(): string {
    return this.reasonValue;
  }

  /** The child's pid while it runs. */
  get pid(): number | null {
    return this.transport?.pid ?? null;
  }

  /** Starts the process, initializes MCP and lists the tools, within the configured startup timeout. */
  async start(): Promise<void> {
    const transport = new StdioClientTransport({
      command: this.config.command,
      args: this.config.args,
      // The whole environment, as a shell would pass it: servers commonly need more than the SDK's short list.
      env: { ...(process.env as Record<string, string>), ...this.config.env },
      ...(this.config.cwd === undefined ? {} : { cwd: this.config.cwd }),
      stderr: 'pipe',
    });
    this.transport = transport;
    transport.stderr?.on('data', (chunk: Buffer) => this.forwardStderr(chunk.toString('utf8')));
    const client = new Client({ name: 'ipython-mcp-code-mode', version: this.clientVersion }, { capabilities: {} });
    this.client = client;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.refreshing = this.refreshing.then(() => this.refresh());
    });
    client.onclose = () => this.onClosed();
    // Transport errors also surface as a close or a failed request; without a handler the SDK would log them.
    client.onerror = () => undefined;
    const timeout = this.config.startupTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      this.tools = await this.listSelected(timeout);
      if (this.stateValue === 'starting') this.stateValue = 'ready';
    } catch (error) {
      if (this.stateValue === 'starting') {
        this.stateValue = 'failed';
        this.reasonValue = `it did not start: ${this.describe(error)}`;
      }
      await transport.close().catch(() => undefined);
    }
    this.onChange();
  }

  /** Calls one of its tools and returns the value for Python ({@link upstreamValue}); throws a clear Error. */
  async call(toolName: string, input: Record<string, unknown>, signal: AbortSignal | undefined): Promise<unknown> {
    const client = this.client;
    if (this.stateValue !== 'ready' || client === undefined) {
      throw new Error(`the MCP server "${this.config.name}" is not available (${this.reasonValue || this.stateValue}), so its tool "${toolName}" cannot be called`);
    }
    let result: unknown;
    try {
      result = await client.callTool({ name: toolName, arguments: input }, undefined, {
        timeout: this.config.callTimeoutMs,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (this.stateValue !== 'ready') {
        throw new Error(`the MCP server "${this.config.name}" went away during the call to "${toolName}" (${this.reasonValue || this.stateValue})`);
      }
      throw new Error(`the call to "${toolName}" on the MCP server "${this.config.name}" failed: ${this.describe(error)}`);
    }
    return upstreamValue(result);
  }

  /** Ends the server: stdin closed, then SIGTERM, then SIGKILL (the SDK transport's escalation). */
  async close(): Promise<void> {
    this.stateValue = 'closed';
    this.reasonValue = 'the Code Mode server is shutting down';
    await this.transport?.close().catch(() => undefined);
  }

  /** Last resort at process exit: a child that is still there gets SIGKILL. */
  killNow(): void {
    const pid = this.pid;
    if (pid === null) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  private async listSelected(timeout: number): Promise<Tool[]> {
    const client = this.client;
    if (client === undefined) return [];
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools.filter((tool) => selectsTool(this.config.tools, tool.name));
  }

  private async refresh(): Promise<void> {
    if (this.stateValue !== 'ready') return;
    try {
      this.tools = await this.listSelected(this.config.startupTimeoutMs);
    } catch {
      // The old list stays; a server that went away is reported through onClosed.
      return;
    }
    this.onChange();
  }

  private onClosed(): void {
    if (this.stateValue === 'closed' || this.stateValue === 'failed') return;
    const wasStarting = this.stateValue === 'starting';
    this.stateValue = wasStarting ? 'failed' : 'exited';
    const lastLine = this.stderrTail.trim().split('\n').at(-1)?.trim() ?? '';
    const tail = lastLine === '' ? '' : `; its last stderr line: ${lastLine.slice(0, MAX_REASON_CHARS)}`;
    this.reasonValue = `${wasStarting ? 'it did not start: ' : ''}the process exited${tail}`;
    if (!wasStarting) this.onChange();
  }

  private forwardStderr(text: string): void {
    this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
    // Our stderr is the log; the MCP stdout never sees an upstream's output.
    const lines = text.split('\n').filter((line) => line !== '');
    for (const line of lines) process.stderr.write(`[${this.config.name}] ${line}\n`);
  }

  private describe(error: unknown): string {
    const text = error instanceof Error ? error.message : String(error);
    return text.slice(0, MAX_REASON_CHARS);
  }
}
