// Generated from fixtures/protocol/worker-limits.json by tooling/scripts/gen-protocol.mjs: do not edit.
import type { WorkerLimits } from '@ipython-mcp/protocol';

/** One worker limit as a server setting (worker-limits.json); settings.ts makes each a `count` setting. */
export interface WorkerLimitSetting {
  readonly key: keyof WorkerLimits;
  /** The environment variable; the flag is its suffix in lower-case kebab form. */
  readonly env: string;
  /** The sentence `--help` prints. */
  readonly description: string;
  /** The README table's "meaning" cell. */
  readonly summary: string;
  /** The smallest value the setting (and the worker) accepts. */
  readonly minimum: number;
  /** The largest value the setting (and the worker) accepts. */
  readonly maximum: number;
}

/** Every worker limit's setting, in worker-limits.json order. */
export const WORKER_LIMIT_SETTINGS: readonly WorkerLimitSetting[] = [
  {
    key: "maxTextChars",
    env: "IPYTHON_MCP_MAX_TEXT_CHARS",
    description: "Maximum returned text size (stdout, stderr, results, docs).",
    summary: "returned text size (stdout, stderr, values, docs)",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxReprChars",
    env: "IPYTHON_MCP_MAX_REPR_CHARS",
    description: "Maximum representation size in search and inspect.",
    summary: "representation size in search and inspect",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxTracebackChars",
    env: "IPYTHON_MCP_MAX_TRACEBACK_CHARS",
    description: "Maximum returned traceback size.",
    summary: "traceback size",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxResults",
    env: "IPYTHON_MCP_MAX_RESULTS",
    description: "Maximum items retained in lists, mappings and discovery results.",
    summary: "items kept in lists, mappings and discovery results",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxDisplayItems",
    env: "IPYTHON_MCP_MAX_DISPLAY_ITEMS",
    description: "Maximum display payloads retained per execution.",
    summary: "display payloads kept per cell",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxJsonDepth",
    env: "IPYTHON_MCP_MAX_JSON_DEPTH",
    description: "Maximum nesting depth of translated JSON values.",
    summary: "nesting depth of returned JSON",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxToolNameChars",
    env: "IPYTHON_MCP_MAX_TOOL_NAME_CHARS",
    description: "Maximum dynamic MCP tool-name length.",
    summary: "dynamic tool name length",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxToolDescriptionChars",
    env: "IPYTHON_MCP_MAX_TOOL_DESCRIPTION_CHARS",
    description: "Maximum registration description snapshot.",
    summary: "dynamic tool description length",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxDynamicTools",
    env: "IPYTHON_MCP_MAX_DYNAMIC_TOOLS",
    description: "Maximum live dynamic tool registrations.",
    summary: "live dynamic tools",
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  {
    key: "maxIpcMessageBytes",
    env: "IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES",
    description: "Largest message allowed across the worker boundary.",
    summary: "largest message between server and worker",
    minimum: 1,
    maximum: 4294967295,
  },
];
