import type { Runtime } from '@ipython-mcp/worker-supervisor';
import { stateFileStatus, type DynamicCatalog } from '../tools/index.js';
import type { JournalRecorder } from '../resources/index.js';

/** The opt-in sandbox as runtime_status reports it. */
export interface SandboxStatus {
  /** The engine that wraps the worker, e.g. `@anthropic-ai/sandbox-runtime 0.0.78 (bubblewrap)`. */
  engine: string;
  /** `none`, or the domains HTTPS may reach through the engine's proxy. */
  network: 'none' | string[];
  /** Where the worker may write. */
  writes: string[];
}

/** runtime_status's answer: the runtime's state, the catalog's size and revision, and the optional parts. */
export function statusOf(runtime: Runtime, catalog: DynamicCatalog, journal: JournalRecorder | undefined, sandbox: SandboxStatus | undefined): Record<string, unknown> {
  const status = runtime.status();
  return {
    state: status.state,
    epoch: status.epoch,
    queue_depth: status.queueDepth,
    active: status.active,
    last_interruption: status.lastInterruption,
    replacement_startup_ms: status.replacementStartupMs,
    worker_startup_ms: status.workerStartupMs,
    standby: status.standby,
    error: status.error,
    python_version: status.python,
    ipython_version: status.ipython,
    codec: status.codec,
    memory_mb: status.memoryMb,
    memory_limit_mb: status.memoryLimitMb,
    // Only while an operation runs: how long it has run and its deadline, both in seconds from dispatch.
    ...(status.activeOperation
      ? {
          active_elapsed_s: Math.round(status.activeOperation.elapsedMs / 100) / 10,
          active_deadline_s: status.activeOperation.deadlineMs === null ? null : status.activeOperation.deadlineMs / 1000,
        }
      : {}),
    dynamic_tools: catalog.size,
    registry_revision: catalog.revision,
    // Only when a journal is configured: what the model reads stays short for everyone else.
    ...(journal ? { journal: journal.status() } : {}),
    // Likewise only with --state (`state` itself is the control-plane state above).
    ...(status.snapshot ? { state_file: stateFileStatus(status.snapshot) } : {}),
    ...(sandbox ? { sandbox } : {}),
  };
}
