import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The worker's environment variables naming the spill directory and the process that owns it: the worker's
 * watchdog removes the directory once that process is gone (python/ipython_mcp_worker/ipc/lifeline.py), which covers
 * the one exit path on which no code of the server runs (SIGKILL).
 */
export const SPILL_DIRECTORY_ENV = 'IPYTHON_MCP_SPILL_DIR';
/** See {@link SPILL_DIRECTORY_ENV}. */
export const SPILL_OWNER_ENV = 'IPYTHON_MCP_SPILL_OWNER_PID';

/**
 * The runtime's spill directory: where execute writes the whole text of a truncated stdout/stderr
 * (python/ipython_mcp_worker/capture/spill.py), for the agent to read with a later execute. One per runtime, mode 0700,
 * made at start; the workers keep it within `maxBytes` (oldest files first). Removed on close, on any exit of this
 * process that runs 'exit' handlers, and by the worker's watchdog when this process was killed.
 */
export class OutputSpill {
  private removed = false;
  private readonly onExit = (): void => this.remove();

  private constructor(
    /** The directory. */
    readonly path: string,
    /** Its byte budget. */
    readonly maxBytes: number,
    /**
     * Whether the worker's watchdog removes it once this process is gone (the default place); false under a given
     * parent, whose owner cleans it up (a sandbox's own directory, where the worker cannot see this pid).
     */
    readonly watchedByWorker: boolean,
  ) {
    process.once('exit', this.onExit);
  }

  /**
   * A new directory under `parent` (default: the system's temporary directory), or undefined when it cannot be made
   * (no spill then).
   */
  static create(maxBytes: number, parent?: string): OutputSpill | undefined {
    try {
      // mkdtemp makes the directory 0700, readable by this user only.
      return new OutputSpill(mkdtempSync(join(parent ?? tmpdir(), 'ipython-mcp-output-')), maxBytes, parent === undefined);
    } catch {
      return undefined;
    }
  }

  /** Removes the directory and everything in it. Idempotent. */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    process.removeListener('exit', this.onExit);
    try {
      rmSync(this.path, { recursive: true, force: true });
    } catch {
      // Best effort: the temporary directory's own clean-up remains.
    }
  }
}
