import { z } from 'zod';

/** A stable tool: its MCP description, input model and output schema. Handlers live in server.ts. */
export interface StableToolDefinition {
  name: StableToolName;
  title: string;
  description: string;
  input: z.ZodObject;
  outputSchema: Record<string, unknown>;
  /** The worker operation it maps to; `null` for runtime_status, which never reaches the worker. */
  op: string | null;
  readOnly: boolean;
}

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
const runtimeMetaSchema = {
  type: 'object',
  properties: {
    request_id: { type: ['string', 'number', 'null'] },
    sequence: { type: ['integer', 'null'] },
    epoch: { type: 'integer' },
    queue_wait_ms: { type: 'number' },
    duration_ms: { type: 'number' },
    interruption: { type: ['string', 'null'] },
    namespace: { type: ['string', 'null'] },
  },
};

const errorSchema = {
  type: 'object',
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    retryable: { type: 'boolean' },
    retry_after_ms: { type: 'number' },
    details: { type: 'object' },
  },
  required: ['code', 'message'],
};

const escapedSchema = {
  type: 'array',
  items: { type: 'string' },
  description: 'Fields whose text held lone surrogates (or other parts JSON cannot carry), written escaped (docs/protocol.md, "Value contract").',
};
const encodedSchema = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'Places in `value` written as strings to stay exact: big ints, NaN/Infinity/-0.0, text with lone surrogates.',
};

/** A result schema: the success fields, or (for a failed call, `isError`) a structured `error` object. */
function output(properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: { ...properties, runtime: runtimeMetaSchema, escaped: escapedSchema },
    anyOf: [{ required }, { required: ['error'], properties: { error: errorSchema } }],
    additionalProperties: true,
  };
}

const stringArray = { type: 'array', items: { type: 'string' } };

/** Every stable tool, in the order tools/list publishes them. */
export const STABLE_TOOLS: readonly StableToolDefinition[] = [
  {
    name: 'execute',
    title: 'Execute Python',
    op: 'execute',
    readOnly: false,
    description:
      'Run Python (expressions, statements, definitions, multi-line blocks, IPython magics and `!` shell escapes) in the ' +
      'persistent IPython namespace. Names, imports and objects survive between calls. Returns bounded stdout/stderr with ' +
      'exact omitted-character counts, the final value (as JSON when it has a JSON form, else its IPython representation), ' +
      'display payloads, the execution count, and a structured error for exceptions and syntax errors. PNG/JPEG displays ' +
      '(matplotlib figures, IPython.display.Image) also come back as MCP image content.',
    input: z.object({ code: z.string().describe('Python source to run as one IPython cell.') }).strict(),
    outputSchema: output(
      {
        status: { type: 'string', enum: ['ok', 'error'] },
        execution_count: { type: 'integer' },
        stdout: { type: 'string' },
        stderr: { type: 'string' },
        stdout_omitted_chars: { type: 'integer' },
        stderr_omitted_chars: { type: 'integer' },
        truncated: { type: 'object', additionalProperties: { type: 'boolean' } },
        result: { type: ['object', 'null'] },
        displays: { type: 'array', items: { type: 'object' } },
        displays_omitted: { type: 'integer' },
        error: { type: ['object', 'null'] },
      },
      ['status', 'execution_count', 'stdout', 'stderr', 'truncated'],
    ),
  },
  {
    name: 'call_function',
    title: 'Call a live function',
    op: 'call_function',
    readOnly: false,
    description:
      'Resolve a live callable by name (dotted attribute paths such as `lib.tool` allowed, never evaluated), bind a JSON ' +
      'object as keyword arguments, call it once and return its JSON-compatible result. Distinct error codes for ' +
      'name_not_found, not_callable, invalid_arguments, binding_failed, call_raised and result_not_json.',
    input: z
      .object({
        name: identifier.describe('Top-level name or dotted attribute path of the callable.'),
        arguments: z.record(z.string(), z.unknown()).default({}).describe('Keyword arguments as a JSON object.'),
      })
      .strict(),
    outputSchema: output({ value: {}, truncated: { type: 'boolean' }, encoded: encodedSchema, encoded_omitted: { type: 'integer' } }, ['truncated']),
  },
  {
    name: 'list',
    title: 'List functions',
    op: 'list',
    readOnly: true,
    description:
      'List the functions visible in the namespace with their current signatures, modules and docstrings (bounded): ' +
      'top-level functions, plus the public functions that configured (preloaded or aliased) library modules define, ' +
      'under their dotted path (e.g. `mylib.tool`), ready for call_function.',
    input: z.object({}).strict(),
    outputSchema: output(
      { functions: { type: 'array', items: { type: 'object' } }, total: { type: 'integer' }, truncated: { type: 'boolean' } },
      ['functions', 'total', 'truncated'],
    ),
  },
  {
    name: 'search',
    title: 'Search the namespace',
    op: 'search',
    readOnly: true,
    description:
      'Find names by exact or partial (case-insensitive) match across functions, classes, modules, variables and other ' +
      'objects (top-level names, configured module bindings, and the functions and classes configured modules define, ' +
      'dotted), with bounded type and representation metadata. Classification never runs properties or __getattr__.',
    input: z
      .object({
        query: z.string().max(512).describe('Text to look for in names.'),
        exact: z.boolean().default(false).describe('Match the whole name exactly.'),
        kinds: z
          .array(z.enum(['function', 'class', 'module', 'variable', 'other']))
          .optional()
          .describe('Only these kinds of object.'),
      })
      .strict(),
    outputSchema: output(
      { matches: { type: 'array', items: { type: 'object' } }, total: { type: 'integer' }, truncated: { type: 'boolean' } },
      ['matches', 'total', 'truncated'],
    ),
  },
  {
    name: 'inspect',
    title: 'Inspect a live object',
    op: 'inspect',
    readOnly: true,
    description:
      'Resolve one live name (dotted paths allowed) and return its kind, qualified type, whether it is callable, signature, ' +
      'module, documentation and a safe representation, each bounded and flagged separately. Failures while reading any ' +
      'of them come back in the structured `error` field.',
    input: z.object({ name: identifier.describe('Top-level name or dotted attribute path.') }).strict(),
    outputSchema: output(
      {
        name: { type: 'string' },
        kind: { type: 'string' },
        qualified_type: { type: ['string', 'null'] },
        callable: { type: 'boolean' },
        signature: { type: ['string', 'null'] },
        module: { type: ['string', 'null'] },
        documentation: { type: ['string', 'null'] },
        representation: { type: ['string', 'null'] },
        truncated: { type: 'object' },
        error: { type: ['object', 'null'] },
      },
      ['name', 'kind'],
    ),
  },
  {
    name: 'reload',
    title: 'Reload modules',
    op: 'reload',
    readOnly: false,
    description:
      'Reload the named, already imported modules (and only those: dependencies are never guessed) and rebind every ' +
      'namespace name, aliases included, that pointed at the old module. One result per module.',
    input: z.object({ modules: z.array(z.string().min(1).max(512)).min(1).max(100).describe('Module names to reload.') }).strict(),
    outputSchema: output({ results: { type: 'array', items: { type: 'object' } } }, ['results']),
  },
  {
    name: 'remove',
    title: 'Remove names',
    op: 'remove',
    readOnly: false,
    description:
      'Delete top-level names. Unique requested names are partitioned into removed, refused (names starting with _, ' +
      'IPython runtime bindings, configured module bindings) and unknown. Repeating a removal removes nothing more.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(10_000).describe('Top-level names to delete.') }).strict(),
    outputSchema: output({ removed: stringArray, refused: stringArray, unknown: stringArray }, ['removed', 'refused', 'unknown']),
  },
  {
    name: 'reset',
    title: 'Reset the namespace',
    op: 'reset',
    readOnly: false,
    description:
      'Remove every unprotected user-created name, restore configured module bindings, drop all dynamic tool ' +
      'registrations, and report the removed names (sorted; removed_count counts them all, removed_truncated says a ' +
      'very long list was cut) with the unchanged execution count.',
    input: z.object({}).strict(),
    outputSchema: output(
      {
        removed: stringArray,
        removed_count: { type: 'integer' },
        removed_truncated: { type: 'boolean' },
        execution_count: { type: 'integer' },
      },
      ['removed', 'execution_count'],
    ),
  },
  {
    name: 'register_tool',
    title: 'Publish a callable as a tool',
    op: 'register_tool',
    readOnly: false,
    description:
      'Publish one top-level live callable as an MCP tool with a JSON Schema derived from its annotations. tool_name ' +
      'defaults to the Python name; description defaults to its docstring. Returns the description snapshot, input ' +
      'schema, SHA-256 schema fingerprint and registry revision. An incompatible redefinition makes the tool stale ' +
      'until it is registered again.',
    input: z
      .object({
        name: z.string().min(1).max(512).describe('Top-level name of the callable.'),
        tool_name: z.string().min(1).max(512).nullable().default(null).describe('MCP tool name; defaults to `name`.'),
        description: z.string().max(100_000).nullable().default(null).describe('Tool description; defaults to the docstring.'),
      })
      .strict(),
    outputSchema: output(
      {
        tool_name: { type: 'string' },
        name: { type: 'string' },
        description: { type: 'string' },
        input_schema: { type: 'object' },
        fingerprint: { type: 'string' },
        revision: { type: 'integer' },
      },
      ['tool_name', 'name', 'input_schema', 'fingerprint', 'revision'],
    ),
  },
  {
    name: 'unregister_tool',
    title: 'Withdraw dynamic tools',
    op: 'unregister_tool',
    readOnly: false,
    description: 'Withdraw dynamic tools by MCP name; reports unregistered and unknown names. Idempotent; stable tools cannot be removed.',
    input: z.object({ names: z.array(z.string().min(1).max(512)).max(1000).describe('Dynamic tool names.') }).strict(),
    outputSchema: output({ unregistered: stringArray, unknown: stringArray, revision: { type: 'integer' } }, ['unregistered', 'unknown']),
  },
  {
    name: 'runtime_status',
    title: 'Runtime status',
    op: null,
    readOnly: true,
    description:
      'Control-plane state, answered at once even while code runs: state (starting, ready, busy, recovering, unavailable, ' +
      'closed), epoch, queue depth, whether an operation is active, the latest interruption and its namespace outcome, and ' +
      'measured worker start-up and replacement times, and the worker\'s memory (MiB) with the memory limit. Never code, ' +
      'arguments, results or namespace values.',
    input: z.object({}).strict(),
    outputSchema: {
      type: 'object',
      properties: {
        state: { type: 'string', enum: ['starting', 'ready', 'busy', 'recovering', 'unavailable', 'closed'] },
        epoch: { type: 'integer' },
        queue_depth: { type: 'integer' },
        active: { type: 'boolean' },
        last_interruption: { type: ['object', 'null'] },
        replacement_startup_ms: { type: ['number', 'null'] },
        worker_startup_ms: { type: ['number', 'null'] },
        standby: { type: 'string' },
        error: { type: ['string', 'null'] },
        memory_mb: { type: ['integer', 'null'] },
        memory_limit_mb: { type: ['integer', 'null'] },
        dynamic_tools: { type: 'integer' },
        registry_revision: { type: 'integer' },
      },
      required: ['state', 'epoch', 'queue_depth', 'active'],
      additionalProperties: true,
    },
  },
];

/** Looks up a stable tool by name. */
export function findStableTool(name: string): StableToolDefinition | undefined {
  return STABLE_TOOLS.find((tool) => tool.name === name);
}
