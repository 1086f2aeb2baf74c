import { z } from 'zod';

/*
 * The parts the operation results share (docs/protocol.md, "Shapes used above"). Every object is strict: a field the
 * worker adds that is not written here fails the contract test (python/tests/test_operations_contract.py), and so
 * does a required field here that the worker does not send.
 */

const count = z.number().int().nonnegative();
const flag = z.boolean();
const names = z.array(z.string());

/** Places written as strings to stay exact (`{"$.n": "int"}`), next to a value (docs/protocol.md, "Value contract"). */
export const EncodedSchema = z.record(z.string(), z.string());

/** The value-contract fields a value-bearing object carries only when non-empty. */
export const encodedFields = { encoded: EncodedSchema.optional(), encoded_omitted: count.optional() };

/**
 * The fields of a message the worker repaired before sending it (lone surrogates, numbers past 2^53): present on any
 * result only when something was repaired (`repair.py`).
 */
export const repairFields = { escaped: names.optional() };

/** What `search` and `inspect` classify an object as. */
export const KindSchema = z.enum(['function', 'class', 'module', 'variable', 'other']);

/** A JSON value, as the worker's `jsonvalue.py` writes it. */
export const JsonValueSchema = z.json();

/** execute's `result` for a value with a JSON form. */
export const JsonCellResultSchema = z.strictObject({ kind: z.literal('json'), value: JsonValueSchema, ...encodedFields });
/** execute's `result` for a value without one: IPython's text, and the PNG/JPEG forms its formatter gave. */
export const ReprCellResultSchema = z.strictObject({
  kind: z.literal('repr'),
  repr: z.string(),
  images: z.record(z.string(), z.string()).optional(),
});
/** The final value of a cell, or null. */
export const CellResultSchema = z.discriminatedUnion('kind', [JsonCellResultSchema, ReprCellResultSchema]).nullable();

/** One `display()` payload, bounded. */
export const DisplaySchema = z.strictObject({
  data: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  truncated: flag,
  ...encodedFields,
});

/**
 * A failed cell. `filename`, `filename_truncated` and `lineno` come with a SyntaxError only. `traceback` is
 * IPython's without its banner, library frames one line each (failure.py `fold_traceback`), then bounded;
 * `full_traceback`, the unfolded one bounded the same way, comes only when folding changed something.
 */
export const CellErrorSchema = z
  .strictObject({
    kind: z.enum(['syntax', 'exception', 'interrupted']),
    type: z.string(),
    message: z.string(),
    message_truncated: flag,
    traceback: z.string(),
    traceback_truncated: flag,
    full_traceback: z.string().optional(),
    filename: z.string().optional(),
    filename_truncated: flag.optional(),
    lineno: count.optional(),
  })
  .nullable();

/** `list`'s entry for one function. `signature` is `(...)` when none can be had without running user code. */
export const FunctionEntrySchema = z.strictObject({
  name: z.string(),
  signature: z.string(),
  signature_truncated: flag,
  module: z.string().nullable(),
  doc: z.string().nullable(),
  doc_truncated: flag,
});

/** What a data object holds (shape, columns, dtypes, memory) or a builtin container's `len`, read without user code (shapes.py). */
const summary = z.string().optional();

/**
 * `search`'s entry for one name (`type` is the qualified type name). A data object of numpy, pandas, polars,
 * pyarrow, torch or jax has a `summary` and no `repr` (null): its repr is not computed.
 */
export const MatchSchema = z.strictObject({
  name: z.string(),
  kind: KindSchema,
  type: z.string(),
  repr: z.string().nullable(),
  repr_truncated: flag,
  summary,
});

const inspectedText = z.string().nullable();
/** The bounded fields of an inspection, each with a truncation flag. */
export const INSPECTED_FIELDS = ['qualified_type', 'signature', 'module', 'documentation', 'representation'] as const;

/** `inspect`'s answer. `kind` is null when the name did not resolve (see `error`). */
export const InspectionSchema = z.strictObject({
  name: z.string(),
  kind: KindSchema.nullable(),
  callable: flag,
  qualified_type: inspectedText,
  signature: inspectedText,
  module: inspectedText,
  documentation: inspectedText,
  representation: inspectedText,
  summary,
  truncated: z.strictObject({
    qualified_type: flag,
    signature: flag,
    module: flag,
    documentation: flag,
    representation: flag,
  }),
  error: z
    .strictObject({ stage: z.enum(['resolve', 'attribute', 'metadata', 'repr']), type: z.string(), message: z.string() })
    .nullable(),
  ...repairFields,
});

/** One module's outcome in `reload`. */
export const ReloadResultSchema = z.strictObject({
  module: z.string(),
  status: z.enum(['reloaded', 'not_imported', 'failed']),
  bindings: names,
  error: z.strictObject({ type: z.string(), message: z.string() }).optional(),
});

/** A dynamic tool's registration snapshot (`register_tool`, `discover`). */
export const RegistrationSchema = z.strictObject({
  tool_name: z.string(),
  name: z.string(),
  description: z.string(),
  description_truncated: flag,
  input_schema: z.record(z.string(), z.unknown()),
  fingerprint: z.string(),
  revision: count,
  ...repairFields,
});

/** A value returned by `call_function` or `call_tool`. */
export const CallValueSchema = z.strictObject({ value: JsonValueSchema, truncated: flag, ...encodedFields, ...repairFields });

/** What bounding run_code's result dropped: counts for a JSON value, characters for a repr (null: never built). */
export const ResultCutSchema = z
  .union([
    z.strictObject({ items: count, chars: count, deep: count, size: flag }),
    z.strictObject({ repr_chars: count.nullable() }),
  ])
  .nullable();

/** One parameter of a Code Mode tool function, rendered by the parent from the tool's JSON Schema. */
export const ToolParameterSpecSchema = z.strictObject({
  name: z.string(),
  key: z.string(),
  annotation: z.string().optional(),
  required: z.boolean().optional(),
  default: z.unknown().optional(),
  omit_none: z.boolean().optional(),
});

/** One Code Mode tool, as `define_tools` binds it (`parameters: null`: one `**arguments`). */
export const ToolSpecSchema = z.strictObject({
  python_name: z.string(),
  tool_name: z.string(),
  doc: z.string().nullable().optional(),
  parameters: z.array(ToolParameterSpecSchema).nullable().optional(),
});
