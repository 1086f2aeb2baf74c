import { statSync } from 'node:fs';

/**
 * Settings the worker would accept but that cannot work, found before any worker starts: a library directory
 * that does not exist (doctor rejects it too). Returns the start-up failure, naming the setting and the fix.
 */
export function startupConfigurationProblem(libraryPaths: readonly string[]): string | undefined {
  for (const path of libraryPaths) {
    let isDirectory = false;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      // missing or unreadable: not a directory the worker can import from
    }
    if (!isDirectory) {
      return `library path ${JSON.stringify(path)} from IPYTHON_MCP_LIBRARY_PATHS is not a directory. Fix: create it, or correct IPYTHON_MCP_LIBRARY_PATHS (or --library-paths); then restart the session`;
    }
  }
  return undefined;
}
