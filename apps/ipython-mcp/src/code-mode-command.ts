import { INTERRUPT_GRACE_MS } from '@ipython-mcp/code-mode';
import { defaultMemoryLimitMb, type Logger } from '@ipython-mcp/worker-supervisor';
import { ServersFileError, readServersFile } from './code-mode-config.js';
import { ConsentFlagError, consentFlags as readConsentFlags } from './code-mode-consent.js';
import { serveCodeModeStdio, type CodeModeKernelBackend } from './code-mode-server.js';
import type { JupyterRequest } from './jupyter-request.js';
import { VERSION } from './version.js';

/** What `ipython-mcp code-mode` was given. */
export interface CodeModeCommandOptions {
  serversFile: string;
  python: string;
  logger: Logger;
  /** Ends the process with exit code 2 and the message. */
  fail: (message: string) => never;
  /** `--jupyter URL` and its kernel: run_code runs in that kernel. */
  jupyter?: JupyterRequest | undefined;
  /** The `--consent [SERVER[.TOOL]=]POLICY` flags. */
  consent?: readonly string[] | undefined;
}

/**
 * `ipython-mcp code-mode --servers FILE` (with `--jupyter URL` and a kernel flag: run_code runs in that kernel;
 * `--consent` flags before the file's consent policies): serves until stdin ends or a signal, then exits 0.
 */
export async function codeModeCommand(options: CodeModeCommandOptions): Promise<void> {
  const { serversFile, python, logger, fail, jupyter } = options;
  let config;
  try {
    config = readServersFile(serversFile);
  } catch (error) {
    if (error instanceof ServersFileError) fail(error.message);
    throw error;
  }
  let consentFlags;
  try {
    consentFlags = readConsentFlags(options.consent ?? [], config.servers.map((server) => server.name));
  } catch (error) {
    if (error instanceof ConsentFlagError) fail(error.message);
    throw error;
  }
  const kernelBackend = jupyter === undefined ? undefined : await jupyterKernel(jupyter, logger);
  const { closed } = await serveCodeModeStdio({ config, python, logger, version: VERSION, kernelBackend, consentFlags });
  const names = config.servers.map((server) => server.name).join(', ') || 'none';
  const where = jupyter === undefined ? `python: ${python}` : `Jupyter kernel at ${jupyter.url}`;
  process.stderr.write(`ipython-mcp ${VERSION} code-mode ready on stdio (${where}; upstream servers: ${names})\n`);
  await closed;
  process.exit(0);
}

/** run_code's kernel on a Jupyter server: the Jupyter client is loaded only when --jupyter is given. */
async function jupyterKernel(request: JupyterRequest, logger: Logger): Promise<CodeModeKernelBackend> {
  const { jupyterKernelBackend } = await import('@ipython-mcp/jupyter-kernel');
  // The kernel side guards the kernel's machine as a local Code Mode kernel is guarded: the default memory limit,
  // and the 5 s an interrupted cell gets before what it started is ended.
  const machineGuard = { memoryLimitMb: defaultMemoryLimitMb(), graceMs: INTERRUPT_GRACE_MS };
  const backend = jupyterKernelBackend({ server: { url: request.url, token: request.token }, target: request.target, logger, machineGuard });
  return { backend, warmStandby: backend.policy === 'owned', attached: backend.policy === 'attached', close: () => backend.close() };
}
