/** An upstream MCP tool call that its server answered with `isError`: the code sees it as ToolCallError. */
export class UpstreamToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamToolError';
  }
}

interface ContentItem {
  type?: unknown;
  text?: unknown;
  [key: string]: unknown;
}

/**
 * What Python code receives from an upstream tool result:
 * - `structuredContent` when the result has it;
 * - else its text (several text items joined by newlines), parsed when that text is JSON (so a server that
 *   prints JSON gives a dict or list, not a string);
 * - else, for content with images, audio or resources, the content items themselves as dicts;
 * - None for an empty result.
 * A result with `isError: true` throws {@link UpstreamToolError} with its text.
 */
export function upstreamValue(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return result ?? null;
  const { content, structuredContent, isError } = result as { content?: unknown; structuredContent?: unknown; isError?: unknown };
  const items = Array.isArray(content) ? (content as ContentItem[]) : [];
  const texts = items.filter((item) => item.type === 'text' && typeof item.text === 'string').map((item) => item.text as string);
  if (isError === true) throw new UpstreamToolError(texts.join('\n') || 'the tool reported an error without a message');
  if (structuredContent !== undefined && structuredContent !== null) return structuredContent;
  if (items.length === 0) return null;
  if (texts.length < items.length) return items;
  const text = texts.join('\n');
  return parseJsonText(text);
}

/** The JSON a text holds, or the text itself. Only texts that look like JSON are tried, which keeps this cheap. */
function parseJsonText(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return text;
  const first = trimmed[0] ?? '';
  if (!/[[{"\-0-9tfn]/.test(first)) return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}
