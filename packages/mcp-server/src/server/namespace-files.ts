// Names of namespaces and the files derived from them; imports nothing, so any layer may use it.

/**
 * The path of a per-namespace file: `path` itself for the namespace `default` (a single-namespace server keeps
 * the file the user named), else the name inserted before the extension (`j.ipynb` -> `j.NAME.ipynb`).
 */
export function namespaceFilePath(path: string, name: string): string {
  if (name === DEFAULT_NAMESPACE) return path;
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? `${path.slice(0, dot)}.${name}${path.slice(dot)}` : `${path}.${name}`;
}

/** The name of the namespace a single-namespace server (stdio, or `/mcp` over HTTP) serves. */
export const DEFAULT_NAMESPACE = 'default';


/** A namespace name a client may ask for (`/mcp/NAME`): 1–32 characters of a-z, 0-9 and `-`. */
export const NAMESPACE_NAME = /^[a-z0-9-]{1,32}$/;
