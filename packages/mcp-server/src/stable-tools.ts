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
      'Run Python in the persistent IPython namespace: statements, expressions, definitions, magics, `!` shell escapes. ' +
      'Names, imports and objects persist between calls. Returns stdout/stderr (bounded, exact omitted counts), the ' +
      'final value (JSON, else its IPython repr), displays (PNG/JPEG as image content), the execution count, and a ' +
      'structured error for exceptions. Long work: set timeout_seconds.',
    input: z.object({ code: z.string().describe('Python source, run as one cell.') }).strict(),
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
      'Call a live callable by name (dotted paths like `lib.tool` allowed, never evaluated) once, with a JSON object ' +
      'as keyword arguments; returns its JSON value. Error codes: name_not_found, not_callable, invalid_arguments, ' +
      'binding_failed, call_raised, result_not_json.',
    input: z
      .object({
        name: identifier.describe('Name or dotted path of the callable.'),
        arguments: z.record(z.string(), z.unknown()).default({}).describe('Keyword arguments.'),
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
      'List functions with signatures, modules and docstrings (bounded): top-level ones, and the public functions of ' +
      'configured library modules under their dotted path (e.g. `mylib.tool`), ready for call_function.',
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
      'Find names by exact or case-insensitive partial match across functions, classes, modules, variables and other ' +
      'objects (top-level names, configured modules and what they define, dotted), with type and bounded repr. Never ' +
      'runs properties or __getattr__.',
    input: z
      .object({
        query: z.string().max(512).describe('Text to find in names.'),
        exact: z.boolean().default(false).describe('Match whole names only.'),
        kinds: z
          .array(z.enum(['function', 'class', 'module', 'variable', 'other']))
          .optional()
          .describe('Only these kinds.'),
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
      'Describe one live name (dotted allowed): kind, qualified type, callable, signature, module, documentation and a ' +
      'safe repr, each bounded. A failure reading any of them is reported in `error`.',
    input: z.object({ name: identifier.describe('Name or dotted path.') }).strict(),
    outputSchema: compactOutputSchema('inspect'),
  },
  {
    name: 'reload',
    title: 'Reload modules',
    op: 'reload',
    readOnly: false,
    catalogEffect: 'may-change',
    description:
      'Reload the named imported modules (only those: dependencies are never guessed) and rebind every name, aliases ' +
      'included, that pointed at the old module. One result per module.',
    input: z.object({ modules: z.array(z.string().min(1).max(512)).min(1).max(100).describe('Module names.') }).strict(),
    outputSchema: compactOutputSchema('reload'),
  },
  {
    name: 'remove',
    title: 'Remove names',
    op: 'remove',
    readOnly: false,
    catalogEffect: 'changes',
    description:
      'Delete top-level names; reports them as removed, refused (names starting with _, IPython runtime and configured ' +
      'module bindings) or unknown. Repeating a removal removes nothing more.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(10_000).describe('Top-level names.') }).strict(),
    outputSchema: compactOutputSchema('remove'),
  },
  {
    name: 'reset',
    title: 'Reset the namespace',
    op: 'reset',
    readOnly: false,
    catalogEffect: 'changes',
    description:
      'Remove every unprotected user-created name, restore configured module bindings and drop all dynamic tools; ' +
      'reports the removed names (sorted) and the unchanged execution count.',
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
      'Publish a top-level live callable as an MCP tool whose input schema comes from its annotations. Returns the ' +
      'description snapshot, input schema, SHA-256 schema fingerprint and registry revision. An incompatible ' +
      'redefinition makes the tool stale until it is registered again.',
    input: z
      .object({
        name: z.string().min(1).max(512).describe('Top-level name of the callable.'),
        tool_name: z.string().min(1).max(512).nullable().default(null).describe('Defaults to name.'),
        description: z.string().max(100_000).nullable().default(null).describe('Defaults to the docstring.'),
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
    description: 'Withdraw dynamic tools by name; reports unregistered and unknown names. Idempotent; stable tools cannot be removed.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(1000).describe('Dynamic tool names.') }).strict(),
    outputSchema: compactOutputSchema('unregister_tool'),
  },
  {
    name: 'runtime_status',
    title: 'Runtime status',
    op: null,
    readOnly: true,
    catalogEffect: 'none',
    description:
      'Control-plane state, answered at once even while code runs: state, epoch, queue depth, active operation, the ' +
      'last interruption and its namespace outcome, worker start-up times, worker memory (MiB) and its limit. Never ' +
      'code, arguments or values.',
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
