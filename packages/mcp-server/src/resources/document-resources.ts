import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';

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
}
