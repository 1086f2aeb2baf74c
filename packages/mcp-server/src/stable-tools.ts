import type { OperationName } from '@ipython-mcp/protocol';
import { z } from 'zod';
import { compactOutputSchema, flag } from './output-schemas.js';

/** A stable tool: its MCP description, input model and output schema. Handlers live in server.ts. */
export interface StableToolDefinition {
  name: StableToolName;
  title: string;
  description: string;
  input: z.ZodObject;
  /**
   * The arguments as `input` returns them, for a well-formed call, checked by hand because it runs on every call;
   * `undefined` hands the arguments to `input`, which then accepts them or words the error. It accepts only what
   * `input` accepts and returns what `input` returns (stable-tools.test.ts holds them equal).
   */
  plainInput?: (args: Record<string, unknown>) => Record<string, unknown> | undefined;
  outputSchema: Record<string, unknown>;
  /** The worker operation it maps to; `null` for runtime_status, which never reaches the worker. */
  op: OperationName | null;
  readOnly: boolean;
  /** Takes the optional per-call deadline `timeout_seconds` (call-deadline.ts), bounded by the server's setting. */
  takesDeadline?: true;
  /**
   * What the tool does to the dynamic tool catalog: `changes` (registry operations: reconcile after every call),
   * `may-change` (namespace mutations can make registrations stale: reconcile when there are registrations and the
   * worker's `catalog_revision` moved, or when it sent none), `none` (never reconcile).
   */
  catalogEffect: CatalogEffect;
}

/** A stable tool's effect on the dynamic tool catalog (see {@link StableToolDefinition.catalogEffect}). */
export type CatalogEffect = 'none' | 'may-change' | 'changes';

/** The eleven stable tool names. */
export const STABLE_TOOL_NAMES = [
  'execute',
  'call_function',
  'list',
  'search',
  'inspect',
  'reload',
  'remove',
  'reset',
  'register_tool',
  'unregister_tool',
  'runtime_status',
] as const;
/** One stable tool name. */
export type StableToolName = (typeof STABLE_TOOL_NAMES)[number];

const identifier = z.string().min(1).max(512);

/**
 * execute's arguments when they are exactly `{code: <string>}`, as its strict model returns them. Like zod's strict
 * object it reads `code` and every enumerable key (`for...in`); any other key, or a `code` that is not a string,
 * goes to the model.
 */
export function plainExecuteInput(args: Record<string, unknown>): { code: string } | undefined {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
  for (const key in args) if (key !== 'code') return undefined;
  const code = args.code;
  return typeof code === 'string' ? { code } : undefined;
}

/** Every stable tool, in the order tools/list publishes them. */
export const STABLE_TOOLS: readonly StableToolDefinition[] = [
  {
    name: 'execute',
    title: 'Execute Python',
    op: 'execute',
    readOnly: false,
    takesDeadline: true,
    catalogEffect: 'may-change',
    description:
      'Run Python, magics and `!` shell in the persistent IPython namespace. Returns stdout/stderr (bounded, with ' +
      'omitted counts), the last value, displays/images and errors. Long work: set timeout_seconds.',
    input: z.object({ code: z.string() }).strict(),
    plainInput: plainExecuteInput,
    outputSchema: compactOutputSchema('execute'),
  },
  {
    name: 'call_function',
    title: 'Call a live function',
    op: 'call_function',
    readOnly: false,
    takesDeadline: true,
    catalogEffect: 'may-change',
    description:
      'Call a live callable by name or dotted path (never evaluated) with JSON keyword arguments; returns its value, ' +
      'which must be JSON.',
    input: z
      .object({
        name: identifier,
        arguments: z.record(z.string(), z.unknown()).default({}),
      })
      .strict(),
    outputSchema: compactOutputSchema('call_function'),
  },
  {
    name: 'list',
    title: 'List functions',
    op: 'list',
    readOnly: true,
    catalogEffect: 'none',
    description:
      "List functions with signatures and docstrings (top-level and configured modules', dotted) for call_function.",
    input: z.object({}).strict(),
    outputSchema: compactOutputSchema('list'),
  },
  {
    name: 'search',
    title: 'Search the namespace',
    op: 'search',
    readOnly: true,
    catalogEffect: 'none',
    description:
      'Find names (substring, any case, or exact) among variables, functions, classes and modules, with type, shape ' +
      'and short repr.',
    input: z
      .object({
        query: z.string().max(512),
        exact: z.boolean().default(false),
        kinds: z.array(z.enum(['function', 'class', 'module', 'variable', 'other'])).optional(),
      })
      .strict(),
    outputSchema: compactOutputSchema('search'),
  },
  {
    name: 'inspect',
    title: 'Inspect a live object',
    op: 'inspect',
    readOnly: true,
    catalogEffect: 'none',
    description:
      'Describe a live object by name or dotted path: type, signature, docs, shape, safe repr. Runs no user code.',
    input: z.object({ name: identifier }).strict(),
    outputSchema: compactOutputSchema('inspect'),
  },
  {
    name: 'reload',
    title: 'Reload modules',
    op: 'reload',
    readOnly: false,
    catalogEffect: 'may-change',
    description:
      'Reload these modules (not their dependencies) and rebind every name bound to the old ones.',
    input: z.object({ modules: z.array(z.string().min(1).max(512)).min(1).max(100) }).strict(),
    outputSchema: compactOutputSchema('reload'),
  },
  {
    name: 'remove',
    title: 'Remove names',
    op: 'remove',
    readOnly: false,
    catalogEffect: 'changes',
    description:
      'Delete top-level names; reports each as removed, refused (private, IPython\'s own, configured modules) or unknown.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(10_000) }).strict(),
    outputSchema: compactOutputSchema('remove'),
  },
  {
    name: 'reset',
    title: 'Reset the namespace',
    op: 'reset',
    readOnly: false,
    catalogEffect: 'changes',
    description:
      'Delete every user-created name and all dynamic tools, restoring IPython\'s and configured modules\' bindings.',
    input: z.object({}).strict(),
    outputSchema: compactOutputSchema('reset'),
  },
  {
    name: 'register_tool',
    title: 'Publish a callable as a tool',
    op: 'register_tool',
    readOnly: false,
    catalogEffect: 'changes',
    description:
      'Publish a top-level callable as an MCP tool, input schema from its annotations; an incompatible redefinition ' +
      'makes it stale until registered again.',
    input: z
      .object({
        name: z.string().min(1).max(512),
        tool_name: z.string().min(1).max(512).nullable().default(null),
        description: z.string().max(100_000).nullable().default(null),
      })
      .strict(),
    outputSchema: compactOutputSchema('register_tool'),
  },
  {
    name: 'unregister_tool',
    title: 'Withdraw dynamic tools',
    op: 'unregister_tool',
    readOnly: false,
    catalogEffect: 'changes',
    description: 'Withdraw dynamic tools by name; reports unknown names.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(1000) }).strict(),
    outputSchema: compactOutputSchema('unregister_tool'),
  },
  {
    name: 'runtime_status',
    title: 'Runtime status',
    op: null,
    readOnly: true,
    catalogEffect: 'none',
    description:
      'Worker state, epoch, queue, running call, last interruption, memory; answers even while code runs.',
    input: z.object({}).strict(),
    outputSchema: {
      type: 'object',
      properties: {
        state: { type: 'string', enum: ['starting', 'ready', 'busy', 'recovering', 'unavailable', 'closed'] },
        epoch: { type: 'integer' },
        queue_depth: { type: 'integer', default: 0 },
        active: flag('An operation is running.'),
        active_elapsed_s: { type: 'number', description: 'While one runs: seconds since its dispatch.' },
        active_deadline_s: { type: ['number', 'null'], description: 'While one runs: its deadline, seconds from dispatch (null: none).' },
        last_interruption: { type: ['object', 'null'], default: null },
        replacement_startup_ms: { type: ['number', 'null'], default: null },
        worker_startup_ms: { type: ['number', 'null'], default: null },
        standby: { type: 'string' },
        error: { type: ['string', 'null'], default: null },
        memory_mb: { type: ['integer', 'null'] },
        memory_limit_mb: { type: ['integer', 'null'] },
        dynamic_tools: { type: 'integer', default: 0 },
        registry_revision: { type: 'integer', default: 0 },
      },
      required: ['state', 'epoch'],
      additionalProperties: true,
    },
  },
];

/** Looks up a stable tool by name. */
export function findStableTool(name: string): StableToolDefinition | undefined {
  return STABLE_TOOLS.find((tool) => tool.name === name);
}
