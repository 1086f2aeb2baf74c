type Json = Record<string, unknown>;

/**
 * How the results of one tool are written: the part of a tool's definition the `ResultWriter` reads
 * (tool-result.ts). Stable tools carry it in their `StableToolDefinition` (tool-definition.ts); dynamic tools share one.
 */
export interface ResultRules {
  /** The tool's name, for messages. */
  readonly name: string;
  /** The compact structured content of a successful result, from the worker's full result (compact-result.ts). */
  readonly compact: (full: Json) => Json;
  /** The text block a model reads, from the compact structured content (result-text.ts). */
  readonly text: (structured: Json) => string;
  /** The published output schema: in development and test builds every result is checked against it. */
  readonly outputSchema?: Json | undefined;
  /**
   * What every failure result of the tool states beside its `error` (execute: `status: "error"`, since its schema's
   * default is "ok"). The writer adds them to each failure, and the output schema requires them there.
   */
  readonly failureFields?: Readonly<Json> | undefined;
  /**
   * A cell's result (execute): images as MCP image content, one representation per display, the whole traceback
   * in `_meta`, and the first one after a `--state` restore says what was restored.
   */
  readonly cellContent?: true | undefined;
  /** Whether a successful operation's result is still an error for the model (execute's failed cell). */
  readonly isError?: ((full: Json) => boolean) | undefined;
  /** The result reports the runtime's epoch itself (runtime_status), so a later result need not repeat it. */
  readonly reportsEpoch?: true | undefined;
}
