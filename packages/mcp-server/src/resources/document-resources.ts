import type { CallToolResult, ReadResourceResult, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '@ipython-mcp/worker-supervisor';

/**
 * Resources an embedder serves beside the namespace's own (the attached notebook of a Jupyter backend): listed in
 * `resources/list` and read through `resources/read`. A URI `read` does not know answers `undefined`, and the
 * namespace's own resources are tried.
 */
export interface DocumentResources {
  list(): Resource[];
  read(uri: string): Promise<ReadResourceResult> | undefined;
  /** A session's client gave its name in `initialize` (`clientInfo.name`). */
  clientNamed?(name: string): void;
  /** Tools the backend serves for its documents (the notebook tool), listed after the stable tools. */
  tools?: DocumentTools | undefined;
  /** The namespace's runtime, once made: what moves it to another kernel (the notebook tool's `open`). */
  runtimeMade?(runtime: Runtime): void;
}

/** How a document tool runs code: an `execute` of `code` through the namespace's own tool caller. */
export type ExecuteCell = (code: string, timeoutSeconds: number | undefined) => Promise<CallToolResult>;

/** Tools an embedder serves beside the stable ones (listed after them, before the dynamic tools). */
export interface DocumentTools {
  list(maxTimeoutSeconds: number): Tool[];
  /** Answers a call of one of its tools; `undefined` for a name that is not its own. */
  call(name: string, args: Record<string, unknown>, execute: ExecuteCell): Promise<CallToolResult> | undefined;
}
