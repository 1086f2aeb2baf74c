/**
 * Public API of `@ipython-mcp/jupyter-kernel`.
 *
 * Any new export here becomes public API: add names deliberately, one by one, and
 * never with `export *`.
 */
export { DEFAULT_CONNECT_TIMEOUT_MS, JupyterKernel, openJupyterKernel } from './jupyter-kernel.js';
export type { JupyterExecuteOptions, JupyterKernelTarget, OpenJupyterKernelOptions } from './jupyter-kernel.js';
export { JupyterComm } from './jupyter-comm.js';
export type { CommData } from './jupyter-comm.js';
export { JupyterKernelError, redactUrl } from './errors.js';
export type { JupyterKernelErrorCode, JupyterKernelErrorDetails } from './errors.js';
export type { JupyterExecuteError, JupyterExecuteResult, JupyterOutput, MimeBundle } from './outputs.js';
export { DEFAULT_REQUEST_TIMEOUT_MS } from './server-settings.js';
export type { JupyterServerOptions } from './server-settings.js';
