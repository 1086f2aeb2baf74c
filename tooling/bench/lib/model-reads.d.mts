// Types of model-reads.mjs, for the e2e test that imports it.
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

/** The fourteen calls, in order; each `[tool, arguments, label]`. */
export declare const FOURTEEN_CALLS: ReadonlyArray<readonly [string, Record<string, unknown>, string]>;
/** The data session's calls (pandas, matplotlib), in order; each `[tool, arguments, label]`. */
export declare const DATA_SESSION_CALLS: ReadonlyArray<readonly [string, Record<string, unknown>, string]>;
/** What Claude Code hands its model for a tool result. */
export declare function claudeCodeForwards(result: CallToolResult): string;
/** What Codex hands its model: the text block(s). */
export declare function codexForwards(result: CallToolResult): string;
/** Characters of names, descriptions and input schemas of a tool list. */
export declare function toolListChars(tools: Tool[]): number;
/** One row per call. */
export interface ModelReadsRow {
  label: string;
  tool: string;
  isError: boolean;
  result: CallToolResult;
  claudeCode: string;
  codex: string;
}
/** Runs the fourteen calls through `call`. */
export declare function runFourteen(call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>): Promise<ModelReadsRow[]>;
/** Runs the data session through `call` (needs numpy, pandas and matplotlib in the worker's Python). */
export declare function runDataSession(call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>): Promise<ModelReadsRow[]>;
