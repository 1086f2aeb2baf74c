// `--state FILE` as the server shows it: runtime_status.state_file, and the one line the first execute after a
// restore carries, so the model is told what came back (and what did not) instead of guessing.
import type { StateReport } from '@ipython-mcp/protocol';
import type { Runtime, RuntimeStatus } from '@ipython-mcp/worker-supervisor';

/** Names listed in the first execute's line before "…" (the report holds more; runtime_status shows them). */
const LINE_NAMES = 10;
const LINE_SKIPPED = 5;

/** A report as runtime_status shows it (snake_case, as the worker wrote it). */
function reportJson(report: StateReport | null): Record<string, unknown> | null {
  return report === null ? null : { ...report };
}

/** `runtime_status.state_file`: the snapshot file, the first worker's restore and the latest save. */
export function stateFileStatus(snapshot: NonNullable<RuntimeStatus['snapshot']>): Record<string, unknown> {
  return { path: snapshot.file, last_restore: reportJson(snapshot.lastRestore), last_save: reportJson(snapshot.lastSave) };
}

/**
 * The line the first execute after a restore carries, or undefined when the restore has nothing to say (no file
 * yet, or an empty one).
 */
export function restoreNotice(report: StateReport): string | undefined {
  if (report.error !== null) return `[ipython-mcp state] ${report.error}`;
  if (report.names_count === 0 && report.skipped_count === 0) return undefined;
  const more = (shown: number, count: number) => (count > shown ? ', …' : '');
  let line = `[ipython-mcp state] restored ${report.names_count} name(s): ${report.names.slice(0, LINE_NAMES).join(', ')}${more(Math.min(report.names.length, LINE_NAMES), report.names_count)}`;
  if (report.tools.length > 0) line += `; tools: ${report.tools.join(', ')}`;
  if (report.skipped_count > 0) {
    const skipped = report.skipped.slice(0, LINE_SKIPPED).map((item) => `${item.name} (${item.reason})`);
    line += `; not restored: ${skipped.join(', ')}${more(skipped.length, report.skipped_count)}`;
  }
  return line;
}

/**
 * What a namespace still owes its sessions after a `--state` restore: the first listing asks the worker for the
 * registrations it restored, and the first cell result carries the line naming what came back. Each is owed once,
 * across every session of the namespace; without `--state` nothing is owed.
 */
export class RestoreFollowUp {
  private toolsOwed: boolean;
  private lineOwed: boolean;

  constructor(
    private readonly runtime: Pick<Runtime, 'status'>,
    stateFile: boolean,
  ) {
    this.toolsOwed = stateFile;
    this.lineOwed = stateFile;
  }

  /** Whether the next listing must still ask the worker for restored registrations. */
  get toolsDue(): boolean {
    return this.toolsOwed;
  }

  /** The worker was asked: no later listing needs to. */
  toolsListed(): void {
    this.toolsOwed = false;
  }

  /**
   * The line for the first cell result, once: undefined for every later one, and for a first one that ran on a
   * replacement worker (epoch past 1, which restored nothing) or after a restore with nothing to say.
   */
  takeLine(epoch: number): string | undefined {
    if (!this.lineOwed) return undefined;
    this.lineOwed = false;
    const restored = this.runtime.status().snapshot?.lastRestore;
    return restored && epoch === 1 ? restoreNotice(restored) : undefined;
  }
}
