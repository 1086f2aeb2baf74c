/**
 * Output schemas of the stable tools. Results are compact (compact-result.ts): a field at its default is left out,
 * and each schema names the default of every field that may be absent, so that "absent" reads as that default.
 */

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
    interruption: { type: ['string', 'null'], enum: ['timeout', 'cancelled', 'crash', 'shutdown', null] },
    namespace: { type: ['string', 'null'], enum: ['preserved', 'reset', 'unknown', null] },
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
  default: [],
  description: 'Fields whose text held lone surrogates (or other parts JSON cannot carry), written escaped (docs/protocol.md, "Value contract").',
};
/** Part of the output schemas. */
export const encodedSchema = {
  type: 'object',
  additionalProperties: { type: 'string' },
  default: {},
  description: 'Places in `value` written as strings to stay exact: big ints, NaN/Infinity/-0.0, text with lone surrogates.',
};
/** Part of the output schemas. */
export const encodedOmittedSchema = { type: 'integer', default: 0, description: 'Encoded places beyond max_results, not listed.' };

/** A result schema: the success fields, or (for a failed call, `isError`) a structured `error` object. */
export function output(properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: { ...properties, runtime: runtimeMetaSchema, escaped: escapedSchema },
    anyOf: [{ required }, { required: ['error'], properties: { error: errorSchema } }],
    additionalProperties: true,
  };
}

const stringArray = { type: 'array', items: { type: 'string' } };
/** Part of the output schemas. */
export const emptyList = { ...stringArray, default: [] };
/** Part of the output schemas. */
export const flag = (description?: string): Record<string, unknown> => ({ type: 'boolean', default: false, ...(description ? { description } : {}) });
/** Part of the output schemas. */
export const nullableText = { type: ['string', 'null'], default: null };
/** Part of the output schemas. */
export const flagMap = (description: string): Record<string, unknown> => ({
  type: 'object',
  additionalProperties: { type: 'boolean' },
  default: {},
  description,
});
/** Part of the output schemas. */
export const totalSchema = (items: string) => ({ type: 'integer', description: `How many matched; absent when it equals the number of ${items} returned.` });

/** Part of the output schemas. */
export const functionSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    signature: { type: ['string', 'null'] },
    signature_truncated: flag(),
    module: nullableText,
    doc: nullableText,
    doc_truncated: flag(),
  },
  required: ['name'],
};
/** Part of the output schemas. */
export const matchSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, kind: { type: 'string' }, type: { type: 'string' }, repr: { type: 'string' }, repr_truncated: flag() },
  required: ['name', 'kind'],
};
/** Part of the output schemas. */
export const displaySchema = {
  type: 'object',
  properties: { data: { type: 'object' }, metadata: { type: 'object', default: {} }, truncated: flag() },
  required: ['data'],
};
/** Part of the output schemas. */
export const valueSchema = {
  type: ['object', 'null'],
  default: null,
  description: 'The final value: {"value": <json>, "encoded"?} (kind "json", the default) or {"kind": "repr", "repr", "images"?}.',
  properties: { kind: { type: 'string', enum: ['json', 'repr'], default: 'json' }, value: {}, repr: { type: 'string' }, images: { type: 'object' }, encoded: encodedSchema, encoded_omitted: encodedOmittedSchema },
};
/** Part of the output schemas. */
export const cellErrorSchema = {
  type: ['object', 'null'],
  default: null,
  properties: {
    kind: { type: 'string', enum: ['syntax', 'exception', 'interrupted'] },
    type: { type: 'string' },
    message: { type: 'string' },
    message_truncated: flag(),
    traceback: { type: 'string', description: "IPython's traceback without its banner and colours." },
    traceback_truncated: flag('Its start was cut.'),
    filename: { type: 'string' },
    filename_truncated: flag(),
    lineno: { type: 'integer' },
  },
};

