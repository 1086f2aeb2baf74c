import { z } from 'zod';
import { OPERATION_FACT_TABLE, RUN_CODE_DROPPED_FIELDS, type OperationFacts } from './constants.js';
import {
  CallValueSchema,
  CellErrorSchema,
  CellResultSchema,
  DisplaySchema,
  FunctionEntrySchema,
  InspectionSchema,
  KindSchema,
  MatchSchema,
  RegistrationSchema,
  ReloadResultSchema,
  ResultCutSchema,
  ToolSpecSchema,
  repairFields,
} from './operation-shapes.js';

/*
 * The catalogue of worker operations: for each `op`, the params the parent sends and the result the worker answers
 * (docs/protocol.md, "Operations"). It is the one definition of these shapes on the TypeScript side: `Runtime.run`
 * is typed by it, the stable tools' output schemas are derived from it, and `fixtures/protocol/operations.schema.json`
 * (its JSON Schema, checked by python/tests/test_operations_contract.py against the real worker) is generated from it
 * (`node tooling/scripts/gen-protocol.mjs`).
 *
 * Results are validated in full only in tests: the production path trusts the worker's shape after the cheap frame
 * checks of parse-worker-message.ts (the contract test is what keeps the two sides equal).
 */

const count = z.number().int().nonnegative();
const names = z.array(z.string());
const empty = z.strictObject({});

/** execute's full result (the MCP server compacts it; compact-result.ts). */
export const ExecuteResultSchema = z.strictObject({
  status: z.enum(['ok', 'error']),
  execution_count: count,
  stdout: z.string(),
  stderr: z.string(),
  stdout_omitted_chars: count,
  stderr_omitted_chars: count,
  // A truncated stream only: where in the text its omitted characters were (head | omitted | tail), the spill file
  // holding the whole stream, and what did not fit the spill budget (only when something did not).
  stdout_omitted_at: count.optional(),
  stderr_omitted_at: count.optional(),
  stdout_spill: z.string().optional(),
  stderr_spill: z.string().optional(),
  stdout_spill_omitted_chars: count.optional(),
  stderr_spill_omitted_chars: count.optional(),
  // A Jupyter kernel's spill file whose pull was cut short: what came and why the rest did not (docs/jupyter.md).
  stdout_spill_cut: z.string().optional(),
  stderr_spill_cut: z.string().optional(),
  truncated: z.strictObject({ stdout: z.boolean(), stderr: z.boolean(), result: z.boolean(), displays: z.boolean() }),
  result: CellResultSchema,
  displays: z.array(DisplaySchema),
  displays_omitted: count,
  error: CellErrorSchema,
  ...repairFields,
});

const droppedByRunCode = Object.fromEntries(RUN_CODE_DROPPED_FIELDS.map((field) => [field, true])) as {
  [Field in (typeof RUN_CODE_DROPPED_FIELDS)[number]]: true;
};

/**
 * run_code's result: execute's, without the separate streams (`RUN_CODE_DROPPED_FIELDS`, which bridge.py never builds),
 * with one ordered `output`, what bounding the result cut, and how many tool calls the code made.
 */
export const RunCodeResultSchema = ExecuteResultSchema.omit(droppedByRunCode).extend({
  truncated: z.strictObject({ result: z.boolean(), displays: z.boolean(), output: z.boolean() }),
  output: z.string(),
  output_omitted_chars: count,
  result_cut: ResultCutSchema,
  tool_calls_made: count,
});

/** The bound a listing (`list`, `search`) shares: how many matched, and whether `max_results` cut the list. */
const listed = { total: count, truncated: z.boolean(), ...repairFields };

/** discover's full answer: every live registration and the names that went stale. */
export const DiscoverSnapshotSchema = z.strictObject({
  revision: count,
  tools: z.array(RegistrationSchema),
  stale: names,
  ...repairFields,
});
/** discover's answer when nothing changed since `known_revision`. */
export const DiscoverUnchangedSchema = z.strictObject({ revision: count, unchanged: z.literal(true), ...repairFields });

/** Every worker operation: its params and its result. */
export const OPERATIONS = {
  health: {
    params: empty,
    result: z.strictObject({ pid: z.number().int().positive(), execution_count: count }),
  },
  execute: {
    params: z.strictObject({ code: z.string() }),
    result: ExecuteResultSchema,
  },
  list: {
    params: empty,
    result: z.strictObject({ functions: z.array(FunctionEntrySchema), ...listed }),
  },
  search: {
    params: z.strictObject({ query: z.string(), exact: z.boolean().optional(), kinds: z.array(KindSchema).optional() }),
    result: z.strictObject({ matches: z.array(MatchSchema), ...listed }),
  },
  inspect: {
    params: z.strictObject({ name: z.string() }),
    result: InspectionSchema,
  },
  call_function: {
    params: z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
    result: CallValueSchema,
  },
  reload: {
    params: z.strictObject({ modules: names }),
    result: z.strictObject({ results: z.array(ReloadResultSchema), ...repairFields }),
  },
  remove: {
    params: z.strictObject({ names }),
    result: z.strictObject({ removed: names, refused: names, unknown: names, ...repairFields }),
  },
  reset: {
    params: empty,
    result: z.strictObject({
      removed: names,
      removed_count: count,
      removed_truncated: z.boolean(),
      execution_count: count,
      ...repairFields,
    }),
  },
  register_tool: {
    params: z.strictObject({
      name: z.string(),
      tool_name: z.string().nullable().optional(),
      description: z.string().nullable().optional(),
    }),
    result: RegistrationSchema,
  },
  unregister_tool: {
    params: z.strictObject({ names }),
    result: z.strictObject({ unregistered: names, unknown: names, revision: count, ...repairFields }),
  },
  discover: {
    params: z.strictObject({ known_revision: count.optional() }),
    result: z.union([DiscoverSnapshotSchema, DiscoverUnchangedSchema]),
  },
  call_tool: {
    params: z.strictObject({ tool_name: z.string(), arguments: z.record(z.string(), z.unknown()), fingerprint: z.string() }),
    result: CallValueSchema,
  },
  define_tools: {
    params: z.strictObject({ tools: z.array(ToolSpecSchema), max_tool_calls: count.optional() }),
    result: z.strictObject({ defined: names, removed: names }),
  },
  run_code: {
    params: z.strictObject({ code: z.string(), max_tool_calls: count.optional(), max_result_bytes: count.optional() }),
    result: RunCodeResultSchema,
  },
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

/** The name of a worker operation. */
export type OperationName = keyof typeof OPERATIONS;
/** Every operation name, in catalogue order. */
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

export type { OperationFacts };
/** What an operation does to the dynamic tool catalog (see {@link OperationFacts.catalogEffect}). */
export type CatalogEffect = OperationFacts['catalogEffect'];

/**
 * What each operation does beyond its params and result: its effect on the dynamic tool catalog, whether the worker
 * reconciles after it, whether it spills its streams. Generated from fixtures/protocol/operation-facts.json, as the
 * worker's `OPERATION_FACTS` is, so the two sides act on one table; an operation of the catalogue without facts
 * does not compile (and operations.test.ts fails on facts for an operation the catalogue lacks).
 */
export const OPERATION_FACTS: Readonly<Record<OperationName, OperationFacts>> = OPERATION_FACT_TABLE;
/** What the parent sends as `params` of operation `Op`. */
export type OperationParams<Op extends OperationName> = z.input<(typeof OPERATIONS)[Op]['params']>;
/** What the worker answers as `result` of operation `Op`. */
export type OperationResult<Op extends OperationName> = z.output<(typeof OPERATIONS)[Op]['result']>;
/** execute's full result. */
export type ExecuteResult = OperationResult<'execute'>;
/** run_code's result. */
export type RunCodeResult = OperationResult<'run_code'>;
/** A dynamic tool's registration snapshot. */
export type Registration = z.output<typeof RegistrationSchema>;
/** One element of execute's `displays`. */
export type Display = z.output<typeof DisplaySchema>;

/** Whether `op` names a catalogued operation. */
export function isOperationName(op: string): op is OperationName {
  return Object.hasOwn(OPERATIONS, op);
}

/**
 * Checks one result against its operation's schema in full. For tests and debugging only: the production path does
 * not pay for it (see the note at the top of this file).
 */
export function checkOperationResult<Op extends OperationName>(op: Op, result: unknown): z.ZodSafeParseResult<OperationResult<Op>> {
  return OPERATIONS[op].result.safeParse(result) as z.ZodSafeParseResult<OperationResult<Op>>;
}

/** Checks one operation's params in full (tests and debugging, as {@link checkOperationResult}). */
export function checkOperationParams<Op extends OperationName>(op: Op, params: unknown): z.ZodSafeParseResult<OperationParams<Op>> {
  return OPERATIONS[op].params.safeParse(params) as z.ZodSafeParseResult<OperationParams<Op>>;
}

/**
 * The catalogue as one JSON Schema (draft 2020-12): `properties.<op>.properties.{params,result}`. Written to
 * `fixtures/protocol/operations.schema.json`, which pytest validates the worker's real answers against.
 */
export function operationsJsonSchema(): Record<string, unknown> {
  const catalogue = z.strictObject(
    Object.fromEntries(
      OPERATION_NAMES.map((op) => [op, z.strictObject({ params: OPERATIONS[op].params, result: OPERATIONS[op].result })]),
    ),
  );
  return z.toJSONSchema(catalogue, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
}
