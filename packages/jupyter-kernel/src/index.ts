/**
 * Public API of `@ipython-mcp/jupyter-kernel`.
 *
 * Any new export here becomes public API: add names deliberately, one by one, and
 * never with `export *`.
 */
export { JupyterKernel } from './jupyter-kernel.js';
export { DEFAULT_CONNECT_TIMEOUT_MS, openJupyterKernel } from './open-kernel.js';
export type { OpenJupyterKernelOptions } from './open-kernel.js';
export type { JupyterExecuteOptions, KernelActivity } from './jupyter-kernel.js';
export { kernelExecutionState, shutdownKernel } from './kernel-rest.js';
export type { JupyterKernelTarget, KernelStartOptions } from './kernel-rest.js';
export { JupyterKernelWorker, WORKER_COMM_TARGET } from './kernel-worker.js';
export type { KernelCellObserver, KernelWorkerOptions } from './kernel-worker.js';
export type { MachineGuardOptions } from './kernel-stdin.js';
export { STUCK_KERNEL_MESSAGE, jupyterKernelBackend } from './kernel-backend.js';
export type { JupyterBackend, JupyterBackendOptions, JupyterBackendStatus, JupyterKernelPolicy } from './kernel-backend.js';
export { bootCellCode, workerSources } from './boot-cell.js';
export { JupyterComm } from './jupyter-comm.js';
export type { CommData } from './jupyter-comm.js';
export { JupyterKernelError, redactUrl } from './errors.js';
export type { JupyterKernelErrorCode, JupyterKernelErrorDetails } from './errors.js';
export type { JupyterExecuteError, JupyterExecuteResult, JupyterOutput, MimeBundle } from './outputs.js';
export { DEFAULT_REQUEST_TIMEOUT_MS } from './server-settings.js';
export type { JupyterServerOptions } from './server-settings.js';
