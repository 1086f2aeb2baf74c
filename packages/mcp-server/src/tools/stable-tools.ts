import { OPERATIONS } from '@ipython-mcp/protocol';
import { z } from 'zod';
import {
  COMMON,
  COMPACT_EXECUTE,
  FUNCTION_DEFAULTS,
  INSPECT_DEFAULTS,
  MATCH_DEFAULTS,
  REGISTRATION_DEFAULTS,
  RELOAD_ITEM_DEFAULTS,
  REMOVE_DEFAULTS,
  RESET_DEFAULTS,
  STATUS_DEFAULTS,
  UNREGISTER_DEFAULTS,
  compactExecute,
  compactInspection,
  compactListingOf,
  compactOutputSchema,
  compactReload,
  compactReset,
  compactValue,
  compactWith,
  executeText,
  flag,
  jsonText,
  listingResult,
  trueFlagsSchema,
  valueResult,
  valueText,
  withDefaults,
  withRunningShape,
} from '../results/index.js';
import { defineStableTools, type StableToolDefinition } from './tool-definition.js';

export type { CatalogEffect, StableToolDefinition } from './tool-definition.js';

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

const inspection = OPERATIONS.inspect.result;
const reload = OPERATIONS.reload.result;
const reset = OPERATIONS.reset.result;

/** An execute failure (runtime_busy, operation_timeout, ...) says status "error": its schema's default is "ok". */
const EXECUTE_FAILURE = Object.freeze({ status: 'error' });

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * Every stable tool, keyed by name, in the order tools/list publishes them. Adding a tool is one entry here (its
 * output schema from its operation in the catalogue, `OPERATIONS` in @ipython-mcp/protocol), the catalogue entry
 * and the worker's handler.
 */
export const STABLE_TOOL_DEFINITIONS = defineStableTools({
  execute: {
    name: 'execute',
    title: 'Execute Python',
    annotations: { readOnly: false, openWorld: true },
    op: 'execute',
    takesDeadline: true,
    detachable: true,
    journal: 'cell',
    description:
      'Run Python, magics and `!` shell in the persistent IPython namespace. Returns stdout/stderr (bounded, with ' +
      'omitted counts), last value, displays/images, errors. Long work: timeout_seconds; detach_after_seconds gives ' +
      'a job handle.',
    input: z.object({ code: z.string() }).strict(),
    plainInput: plainExecuteInput,
    outputSchema: withRunningShape(compactOutputSchema(COMPACT_EXECUTE, EXECUTE_FAILURE)),
    compact: compactExecute,
    text: executeText,
    cellContent: true,
    isError: (full) => full.status === 'error',
    failureFields: EXECUTE_FAILURE,
  },
  call_function: {
    name: 'call_function',
    title: 'Call a live function',
    annotations: { readOnly: false },
    op: 'call_function',
    takesDeadline: true,
    detachable: true,
    journal: 'call',
    description:
      'Call a live callable by name or dotted path (never evaluated) with JSON keyword arguments; returns its value ' +
      '(must be JSON).',
    input: z
      .object({
        name: identifier,
        arguments: z.record(z.string(), z.unknown()).default({}),
      })
      .strict(),
    outputSchema: withRunningShape(compactOutputSchema(valueResult(OPERATIONS.call_function.result))),
    compact: compactValue,
    text: valueText,
  },
  list: {
    name: 'list',
    title: 'List functions',
    annotations: { readOnly: true },
    op: 'list',
    journal: 'none',
    description:
      "Functions with signatures and docstrings (top-level and configured modules', dotted) for call_function.",
    input: z.object({}).strict(),
    outputSchema: compactOutputSchema(listingResult(OPERATIONS.list.result, 'functions', FUNCTION_DEFAULTS)),
    compact: compactListingOf('functions', FUNCTION_DEFAULTS),
    text: jsonText,
  },
  search: {
    name: 'search',
    title: 'Search the namespace',
    annotations: { readOnly: true },
    op: 'search',
    journal: 'none',
    description:
      'Find names (substring, any case, or exact) among variables, functions, classes and modules, with type, shape, ' +
      'short repr.',
    input: z
      .object({
        query: z.string().max(512),
        exact: z.boolean().default(false),
        kinds: z.array(z.enum(['function', 'class', 'module', 'variable', 'other'])).optional(),
      })
      .strict(),
    outputSchema: compactOutputSchema(listingResult(OPERATIONS.search.result, 'matches', MATCH_DEFAULTS)),
    compact: compactListingOf('matches', MATCH_DEFAULTS),
    text: jsonText,
  },
  inspect: {
    name: 'inspect',
    title: 'Inspect a live object',
    annotations: { readOnly: true },
    op: 'inspect',
    journal: 'none',
    description:
      'Describe a live object by name or dotted path: type, signature, docs, shape, safe repr. Runs no user code.',
    input: z.object({ name: identifier }).strict(),
    outputSchema: compactOutputSchema(withDefaults(inspection, INSPECT_DEFAULTS, { truncated: trueFlagsSchema(inspection.shape.truncated) })),
    compact: compactInspection,
    text: jsonText,
  },
  reload: {
    name: 'reload',
    title: 'Reload modules',
    annotations: { readOnly: false },
    op: 'reload',
    journal: 'none',
    description:
      'Reload modules (not their dependencies), rebinding every name bound to the old ones.',
    input: z.object({ modules: z.array(z.string().min(1).max(512)).min(1).max(100) }).strict(),
    outputSchema: compactOutputSchema(withDefaults(reload, COMMON, { results: z.array(withDefaults(reload.shape.results.element, RELOAD_ITEM_DEFAULTS)) })),
    compact: compactReload,
    text: jsonText,
  },
  remove: {
    name: 'remove',
    title: 'Remove names',
    annotations: { readOnly: false },
    op: 'remove',
    journal: 'none',
    description:
      'Delete top-level names; reports each removed, refused (private, IPython\'s own, configured modules) or unknown.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(10_000) }).strict(),
    outputSchema: compactOutputSchema(withDefaults(OPERATIONS.remove.result, REMOVE_DEFAULTS)),
    compact: compactWith(REMOVE_DEFAULTS),
    text: jsonText,
  },
  reset: {
    name: 'reset',
    title: 'Reset the namespace',
    annotations: { readOnly: false },
    op: 'reset',
    journal: 'none',
    description:
      'Delete all user-created names and dynamic tools, restoring IPython\'s and configured modules\' bindings.',
    input: z.object({}).strict(),
    outputSchema: compactOutputSchema(
      withDefaults(reset, RESET_DEFAULTS, {
        removed_count: reset.shape.removed_count.optional().describe('How many were removed; absent when it equals the length of removed.'),
      }),
    ),
    compact: compactReset,
    text: jsonText,
  },
  register_tool: {
    name: 'register_tool',
    title: 'Publish a callable as a tool',
    annotations: { readOnly: false },
    op: 'register_tool',
    journal: 'none',
    description:
      'Publish a top-level callable as an MCP tool, schema from its annotations; an incompatible redefinition makes ' +
      'it stale until re-registered.',
    input: z
      .object({
        name: z.string().min(1).max(512),
        tool_name: z.string().min(1).max(512).nullable().default(null),
        description: z.string().max(100_000).nullable().default(null),
      })
      .strict(),
    outputSchema: compactOutputSchema(withDefaults(OPERATIONS.register_tool.result, REGISTRATION_DEFAULTS)),
    compact: compactWith(REGISTRATION_DEFAULTS),
    text: jsonText,
  },
  unregister_tool: {
    name: 'unregister_tool',
    title: 'Withdraw dynamic tools',
    annotations: { readOnly: false },
    op: 'unregister_tool',
    journal: 'none',
    description: 'Withdraw dynamic tools by name; reports unknown names.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(1000) }).strict(),
    outputSchema: compactOutputSchema(withDefaults(OPERATIONS.unregister_tool.result, UNREGISTER_DEFAULTS)),
    compact: compactWith(UNREGISTER_DEFAULTS),
    text: jsonText,
    // Unregister's own fields (remove's `unknown` lists namespace names, not tools).
    withdrawnTools: (result) => [...stringList(result.unregistered), ...stringList(result.unknown)],
  },
  job: {
    name: 'job',
    title: 'Detached cell',
    annotations: { readOnly: false },
    op: null,
    answeredFrom: 'detached',
    journal: 'none',
    description:
      'A detached call: output so far; wait_seconds: its whole result once done; stop: interrupt (names kept).',
    input: z
      .object({
        job: z.string().min(1).max(200),
        // The upper bound is checked, not published (the tool list goes out with every model request).
        wait_seconds: z.number().min(0).optional().refine((value) => value === undefined || value <= 600, 'at most 600 seconds'),
        stop: z.boolean().optional(),
      })
      .strict(),
    // A running call's look, or the finished call's own result (execute's, call_function's, a dynamic tool's): any object.
    outputSchema: { type: 'object', additionalProperties: true },
    compact: (full) => full,
    text: jsonText,
  },
  runtime_status: {
    name: 'runtime_status',
    title: 'Runtime status',
    annotations: { readOnly: true },
    op: null,
    answeredFrom: 'status',
    journal: 'none',
    description:
      'Worker state, epoch, queue, running call, last interruption, memory; answers even while code runs.',
    input: z.object({}).strict(),
    // The server's own state, not a worker result: written here rather than derived from the catalogue.
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
    compact: compactWith(STATUS_DEFAULTS),
    text: jsonText,
    reportsEpoch: true,
  },
});

/** One stable tool name. */
export type StableToolName = keyof typeof STABLE_TOOL_DEFINITIONS;

/** The stable tool names (the seed's eleven and job), in the order tools/list publishes them. */
export const STABLE_TOOL_NAMES: readonly StableToolName[] = Object.freeze(Object.keys(STABLE_TOOL_DEFINITIONS) as StableToolName[]);

/** Every stable tool, in the order tools/list publishes them. */
export const STABLE_TOOLS: readonly StableToolDefinition[] = Object.freeze(Object.values(STABLE_TOOL_DEFINITIONS));

/** Looks up a stable tool by name. */
export function findStableTool(name: string): StableToolDefinition | undefined {
  return Object.hasOwn(STABLE_TOOL_DEFINITIONS, name) ? STABLE_TOOL_DEFINITIONS[name as StableToolName] : undefined;
}
