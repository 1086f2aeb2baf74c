import { OPERATIONS } from '@ipython-mcp/protocol';
import { z } from 'zod';
import { pruneSchema } from './schema-prune.js';
import {
  COMMON,
  DISPLAY_DEFAULTS,
  EXECUTE_DEFAULTS,
  EXECUTE_ERROR_DEFAULTS,
  JSON_RESULT_DEFAULTS,
  LISTING_DEFAULTS,
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
export function withDefaults(schema: z.ZodObject, defaults: Json, replace: Shape = {}): z.ZodObject {
  const shape: Shape = {};
  for (const [key, field] of Object.entries(schema.shape as Shape)) {
    const base = replace[key] ?? field;
    shape[key] = key in defaults ? base.default(structuredClone(defaults[key]) as never) : base;
  }
  return z.strictObject(shape);
}

/** A truncation map as compact results carry it: only its true flags, absent (`{}`) when none is set. */
export function trueFlagsSchema(schema: z.ZodObject): z.ZodType {
  const flags = Object.fromEntries(Object.keys(schema.shape).map((key) => [key, z.literal(true)]));
  return z.strictObject(flags).partial().default({});
}

/** MCP clients read values as they are; the catalogue's recursive JSON type would only lengthen every schema. */
const anyValue = z.unknown().describe('The value as JSON (docs/protocol.md, "Value contract").');

const executeShape = OPERATIONS.execute.result.shape;
const [jsonResult, reprResult] = executeShape.result.unwrap().options;
const cellError = executeShape.error.unwrap();
/** execute's compact result (a cell's result; compactExecute in compact-result.ts writes it). */
export const COMPACT_EXECUTE: z.ZodObject = withDefaults(OPERATIONS.execute.result, EXECUTE_DEFAULTS, {
  truncated: trueFlagsSchema(executeShape.truncated),
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
}).extend({
  // A cell still running at detach_after_seconds (detached-cells.ts): its handle and its output so far.
  status: z.enum(['ok', 'error', 'running']).default('ok'),
  job: z.string().optional().describe('status "running": the handle to pass to the job tool.'),
  elapsed_s: z.number().nonnegative().optional().describe('status "running": seconds since the cell started.'),
  next: z.string().optional().describe('status "running": what to call next, in one sentence.'),
});

/** A value result (call_function, dynamic tools): compactValue's shape. */
export const valueResult = (schema: z.ZodObject): z.ZodObject => withDefaults(schema, VALUE_DEFAULTS, { value: anyValue });

/** A listing (list, search) whose items at `key` drop `itemDefaults`: compactListing's shape. */
export const listingResult = (schema: z.ZodObject, key: string, itemDefaults: Json): z.ZodObject =>
  withDefaults(schema, LISTING_DEFAULTS, {
    [key]: z.array(withDefaults((schema.shape[key] as z.ZodArray<z.ZodObject>).element, itemDefaults)),
    total: z.number().int().nonnegative().optional().describe(`How many matched; absent when it equals the number of ${key} returned.`),
  });

/**
 * The compact result's JSON Schema, as an MCP `outputSchema` (see {@link output}); `failureFields` are what every
 * failure of the tool states beside its error (see the tool definition's `failureFields`).
 */
export function compactOutputSchema(result: z.ZodObject, failureFields: Json = {}): Json {
  // io "input": a field with a default is optional and shows its default, which is what a compact result means.
  const schema = pruneSchema(z.toJSONSchema(result, { io: 'input', target: 'draft-7', unrepresentable: 'any' }), { drop: safeIntegerBound }) as Json;
  const required = (schema.required as string[] | undefined) ?? [];
  const constants = Object.fromEntries(Object.entries(failureFields).map(([key, value]) => [key, { const: value }]));
  return output(schema.properties as Json, required, constants);
}

/** zod's ±(2^53 - 1) bounds of an integer say nothing a JSON integer does not. */
function safeIntegerBound(key: string, value: unknown): boolean {
  return (key === 'maximum' || key === 'minimum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER;
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
    interruption: { type: ['string', 'null'], enum: ['timeout', 'cancelled', 'crash', 'shutdown', 'memory_limit', 'other_client', null] },
    namespace: { type: ['string', 'null'], enum: ['preserved', 'reset', 'unknown', null] },
    // Only on a Jupyter kernel (other clients share it): who did what.
    ran: { type: 'boolean', description: 'Jupyter only: false when the call was withdrawn before it reached the kernel.' },
    kernel_wait_ms: { type: 'number', description: "Jupyter only: time waited for the kernel, busy with another client's request." },
    waited_behind: { type: ['string', 'null'], enum: ['person', 'agent', null], description: "Jupyter only: whose request it waited behind: a person's client or another ipython-mcp." },
    stopped_by: { type: ['string', 'null'], enum: ['other_client', null], description: "Jupyter only: another client of the kernel interrupted it (the person's stop button)." },
    epoch_reason: { type: 'string', enum: ['other_client'], description: 'Jupyter only: the epoch began because another client of the kernel restarted or shut it down.' },
    kernel_action: { type: 'string', enum: ['restart', 'shutdown'], description: 'Jupyter only, with epoch_reason: what the other client did to the kernel.' },
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

/**
 * `schema` (a compact output schema) with a third shape beside a result and a failure: a call still running at its
 * `detach_after_seconds` (detached-cells.ts), which says `status: "running"` and its `job` handle.
 */
export function withRunningShape(schema: Json): Json {
  const running = { required: ['status', 'job'], properties: { status: { const: 'running' } } };
  return { ...schema, anyOf: [...(schema.anyOf as Json[]), running] };
}

/** Part of runtime_status's schema, which describes the server's own state rather than a worker result. */
export const flag = (description?: string): Json => ({ type: 'boolean', default: false, ...(description ? { description } : {}) });
