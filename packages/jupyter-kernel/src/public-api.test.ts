import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/jupyter-kernel, pinned: adding or removing one is a deliberate change of public
// API (update this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/jupyter-kernel public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'DEFAULT_CONNECT_TIMEOUT_MS',
      'DEFAULT_REQUEST_TIMEOUT_MS',
      'JupyterComm',
      'JupyterKernel',
      'JupyterKernelError',
      'JupyterKernelWorker',
      'STUCK_KERNEL_MESSAGE',
      'WORKER_COMM_TARGET',
      'bootCellCode',
      'jupyterKernelBackend',
      'kernelExecutionState',
      'openJupyterKernel',
      'redactUrl',
      'shutdownKernel',
      'workerSources',
    ]);
  });
});
