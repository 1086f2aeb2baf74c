import { OPERATIONS } from '@ipython-mcp/protocol';
import { z } from 'zod';
import {
  COMMON,
  DISPLAY_DEFAULTS,
  EXECUTE_DEFAULTS,
  EXECUTE_ERROR_DEFAULTS,
  FUNCTION_DEFAULTS,
  INSPECT_DEFAULTS,
  JSON_RESULT_DEFAULTS,
  LISTING_DEFAULTS,
  MATCH_DEFAULTS,
  REGISTRATION_DEFAULTS,
  RELOAD_ITEM_DEFAULTS,
  REMOVE_DEFAULTS,
  RESET_DEFAULTS,
  UNREGISTER_DEFAULTS,
  VALUE_DEFAULTS,
} from './compact-result.js';

/**
 * Output schemas of the stable tools, derived from the worker's result schemas in the operations catalogue
 * (`@ipython-mcp/protocol` operations.ts) by the same rules compact-result.ts applies to the results: a field it
 * leaves out at its default becomes optional and names that default (`"default": …`), so "absent" reads as that
 * default; a truncation map keeps only its true flags. Nothing here restates a field list by hand.
 */

type Shape = Record<string, z.ZodType>;
type Json = Record<string, unknown>;

/** `schema` with every field named in `defaults` optional at that default, and the fields in `replace` replaced. */
function withDefaults(schema: z.ZodObject, defaults: Json, replace: Shape = {}): z.ZodObject {
  const shape: Shape = {};
  for (const [key, field] of Object.entries(schema.shape as Shape)) {
    const base = replace[key] ?? field;
    shape[key] = key in defaults ? base.default(structuredClone(defaults[key]) as never) : base;
  }
  return z.strictObject(shape);
}

/** A truncation map as compact results carry it: only its true flags, absent (`{}`) when none is set. */
function trueFlags(schema: z.ZodObject): z.ZodType {
  const flags = Object.fromEntries(Object.keys(schema.shape).map((key) => [key, z.literal(true)]));
  return z.strictObject(flags).partial().default({});
}

/** MCP clients read values as they are; the catalogue's recursive JSON type would only lengthen every schema. */
const anyValue = z.unknown().describe('The value as JSON (docs/protocol.md, "Value contract").');

const executeShape = OPERATIONS.execute.result.shape;
const [jsonResult, reprResult] = executeShape.result.unwrap().options;
const cellError = executeShape.error.unwrap();
/** execute's compact result. */
const compactExecute = withDefaults(OPERATIONS.execute.result, EXECUTE_DEFAULTS, {
  truncated: trueFlags(executeShape.truncated),
  result: z
    .union([withDefaults(jsonResult, JSON_RESULT_DEFAULTS, { value: anyValue }), reprResult])
    .nullable()
    .describe('The final value: {"value", "encoded"?} (kind "json", the default) or {"kind": "repr", "repr", "images"?}.'),
  displays: z.array(
    withDefaults(executeShape.displays.element, { ...COMMON, ...DISPLAY_DEFAULTS }, {
      data: z.record(z.string(), z.unknown()).describe('One representation (display-choice.ts); every MIME type: _meta["ipython-mcp/displays"].'),
    }).extend({
      omitted: z.array(z.string()).optional().describe('MIME types left out of data.'),
      text_from: z.literal('text/html').optional().describe('data["text/plain"] is this converted to text.'),
    }),
  ),
  // full_traceback goes to _meta["ipython-mcp/traceback"] (tool-result.ts): never in structured content.
  error: withDefaults(cellError.omit({ full_traceback: true }), EXECUTE_ERROR_DEFAULTS, {
    traceback: z.string().describe('Library frames one line each; whole: _meta["ipython-mcp/traceback"].'),
  }).nullable(),
});

const valueResult = (schema: z.ZodObject) => withDefaults(schema, VALUE_DEFAULTS, { value: anyValue });

const listing = (schema: z.ZodObject, key: string, itemDefaults: Json) =>
  withDefaults(schema, LISTING_DEFAULTS, {
    [key]: z.array(withDefaults((schema.shape[key] as z.ZodArray<z.ZodObject>).element, itemDefaults)),
    total: z.number().int().nonnegative().optional().describe(`How many matched; absent when it equals the number of ${key} returned.`),
  });

const inspection = OPERATIONS.inspect.result;
const reset = OPERATIONS.reset.result;
const reload = OPERATIONS.reload.result;

/** The compact result schema of each stable tool that runs a worker operation, as zod. */
export const COMPACT_RESULTS = {
  execute: compactExecute,
  call_function: valueResult(OPERATIONS.call_function.result),
  list: listing(OPERATIONS.list.result, 'functions', FUNCTION_DEFAULTS),
  search: listing(OPERATIONS.search.result, 'matches', MATCH_DEFAULTS),
  inspect: withDefaults(inspection, INSPECT_DEFAULTS, { truncated: trueFlags(inspection.shape.truncated) }),
  reload: withDefaults(reload, COMMON, { results: z.array(withDefaults(reload.shape.results.element, RELOAD_ITEM_DEFAULTS)) }),
  remove: withDefaults(OPERATIONS.remove.result, REMOVE_DEFAULTS),
  reset: withDefaults(reset, RESET_DEFAULTS, {
    removed_count: reset.shape.removed_count.optional().describe('How many were removed; absent when it equals the length of removed.'),
  }),
  register_tool: withDefaults(OPERATIONS.register_tool.result, REGISTRATION_DEFAULTS),
  unregister_tool: withDefaults(OPERATIONS.unregister_tool.result, UNREGISTER_DEFAULTS),
  call_tool: valueResult(OPERATIONS.call_tool.result),
} satisfies Record<string, z.ZodObject>;

/** The compact result's JSON Schema of one tool, as an MCP `outputSchema` (see {@link output}). */
export function compactOutputSchema(tool: keyof typeof COMPACT_RESULTS): Json {
  // io "input": a field with a default is optional and shows its default, which is what a compact result means.
  const schema = prune(z.toJSONSchema(COMPACT_RESULTS[tool], { io: 'input', target: 'draft-7', unrepresentable: 'any' })) as Json;
  // An execute failure (runtime_busy, operation_timeout, ...) says status "error" itself: a program that fills
  // absent fields from their defaults must never read it as the default "ok".
  return output(schema.properties as Json, (schema.required as string[] | undefined) ?? [], tool === 'execute' ? EXECUTE_FAILURE_FIELDS : {});
}

/** The fields every failure result of execute carries beside its `error` (tool-result.ts writes them). */
export const EXECUTE_FAILURE: Readonly<Json> = Object.freeze({ status: 'error' });
const EXECUTE_FAILURE_FIELDS: Json = { status: { const: 'error' } };

/**
 * Drops what says nothing (the schemas go out with every tool list): `$schema`, `propertyNames: {type: string}`
 * (JSON keys are strings), `additionalProperties: {}` (the default) and zod's ±(2^53 - 1) bounds of an integer.
 */
function prune(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(prune);
  if (node === null || typeof node !== 'object') return node;
  const copy: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$schema') continue;
    if (key === 'propertyNames' && JSON.stringify(value) === '{"type":"string"}') continue;
    if (key === 'additionalProperties' && JSON.stringify(value) === '{}') continue;
    if ((key === 'maximum' || key === 'minimum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    copy[key] = prune(value);
  }
  return copy;
}

const runtimeMetaSchema = {
  type: 'object',
  description:
    'Whole after an interruption; else epoch when it changed, sequence + queue_wait_ms after a wait >= 1000 ms or a ' +
    'queue_timeout; else absent. All of it: _meta["ipython-mcp/runtime"].',
  properties: {
    request_id: { type: ['string', 'number', 'null'] },
    sequence: { type: ['integer', 'null'] },
    epoch: { type: 'integer' },
    queue_wait_ms: { type: 'number' },
    duration_ms: { type: 'number' },
    interruption: { type: ['string', 'null'], enum: ['timeout', 'cancelled', 'crash', 'shutdown', 'memory_limit', null] },
    namespace: { type: ['string', 'null'], enum: ['preserved', 'reset', 'unknown', null] },
  },
};

// The failure shape is the server's own (tool-result.ts), not a worker result: it stays written here.
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
  default: [],
  description: 'Fields whose text held lone surrogates (or other parts JSON cannot carry), written escaped (docs/protocol.md, "Value contract").',
};

/**
 * A result schema: the success fields, or (for a failed call, `isError`) a structured `error` object and the
 * `failureFields` every failure of that tool carries. A success that has an `error` field of its own (execute's
 * failed cell, inspect's first failure) accepts either there.
 */
export function output(properties: Json, required: string[], failureFields: Json = {}): Json {
  const { error: ownError, ...rest } = properties as { error?: Json };
  const alternatives = ownError?.anyOf as Json[] | undefined;
  const either = alternatives === undefined ? { anyOf: [ownError, errorSchema] } : { ...ownError, anyOf: [...alternatives, errorSchema] };
  const error = ownError === undefined ? {} : { error: either };
  return {
    type: 'object',
    properties: { ...rest, ...error, runtime: runtimeMetaSchema, escaped: escapedSchema },
    anyOf: [{ required }, { required: ['error', ...Object.keys(failureFields)], properties: { error: errorSchema, ...failureFields } }],
    additionalProperties: true,
  };
}

/** Part of runtime_status's schema, which describes the server's own state rather than a worker result. */
export const flag = (description?: string): Json => ({ type: 'boolean', default: false, ...(description ? { description } : {}) });
