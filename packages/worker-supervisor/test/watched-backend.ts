// The local process backend, watched: its workers are real Python processes; a test sees the interrupts the runtime
// sends them (with the reason) and the requests it writes, as they happen.
import { localProcessBackend } from '../src/local-process-backend.js';
import type { WorkerBackend } from '../src/worker-backend.js';
import type { WorkerHandle } from '../src/worker-handle.js';

export interface BackendWatch {
  onInterrupt?: (id: number, reason: 'memory_limit' | undefined) => void;
  onRequest?: (id: number) => void;
}

export function watchedLocalBackend(watch: BackendWatch): WorkerBackend {
  return {
    name: 'local-process',
    capabilities: localProcessBackend.capabilities,
    start(options) {
      const worker = localProcessBackend.start(options);
      return new Proxy(worker, {
        get(target, property) {
          if (property === 'interrupt') {
            return (id: number, reason?: 'memory_limit') => {
              watch.onInterrupt?.(id, reason);
              target.interrupt(id, reason);
            };
          }
          if (property === 'request') {
            return (...args: Parameters<WorkerHandle['request']>) => {
              const sent = target.request(...args);
              watch.onRequest?.(sent.id);
              return sent;
            };
          }
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  };
}
