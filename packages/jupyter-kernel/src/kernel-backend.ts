/**
 * A worker backend whose workers live in a Jupyter kernel (a human's notebook kernel, a kernel on a GPU box, a
 * gateway's), with the policy that decides what a kill means: a kernel ipython-mcp attached to is never restarted; a
 * kernel it started is replaced by a fresh one and shut down when ipython-mcp exits.
 */
import { workerSourceDirectory, type Logger, type WorkerBackend, type WorkerCapability, type WorkerStartOptions } from '@ipython-mcp/worker-supervisor';
import { redactUrl } from './errors.js';
import { kernelExecutionState, openJupyterKernel } from './jupyter-kernel.js';
import type { JupyterKernel, JupyterKernelTarget } from './jupyter-kernel.js';
import { JupyterKernelWorker, type KernelCellObserver } from './kernel-worker.js';
import type { JupyterServerOptions } from './server-settings.js';

/**
 * What a kill of a worker means for its kernel.
 *
 * - `attached`: the kernel is someone else's (`--kernel`, `--notebook`): it is never restarted or shut down; after
 *   a kill the next start re-attaches, and fails while the kernel is still stuck in the cell that was killed.
 * - `owned`: ipython-mcp started the kernel (`--kernel-name`): a kill shuts it down and the next start starts a
 *   fresh one (the epoch advances); every kernel started is shut down by {@link JupyterBackend.close}.
 */
export type JupyterKernelPolicy = 'attached' | 'owned';

/** Options of {@link jupyterKernelBackend}. */
export interface JupyterBackendOptions {
  readonly server: JupyterServerOptions;
  readonly target: JupyterKernelTarget;
  /** Default: `owned` for a `kernelName` target, `attached` otherwise. */
  readonly policy?: JupyterKernelPolicy | undefined;
  /** Bound on opening the kernel's channels; default that of openJupyterKernel. */
  readonly connectTimeoutMs?: number | undefined;
  /** The directory that holds `ipython_mcp_worker`; default workerSourceDirectory(). */
  readonly sourceDirectory?: string | undefined;
  /** Gives each worker's observer of the agent's cells (the notebook mirror); none by default. */
  readonly cells?: (() => KernelCellObserver) | undefined;
  readonly logger?: Logger | undefined;
}

/** What runtime_status reports about a Jupyter backend. Never the token. */
export interface JupyterBackendStatus {
  kind: 'jupyter';
  server: string;
  kernel_id: string | null;
  kernel_name?: string | undefined;
  notebook?: string | undefined;
  policy: JupyterKernelPolicy;
  /** Set while the attached kernel is stuck in a cell a killed worker left running. */
  stuck?: boolean | undefined;
}

/** A {@link WorkerBackend} over one Jupyter server, with what it reports and a close for its kernels. */
export interface JupyterBackend extends WorkerBackend {
  readonly policy: JupyterKernelPolicy;
  /** The server, kernel and policy as runtime_status reports them. */
  status(): JupyterBackendStatus;
  /** Shuts down every kernel this backend started that is still running (idempotent). */
  close(): Promise<void>;
}

/** The words a start of a stuck attached kernel fails with. */
export const STUCK_KERNEL_MESSAGE =
  'the kernel is stuck running a cell; ipython-mcp does not restart a kernel it did not start — interrupt or restart it from Jupyter';

/** How long a start after a kill waits for the attached kernel to finish the killed cell before it calls it stuck. */
const STUCK_WAIT_MS = 3_000;

const NO_CAPABILITIES: ReadonlySet<WorkerCapability> = new Set<WorkerCapability>();

/**
 * Workers in a Jupyter kernel: capabilities none (no local process to measure or group, no fd-level capture, no
 * sandbox, no snapshot), so the runtime refuses `--state` and `--sandbox` and switches the memory guard off.
 *
 * Warm standbys: with the `attached` policy every worker attaches to the same kernel, and the newest attach takes
 * the kernel side over, so the runtime must run without a standby (`warmStandby: false`); with `owned` a standby
 * is a warm kernel of its own.
 */
export function jupyterKernelBackend(options: JupyterBackendOptions): JupyterBackend {
  const policy: JupyterKernelPolicy = options.policy ?? ('kernelName' in options.target ? 'owned' : 'attached');
  const started = new Set<JupyterKernel>();
  let lastKernelId: string | null = 'kernelId' in options.target ? options.target.kernelId : null;
  let stuck = false;
  let closed = false;

  const opening = new Set<Promise<unknown>>();
  const open = (): Promise<JupyterKernel> => {
    const attempt = openKernel();
    const settled = attempt.catch(() => undefined);
    opening.add(settled);
    void settled.finally(() => opening.delete(settled));
    return attempt;
  };
  const openKernel = async (): Promise<JupyterKernel> => {
    if (closed) throw new Error('the Jupyter backend is closed');
    if (policy === 'attached' && stuck && lastKernelId !== null) {
      const deadline = Date.now() + STUCK_WAIT_MS;
      for (;;) {
        const state = await kernelExecutionState(options.server, lastKernelId);
        if (state !== 'busy') break;
        if (Date.now() >= deadline) throw new Error(STUCK_KERNEL_MESSAGE);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      stuck = false;
    }
    const kernel = await openJupyterKernel({ server: options.server, target: options.target, connectTimeoutMs: options.connectTimeoutMs });
    lastKernelId = kernel.kernelId;
    if (kernel.owned) {
      if (closed) {
        await kernel.close().catch(() => undefined);
        throw new Error('the Jupyter backend is closed');
      }
      started.add(kernel);
    }
    return kernel;
  };

  return {
    name: 'jupyter',
    capabilities: NO_CAPABILITIES,
    policy,
    start(start: WorkerStartOptions): JupyterKernelWorker {
      const worker = new JupyterKernelWorker({
        open,
        start,
        sourceDirectory: options.sourceDirectory ?? workerSourceDirectory(),
        logger: options.logger ?? start.logger,
        cells: options.cells?.(),
        onKilledBusy: () => {
          if (policy === 'attached') stuck = true;
        },
      });
      return worker;
    },
    status(): JupyterBackendStatus {
      const target = options.target;
      return {
        kind: 'jupyter',
        server: redactUrl(options.server.url),
        kernel_id: lastKernelId,
        ...('kernelName' in target ? { kernel_name: target.kernelName } : {}),
        ...('notebookPath' in target ? { notebook: target.notebookPath } : {}),
        policy,
        ...(stuck ? { stuck: true } : {}),
      };
    },
    async close(): Promise<void> {
      closed = true;
      // A kernel still being started is shut down as soon as it exists (openKernel sees `closed`).
      await Promise.all([...opening]);
      const kernels = [...started];
      started.clear();
      await Promise.all(kernels.map((kernel) => kernel.close().catch(() => undefined)));
    },
  };
}
