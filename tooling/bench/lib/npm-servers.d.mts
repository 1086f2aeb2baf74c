// Types of npm-servers.mjs, for the e2e test that imports it.

/** The pinned release of the three reference servers. */
export declare const NPM_SERVERS_VERSION: string;
/** The `bin` directory of `spec`, installed from npm into the client cache on first use. */
export declare function npmServerBin(spec: string): string;
/** One `mcpServers` entry. */
export interface ServerEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}
/** The four servers of the 47-tool set, and the scratch directory filesystem serves. */
export declare function fortySevenToolServers(options?: { env?: Record<string, string> }): {
  directory: string;
  mcpServers: Record<'filesystem' | 'memory' | 'everything' | 'ipython', ServerEntry>;
};
/** Tool-list sizes direct and through Code Mode. */
export interface ToolListSizes {
  servers: Array<{ name: string; tools: string[]; chars: number }>;
  directTools: number;
  directChars: number;
  codeModeTools: number;
  codeModeChars: number;
  description: string;
}
/** Lists the 47 tools directly and through `code-mode --servers`. */
export declare function measureToolLists(options?: {
  modules?: unknown;
  env?: Record<string, string>;
  codeMode?: Record<string, unknown>;
}): Promise<ToolListSizes>;
