import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { timeoutProperty } from './call-deadline.js';
import { detachProperty } from './detached/detached-cells.js';
import { pruneSchema } from '../results/index.js';
import type { StableToolDefinition } from './tool-definition.js';

/**
 * The input schema a tool publishes, sent with every model request, so without what tells a model nothing it needs to
 * choose a tool and its arguments: `$schema` (2020-12 is MCP's default dialect), `propertyNames: {type: string}` (JSON
 * keys are strings), `additionalProperties: {}` (the default), and the length and count bounds of strings and arrays
 * (sized for abuse, far past any real call; the server still enforces them, with an `invalid_arguments` error that
 * names the bound). A nullable `anyOf: [{type: T}, {type: null}]` is written `type: [T, null]`.
 */
export function publishedInputSchema(input: z.ZodObject): Tool['inputSchema'] {
  return pruneSchema(z.toJSONSchema(input, { io: 'input' }), { drop: (key) => UNPUBLISHED_BOUNDS.has(key), rewrite: nullableAsTypeList }) as Tool['inputSchema'];
}

const UNPUBLISHED_BOUNDS = new Set(['minLength', 'maxLength', 'minItems', 'maxItems']);

/** `{anyOf: [{type: T}, {type: 'null'}], ...rest}` as `{type: [T, 'null'], ...rest}`, when T's schema is only a type. */
function nullableAsTypeList(node: Record<string, unknown>): Record<string, unknown> {
  const anyOf = node.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length !== 2 || 'type' in node) return node;
  const [first, second] = anyOf as Record<string, unknown>[];
  const simple = (each: Record<string, unknown> | undefined) => each !== undefined && Object.keys(each).length === 1 && typeof each.type === 'string';
  if (!simple(first) || !simple(second) || second!.type !== 'null' || first!.type === 'null') return node;
  const { anyOf: _, ...rest } = node;
  return { ...rest, type: [first!.type, 'null'] };
}

/** A stable tool as tools/list publishes it; a tool that takes a per-call deadline states the server's bound. */
export function toMcpTool(tool: StableToolDefinition, maxTimeoutSeconds: number): Tool {
  const inputSchema = publishedInputSchema(tool.input);
  if (tool.takesDeadline === true) inputSchema.properties = { ...inputSchema.properties, timeout_seconds: timeoutProperty(maxTimeoutSeconds) };
  if (tool.detachable === true) inputSchema.properties = { ...inputSchema.properties, detach_after_seconds: detachProperty() };
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema,
    outputSchema: tool.outputSchema as Tool['outputSchema'],
    annotations: {
      title: tool.title,
      readOnlyHint: tool.annotations.readOnly,
      destructiveHint: !tool.annotations.readOnly,
      openWorldHint: tool.annotations.openWorld === true,
    },
  };
}
