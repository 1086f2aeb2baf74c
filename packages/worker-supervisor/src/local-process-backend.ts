import { WORKER_CAPABILITIES, type WorkerBackend, type WorkerStartOptions } from './worker-backend.js';
import type { WorkerHandle } from './worker-handle.js';
import { WorkerProcess } from './worker-process.js';

/**
 * Workers as local Python processes ({@link WorkerProcess}): each in its own process group, its output captured at
 * the file descriptors, measurable through /proc. With a `launch` wrapper in the start options the same process
 * runs inside an isolation engine (the opt-in sandbox); the backend does not know which engine.
 */
export const localProcessBackend: WorkerBackend = Object.freeze({
  name: 'local-process',
  capabilities: new Set(WORKER_CAPABILITIES),
  start(options: WorkerStartOptions): WorkerHandle {
    return WorkerProcess.spawn(options);
  },
});
