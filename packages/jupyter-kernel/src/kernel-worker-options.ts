/** What a {@link JupyterKernelWorker} is built with (kernel-worker.ts), and the comm target it opens. */
import type { Logger, WorkerStartOptions, WorkerStartupError } from '@ipython-mcp/worker-supervisor';
import type { JupyterKernel } from './jupyter-kernel.js';
import type { KernelCellObserver } from './kernel-cell-observer.js';
import type { MachineGuardOptions } from './kernel-stdin.js';

/** The comm target the kernel side registers. */
export const WORKER_COMM_TARGET = '_ipython_mcp_worker';

/** What a JupyterKernelWorker needs besides the runtime's start options. */
export interface KernelWorkerOptions {
  /**
   * Attaches to (or starts) the kernel and opens its channels; a rejection is the start-up failure's message. The
   * signal aborts when the worker ends first: the opening is given up, and a kernel started for it shut down.
   */
  open: (signal: AbortSignal) => Promise<JupyterKernel>;
  start: WorkerStartOptions;
  /** The directory that holds `ipython_mcp_worker` (workerSourceDirectory()). */
  sourceDirectory: string;
  /** The memory guard and process cleanup the kernel side runs on the kernel's machine (kernel-stdin.ts). */
  machineGuard?: MachineGuardOptions | undefined;
  /** Called when `kill()` ends the worker while one of its requests was running or queued in the kernel. */
  onKilledBusy?: (() => void) | undefined;
  /** Whether the opened kernel still holds the namespace the previous worker served (the same kernel process). */
  namespaceKept?: ((kernel: JupyterKernel) => boolean) | undefined;
  /**
   * Whether a start that failed with `cause` (the kernel lost during the boot, the start-up bound passed) may pass,
   * and when to try again: the backend's back-off. Unset, such failures are final.
   */
  startupRetry?: ((cause: unknown) => WorkerStartupError['retry']) | undefined;
  /** Told about each of the agent's cells (the notebook mirror). */
  cells?: KernelCellObserver | undefined;
  logger?: Logger | undefined;
}
