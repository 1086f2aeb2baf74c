// Generated from fixtures/protocol/*.json by tooling/scripts/gen-protocol.mjs: do not edit.

/** The IPC protocol version both sides must speak: the hello and configure messages name it (docs/protocol.md). */
export const PROTOCOL_VERSION = 1;
/** Binary image forms a result keeps as base64 and an MCP client gets as image content. */
export const IMAGE_MIME_TYPES = ["image/png","image/jpeg"] as const;
/** The largest single image, in base64 characters (2 MiB): the worker drops a larger one, the server does not send it as image content. */
export const MAX_IMAGE_BASE64_CHARS = 2097152;
/** 2^31 - 1: Node's longest timer delay in ms (a longer one fires at once), and the largest SyntaxError line number the worker reports. */
export const MAX_INT32 = 2147483647;
/** The fields of execute's result that run_code replaces by one ordered output (bridge.py never builds them; operations.ts omits them from the schema). */
export const RUN_CODE_DROPPED_FIELDS = ["stdout","stderr","stdout_omitted_chars","stderr_omitted_chars"] as const;
/** Every stable error code the parent and the worker use (error-codes.json). */
export const ERROR_CODE_LIST = ["runtime_busy","queue_timeout","runtime_closed","runtime_unavailable","operation_timeout","operation_cancelled","memory_limit","invalid_request","invalid_arguments","message_too_large","protocol_error","name_not_found","not_callable","binding_failed","call_raised","result_not_json","protected_name","invalid_name","name_collision","unsupported_signature","registry_full","stale_registration","tool_not_found","job_not_found","startup_failed","worker_crashed","internal_error"] as const;
/** Codes whose operation never ran, so the caller may simply try again (error-codes.json). */
export const RETRYABLE_ERROR_CODE_LIST = ["runtime_busy","queue_timeout"] as const;
/** IPython's own bindings in the user namespace (runtime-names.json). */
export const RUNTIME_NAME_LIST = ["In","Out","get_ipython","exit","quit","open"] as const;
/** Why a value has no canonical JSON form, one code per reason (fixtures/schema-fingerprint/error-codes.json). */
export const CANONICAL_JSON_ERROR_CODE_LIST = ["non_finite_number","unsafe_integer","lone_surrogate","non_string_key","unsupported_type","circular_reference"] as const;

/** The limits the worker enforces, as the parent chooses them; sent in the `configure` message (worker-limits.json). */
export interface WorkerLimits {
  /** Returned text size in characters (stdout, stderr, values, docs). */
  maxTextChars: number;
  /** Representation size in characters in search and inspect. */
  maxReprChars: number;
  /** Traceback size in characters. */
  maxTracebackChars: number;
  /** Items kept in lists, mappings and discovery results. */
  maxResults: number;
  /** Display payloads kept per cell. */
  maxDisplayItems: number;
  /** Nesting depth of returned JSON. */
  maxJsonDepth: number;
  /** Length of a dynamic tool's name. */
  maxToolNameChars: number;
  /** Length of a dynamic tool's description. */
  maxToolDescriptionChars: number;
  /** Live dynamic tools. */
  maxDynamicTools: number;
  /** Largest frame either side may send, in bytes. */
  maxIpcMessageBytes: number;
}
/** The default worker limits (the server's settings default to these too). */
export const DEFAULT_WORKER_LIMITS: Readonly<WorkerLimits> = Object.freeze({
  maxTextChars: 8192,
  maxReprChars: 1024,
  maxTracebackChars: 4096,
  maxResults: 100,
  maxDisplayItems: 20,
  maxJsonDepth: 6,
  maxToolNameChars: 64,
  maxToolDescriptionChars: 1024,
  maxDynamicTools: 100,
  maxIpcMessageBytes: 4194304,
});
/** Each worker limit's name in the `configure` message. */
export const WORKER_LIMIT_WIRE_NAMES: Readonly<Record<keyof WorkerLimits, string>> = Object.freeze({
  maxTextChars: "max_text_chars",
  maxReprChars: "max_repr_chars",
  maxTracebackChars: "max_traceback_chars",
  maxResults: "max_results",
  maxDisplayItems: "max_display_items",
  maxJsonDepth: "max_json_depth",
  maxToolNameChars: "max_tool_name_chars",
  maxToolDescriptionChars: "max_tool_description_chars",
  maxDynamicTools: "max_dynamic_tools",
  maxIpcMessageBytes: "max_ipc_message_bytes",
});

/** What one worker operation does beyond its params and result (operation-facts.json). */
export interface OperationFacts {
  /** What the operation does to the dynamic tool catalog. `changes`: it edits the registry itself (the response carries the registry's revision even when the registry is empty, and the parent reconciles after every call). `may-change`: it may run code that redefines or deletes the callables behind dynamic tools (the parent reconciles when the revision moved, or, without one, when it holds registrations). `none`: the parent never reconciles after it. */
  readonly catalogEffect: "none" | "may-change" | "changes";
  /** Whether the worker reconciles its registry after the operation (when it holds registrations) and stops trusting its last reconciliation before it starts. False only where nothing can have changed (health) or the operation is the reconciliation (discover). */
  readonly workerReconciles: boolean;
  /** Whether the whole text of a truncated stdout or stderr goes to a spill file that the result names. */
  readonly spillsStreams: boolean;
  /** Whether the operation may call back into the host while it runs (Code Mode's tools, answered over the channel mid-operation). In a Jupyter kernel such an operation runs as the kernel's own cell and its calls travel on that cell's stdin channel (the shell channel is busy running it); one sent over the comm is refused. */
  readonly callsHost: boolean;
  /** Whether, in a Jupyter kernel, the operation runs as the kernel's own cell (an execute_request whose metadata carries the ipython-mcp marker, its code the cell's code: it lands in In/Out and the history, and the person's clients see it) instead of as a request on the comm. execute with blank code, which runs no cell, still goes over the comm. */
  readonly kernelCell: boolean;
}
/** Every operation's facts, by operation name (operations.ts holds its keys equal to the catalogue's). */
export const OPERATION_FACT_TABLE = {
  health: { catalogEffect: "none", workerReconciles: false, spillsStreams: false, callsHost: false, kernelCell: false },
  execute: { catalogEffect: "may-change", workerReconciles: true, spillsStreams: true, callsHost: false, kernelCell: true },
  list: { catalogEffect: "none", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  search: { catalogEffect: "none", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  inspect: { catalogEffect: "none", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  call_function: { catalogEffect: "may-change", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  reload: { catalogEffect: "may-change", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  remove: { catalogEffect: "may-change", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  reset: { catalogEffect: "changes", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  register_tool: { catalogEffect: "changes", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  unregister_tool: { catalogEffect: "changes", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  discover: { catalogEffect: "none", workerReconciles: false, spillsStreams: false, callsHost: false, kernelCell: false },
  call_tool: { catalogEffect: "may-change", workerReconciles: true, spillsStreams: false, callsHost: false, kernelCell: false },
  define_tools: { catalogEffect: "may-change", workerReconciles: true, spillsStreams: false, callsHost: true, kernelCell: false },
  run_code: { catalogEffect: "may-change", workerReconciles: true, spillsStreams: false, callsHost: true, kernelCell: true },
} as const satisfies Record<string, OperationFacts>;
