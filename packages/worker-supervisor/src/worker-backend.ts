import type { WorkerHandle } from './worker-handle.js';
import type { WorkerSpawnOptions } from './worker-process.js';

/**
 * What a backend's workers can do beyond the common protocol. The runtime reads the list before it starts a
 * worker: a setting that needs a capability the backend lacks is refused (the runtime becomes unavailable with a
 * message naming both), and a guard that would need one is switched off rather than run blind.
 *
 * - `memoryGuard`: the worker has a local pid whose process tree can be measured (/proc), and it accepts the
 *   allocation backstop (`data_limit_bytes`).
 * - `fdCapture`: output written to file descriptors 1 and 2 (by C code, `os.write`, subprocesses) reaches the
 *   operation's stdout and stderr.
 * - `processGroup`: `kill()` ends the worker together with every process its code started.
 * - `sandbox`: the worker's launch can be wrapped in an isolation engine (`RuntimeOptions.launch`).
 * - `state`: the worker saves and restores a namespace snapshot (`--state`).
 */
export type WorkerCapability = 'memoryGuard' | 'fdCapture' | 'processGroup' | 'sandbox' | 'state';

/** Every capability, in a fixed order (for messages and tests). */
export const WORKER_CAPABILITIES: readonly WorkerCapability[] = Object.freeze(['memoryGuard', 'fdCapture', 'processGroup', 'sandbox', 'state']);

/** How a backend starts one worker: the handshake's `configure`, bounds, and where the worker runs. */
export type WorkerStartOptions = WorkerSpawnOptions;

/**
 * Where the runtime's workers live: the one seam between the supervision (admission, dispatch, deadlines,
 * replacement) and the thing that runs Python. A backend starts workers; each started worker is a
 * {@link WorkerHandle}: `ready` after its handshake, `request` (send one operation), `interrupt`, `kill`,
 * `shutdown`, and `pid` where the backend has a local process (the memory guard measures its tree).
 *
 * The local process backend (`localProcessBackend`, plain or with a sandbox `launch`) is the default. Any
 * other backend runs the same contract (`workerBackendContract`) and says what it cannot do in
 * {@link WorkerBackend.capabilities}.
 */
export interface WorkerBackend {
  /** A short name for logs and messages (`local-process`). */
  readonly name: string;
  /** What its workers can do beyond the common protocol. */
  readonly capabilities: ReadonlySet<WorkerCapability>;
  /**
   * Whether its workers run in a kernel other clients share (a Jupyter kernel): every outcome then says who did what
   * (`OperationMeta.shared`), one that never reached a worker included (`ran: false`, no wait).
   */
  readonly sharedKernel?: boolean | undefined;
  /** Starts one worker; await its `ready` before sending requests. Never throws: a failed start rejects `ready`. */
  start(options: WorkerStartOptions): WorkerHandle;
}

/** The settings of a runtime that depend on a capability. */
export interface CapabilityNeeds {
  /** A snapshot file is configured (`--state`). */
  state: boolean;
  /** A launch wrapper (an isolation engine) is configured. */
  sandbox: boolean;
}

/**
 * Why a runtime with these settings cannot run on `backend`, naming the setting and the missing capability; or
 * undefined when it can. The memory guard is not a need: without `memoryGuard` it is switched off instead.
 */
export function capabilityProblem(backend: WorkerBackend, needs: CapabilityNeeds): string | undefined {
  const missing = (['state', 'sandbox'] as const).filter((capability) => needs[capability] && !backend.capabilities.has(capability));
  if (missing.length === 0) return undefined;
  const settings = missing.map((capability) => (capability === 'state' ? '--state' : '--sandbox')).join(' and ');
  return `the ${backend.name} worker backend cannot honour ${settings} (it lacks the ${missing.join(' and ')} capability). Fix: run without ${settings}, or use a backend that has it`;
}
