import type { JsonSchema, ToolAnnotations, ToolDefinition } from '@ipython-mcp/code-mode';

/** One tool as an MCP server lists it. */
export interface McpToolInfo {
  name: string;
  description?: string | undefined;
  inputSchema: object;
  outputSchema?: object | undefined;
  /** What the server declares about the tool's effects; the consent policy's default reads it. */
  annotations?: ToolAnnotations | undefined;
}

/**
 * The part of an MCP client Code Mode needs: `listTools` and `callTool`, as the MCP TypeScript SDK's `Client`
 * has them. Any object with these methods works.
 */
export interface McpClientLike {
  listTools(params?: { cursor?: string }): Promise<{ tools: McpToolInfo[]; nextCursor?: string | undefined }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: { signal?: AbortSignal },
  ): Promise<unknown>;
}

/** Options of {@link mcpToolDefinitions}. */
export interface McpToolOptions {
  /** Keep only the tools this returns true for. */
  filter?: ((tool: McpToolInfo) => boolean) | undefined;
  /** The group run_code's description lists these tools under (the server's name, say); unset, ungrouped. */
  group?: string | undefined;
}

/** An MCP tool call that the server reported as failed (`isError`). */
export class McpToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpToolError';
  }
}

/**
 * Lists an MCP client's tools (every page) as Code Mode tool definitions. In the kernel they are functions like
 * any other; names that are not Python identifiers are renamed (`get-weather` → `get_weather`). Each call goes
 * to the server through `callTool`; see {@link mcpResultValue} for what the code gets back. Their annotations go
 * with them: a tool that does not declare itself read-only and closed-world asks the host's `consent.approve`
 * before each call from code (see `IPythonCodeModeOptions.consent`).
 */
export async function mcpToolDefinitions(client: McpClientLike, options: McpToolOptions = {}): Promise<ToolDefinition[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools
    .filter((tool) => options.filter?.(tool) ?? true)
    .map((tool) => ({
      name: tool.name,
      description: tool.description,
      ...(options.group === undefined ? {} : { group: options.group }),
      inputSchema: tool.inputSchema as JsonSchema,
      outputSchema: tool.outputSchema as JsonSchema | undefined,
      // Always an object: a tool of an MCP server is judged by MCP's rule, with its defaults for what it leaves out.
      annotations: tool.annotations ?? {},
      execute: async (input: Record<string, unknown>, context) =>
        mcpResultValue(
          await client.callTool({ name: tool.name, arguments: input }, undefined, context.signal === undefined ? {} : { signal: context.signal }),
        ),
    }));
}

/**
 * What code receives from an MCP tool result: its `structuredContent` when present; else its text (several text
 * items joined by newlines); else the content list itself. A result with `isError` throws {@link McpToolError}
 * with its text, which the code sees as ToolCallError.
 */
export function mcpResultValue(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return result;
  const { content, structuredContent, isError } = result as { content?: unknown; structuredContent?: unknown; isError?: unknown };
  const items = Array.isArray(content) ? (content as Array<{ type?: unknown; text?: unknown }>) : [];
  const texts = items.filter((item) => item.type === 'text' && typeof item.text === 'string').map((item) => item.text as string);
  if (isError === true) throw new McpToolError(texts.join('\n') || 'the MCP tool reported an error');
  if (structuredContent !== undefined && structuredContent !== null) return structuredContent;
  if (items.length > 0 && texts.length === items.length) return texts.join('\n');
  return items.length > 0 ? items : result;
}

/** Whether `value` has the shape of an MCP `CallToolResult` (a `content` list). */
export function isMcpResult(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content);
}
