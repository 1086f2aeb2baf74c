// The worker start options the kernel backend's tests give: the default limits, nothing preloaded.
import { DEFAULT_WORKER_LIMITS, workerLimits } from '@ipython-mcp/protocol';
import type { WorkerStartOptions } from '@ipython-mcp/worker-supervisor';

/** Start options for a kernel-backed worker (the Python path is unused: the kernel is the worker). */
export function startOptions(): WorkerStartOptions {
  return {
    python: 'unused',
    maxMessageBytes: DEFAULT_WORKER_LIMITS.maxIpcMessageBytes,
    startupTimeoutMs: 30_000,
    configure: { limits: workerLimits(DEFAULT_WORKER_LIMITS), library_paths: [], preload_modules: [], module_aliases: {}, reserved_tool_names: [] },
  };
}
