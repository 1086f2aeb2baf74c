import { z } from 'zod';

/** Codec names as negotiated in the handshake. */
export const CodecNameSchema = z.enum(['msgpack', 'json']);
/** A negotiated codec. */
export type CodecName = z.infer<typeof CodecNameSchema>;

const RequestId = z.number().int().positive();
const WireError = z
  .object({
    code: z.string().min(1).max(64),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
/** A structured failure as it crosses the wire. */
export type WireError = z.infer<typeof WireError>;
export { WireError as WireErrorSchema };

/** Worker → parent: first frame, always JSON. */
export const HelloSchema = z
  .object({
    type: z.literal('hello'),
    protocol: z.number().int(),
    codecs: z.array(z.string()).min(1),
    pid: z.number().int().positive(),
    python: z.string(),
    ipython: z.string(),
    worker: z.string(),
  })
  .strict();
/** The worker's handshake greeting. */
export type Hello = z.infer<typeof HelloSchema>;

/** Parent → worker: the reply to `hello`. */
export const ConfigureSchema = z
  .object({
    type: z.literal('configure'),
    protocol: z.number().int(),
    codec: CodecNameSchema,
    limits: z.record(z.string(), z.number().int().positive()),
    library_paths: z.array(z.string()),
    preload_modules: z.array(z.string()),
    module_aliases: z.record(z.string(), z.string()),
    reserved_tool_names: z.array(z.string()),
    /** The memory guard's allocation backstop: the worker sets its soft RLIMIT_DATA to this. Absent: none. */
    data_limit_bytes: z.number().int().positive().optional(),
    /** `--state FILE`: where the namespace snapshot lives; `restore` only for the first worker of a lifespan. */
    state: z
      .object({
        path: z.string().min(1),
        restore: z.boolean(),
        max_bytes: z.number().int().positive(),
        save_seconds: z.number().positive(),
      })
      .strict()
      .optional(),
    /** Where execute spills the whole text of a truncated stream, and the directory's byte budget. Absent: off. */
    output_spill: z.object({ dir: z.string(), max_bytes: z.number().int().positive() }).strict().optional(),
  })
  .strict();
/** Start-up configuration for a worker. */
export type Configure = z.infer<typeof ConfigureSchema>;

/** What one save or restore of a namespace snapshot did (`--state`); the lists are bounded, the counts whole. */
export const StateReportSchema = z
  .object({
    kind: z.enum(['save', 'restore']),
    ok: z.boolean(),
    error: z.string().nullable(),
    names: z.array(z.string()),
    names_count: z.number().int().nonnegative(),
    skipped: z.array(z.object({ name: z.string(), reason: z.string() }).strict()),
    skipped_count: z.number().int().nonnegative(),
    tools: z.array(z.string()),
    bytes: z.number().int().nonnegative(),
    ms: z.number().int().nonnegative(),
  })
  .strict();
/** One save or restore of the namespace snapshot. */
export type StateReport = z.infer<typeof StateReportSchema>;

/** Worker → parent: the shell is built and configured. */
export const ReadySchema = z
  .object({
    type: z.literal('ready'),
    execution_count: z.number().int().nonnegative(),
    protected_names: z.array(z.string()),
    /** The restore of the snapshot, when this worker was told to restore one. */
    state: StateReportSchema.optional(),
  })
  .strict();
/** The worker is ready for requests. */
export type Ready = z.infer<typeof ReadySchema>;

/** Worker → parent: the shell could not be built (bad preload, bad path, protocol mismatch). */
export const StartupFailedSchema = z.object({ type: z.literal('startup_failed'), error: WireError }).strict();

/** Parent → worker: run one operation. */
export const RequestSchema = z
  .object({
    type: z.literal('request'),
    id: RequestId,
    op: z.string().min(1).max(64),
    params: z.record(z.string(), z.unknown()),
    stream: z.boolean(),
  })
  .strict();
/** One operation request. */
export type Request = z.infer<typeof RequestSchema>;

/** Worker → parent: the single answer to a request. */
// The registry's revision after the operation, when the worker holds dynamic tools (docs/protocol.md).
const CatalogRevision = z.number().int().nonnegative().optional();
export const ResponseSchema = z.discriminatedUnion('ok', [
  z
    .object({ type: z.literal('response'), id: RequestId, ok: z.literal(true), result: z.record(z.string(), z.unknown()), catalog_revision: CatalogRevision })
    .strict(),
  z.object({ type: z.literal('response'), id: RequestId.nullable(), ok: z.literal(false), error: WireError, catalog_revision: CatalogRevision }).strict(),
]);
/** A request's answer. */
export type Response = z.infer<typeof ResponseSchema>;

/** Worker → parent: streamed output of a running request that asked for it. */
export const EventSchema = z
  .object({ type: z.literal('event'), id: RequestId, kind: z.enum(['stdout', 'stderr']), text: z.string() })
  .strict();
/** A streamed output chunk. */
export type WorkerEvent = z.infer<typeof EventSchema>;

/**
 * Parent → worker: interrupt request `id` if (and only if) it is the active one. `reason: "memory_limit"` also asks
 * the worker to release what the stopped code left unreachable before it answers.
 */
export const InterruptSchema = z.object({ type: z.literal('interrupt'), id: RequestId, reason: z.enum(['memory_limit']).optional() }).strict();
/** Parent → worker: exit after the active request. */
export const ShutdownSchema = z.object({ type: z.literal('shutdown') }).strict();

/** Worker → parent: a nested tool call from running code (Code Mode). */
export const ToolCallSchema = z
  .object({
    type: z.literal('tool_call'),
    id: RequestId,
    call_id: z.number().int().positive(),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    /**
     * How long the worker waited for its previous nested call of this request, in microseconds of its own clock:
     * from just before that call's frame was written to just after its answer was read. The parent counts the part
     * of it that it did not spend answering (the frames' transit both ways) as tool-call time, not as code time.
     * Absent on a request's first call.
     */
    waited_us: z.number().int().nonnegative().optional(),
  })
  .strict();
/** A nested tool call. */
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** Parent → worker: the answer to a nested tool call. */
export const ToolResultSchema = z.union([
  z.object({ type: z.literal('tool_result'), call_id: z.number().int().positive(), ok: z.literal(true), value_json: z.string() }).strict(),
  z.object({ type: z.literal('tool_result'), call_id: z.number().int().positive(), ok: z.literal(false), message: z.string() }).strict(),
]);
/** A nested tool call's answer. */
export type ToolResult = z.infer<typeof ToolResultSchema>;

/** Worker → parent: a frame the worker could not use. */
export const ProtocolErrorSchema = z
  .object({ type: z.literal('protocol_error'), code: z.string(), message: z.string(), id: RequestId.optional() })
  .strict();

/** Worker → parent: a save of the namespace snapshot finished (`%ipython_mcp_save`, or the graceful end). */
export const StateReportMessageSchema = z.object({ type: z.literal('state_report'), report: StateReportSchema }).strict();

/** Every message the worker may send. */
export const WorkerMessageSchema = z.union([
  StateReportMessageSchema,
  HelloSchema,
  ReadySchema,
  StartupFailedSchema,
  ResponseSchema,
  EventSchema,
  ToolCallSchema,
  ProtocolErrorSchema,
]);
/** A message from the worker. */
export type WorkerMessage = z.infer<typeof WorkerMessageSchema>;

/** Every message the parent may send. */
export const ParentMessageSchema = z.union([ConfigureSchema, RequestSchema, InterruptSchema, ShutdownSchema, ToolResultSchema]);
/** A message from the parent. */
export type ParentMessage = z.infer<typeof ParentMessageSchema>;
