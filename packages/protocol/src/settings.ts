/**
 * The limits the worker enforces, as the parent chooses them; sent in the `configure` message (see
 * {@link workerLimits}). Only what crosses the wire lives here: the CLI's env/flag table is the server's
 * (`@ipython-mcp/mcp-server`), deadlines and queue bounds are the supervisor's.
 */
export interface WorkerLimits {
  maxTextChars: number;
  maxReprChars: number;
  maxTracebackChars: number;
  maxResults: number;
  maxDisplayItems: number;
  maxJsonDepth: number;
  maxToolNameChars: number;
  maxToolDescriptionChars: number;
  maxDynamicTools: number;
  /** Largest frame either side may send. */
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
  maxIpcMessageBytes: 4_194_304,
});

/** The limits as the `configure` message carries them. */
export function workerLimits(limits: WorkerLimits): Record<string, number> {
  return {
    max_text_chars: limits.maxTextChars,
    max_repr_chars: limits.maxReprChars,
    max_traceback_chars: limits.maxTracebackChars,
    max_results: limits.maxResults,
    max_display_items: limits.maxDisplayItems,
    max_json_depth: limits.maxJsonDepth,
    max_tool_name_chars: limits.maxToolNameChars,
    max_tool_description_chars: limits.maxToolDescriptionChars,
    max_dynamic_tools: limits.maxDynamicTools,
    max_ipc_message_bytes: limits.maxIpcMessageBytes,
  };
}
