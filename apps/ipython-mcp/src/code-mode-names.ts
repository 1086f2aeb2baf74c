import { toPythonIdentifier } from '@ipython-mcp/code-mode';

/** One upstream tool to name. */
export interface UpstreamToolName {
  server: string;
  /** The server's configured prefix, if any. */
  prefix: string | undefined;
  tool: string;
}

/**
 * The Code Mode tool name of each upstream tool, in input order. A tool keeps its own name unless its server has
 * a `prefix` (then `<prefix>_<tool>`) or another server offers a tool of the same name (then every one of them is
 * `<server>_<tool>`, the server name made an identifier). A name still taken after that, which only contrived
 * names can cause, gets `_2`, `_3`, ... in input order. The engine then makes each one a Python identifier.
 */
export function functionNames(tools: readonly UpstreamToolName[]): string[] {
  const servers = new Map<string, Set<string>>();
  for (const { server, tool } of tools) {
    let set = servers.get(tool);
    if (set === undefined) servers.set(tool, (set = new Set()));
    set.add(server);
  }
  const taken = new Set<string>();
  return tools.map(({ server, prefix, tool }) => {
    const shared = (servers.get(tool)?.size ?? 0) > 1;
    const base =
      prefix !== undefined ? `${prefix}_${tool}` : shared ? `${toPythonIdentifier(server, 'parameter')}_${tool}` : tool;
    let name = base;
    for (let suffix = 2; taken.has(name); suffix += 1) name = `${base}_${suffix}`;
    taken.add(name);
    return name;
  });
}
