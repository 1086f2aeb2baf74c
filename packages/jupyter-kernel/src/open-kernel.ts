/**
 * Opening a kernel: find or start it over REST (kernel-rest.ts), then open its channels and wait for its first
 * reply (jupyter-kernel.ts holds the live connection).
 */
import { randomUUID } from 'node:crypto';
import { CommsOverSubshells, KernelAPI, KernelConnection } from '@jupyterlab/services';
import type { Kernel, ServerConnection } from '@jupyterlab/services';
import { JupyterKernelError } from './errors.js';
import { JupyterKernel } from './jupyter-kernel.js';
import { findKernel } from './kernel-rest.js';
import { askAboutKernel } from './kernel-route.js';
import { AGENT_SESSION_PREFIX } from './kernel-types.js';
import type { JupyterKernelTarget, KernelStartOptions } from './kernel-rest.js';
import { resolveServer, toJupyterError } from './server-settings.js';
import type { JupyterServerOptions } from './server-settings.js';

/** Default bound on opening the kernel's channels and getting its `kernel_info_reply`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/** Options of {@link openJupyterKernel}. */
export interface OpenJupyterKernelOptions {
  readonly server: JupyterServerOptions;
  readonly target: JupyterKernelTarget;
  /** Bound on opening the channels and the kernel's first reply; default {@link DEFAULT_CONNECT_TIMEOUT_MS}. */
  readonly connectTimeoutMs?: number | undefined;
  /** For a `kernelName` target: the start request's `env`, and who hears the new kernel's id first. */
  readonly start?: KernelStartOptions | undefined;
}

/**
 * The services' REST client, except that a kernel looked up after its WebSocket closed early is called dead only on
 * the server's word: the services take any error but a network one (a proxy's 502, a hub's 503 or 424 while the
 * server is away, a 500) for a dead kernel and dispose the connection. Here such an answer is "unknown": the
 * services reconnect, and kernel-route.ts decides what the server says.
 */
class RouteTolerantKernelAPI extends KernelAPI.KernelAPIClient {
  constructor(serverSettings: ServerConnection.ISettings) {
    super({ serverSettings });
  }

  override async getModel(id: string): Promise<Kernel.IModel | undefined> {
    try {
      return await super.getModel(id);
    } catch {
      return { id, name: '', execution_state: 'unknown' } as Kernel.IModel;
    }
  }
}

/** How often an unanswered kernel_info_request is sent again while the kernel's channels open. */
const KERNEL_INFO_RETRY_MS = 1_000;

/**
 * Finds or starts the kernel the target names and opens its channels.
 *
 * @param options - server, target and connect timeout
 * @returns the open kernel, ready for requests
 * @throws JupyterKernelError with one code per failure: `jupyter_invalid_options`, `jupyter_unauthorized`,
 *   `jupyter_unreachable`, `jupyter_bad_response`, `jupyter_kernel_not_found`, `jupyter_no_session`,
 *   `jupyter_sessions_unsupported`, `jupyter_unknown_kernelspec`, `jupyter_kernel_died`
 */
export async function openJupyterKernel(options: OpenJupyterKernelOptions): Promise<JupyterKernel> {
  const server = resolveServer(options.server);
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (!Number.isFinite(connectTimeoutMs) || connectTimeoutMs <= 0) {
    throw new JupyterKernelError('jupyter_invalid_options', { reason: 'connectTimeoutMs must be a positive number' });
  }
  const { model, owned } = await findKernel(server, options.target, options.start);
  // Comms stay on the kernel's main shell: by default the services give each comm target a subshell of its own
  // (ipykernel 7), whose thread would run the worker's operations beside the kernel's cells instead of in line with
  // them, out of reach of the server's interrupt (SIGINT reaches the main thread).
  const connection = new KernelConnection({
    model,
    serverSettings: server.settings,
    kernelAPIClient: new RouteTolerantKernelAPI(server.settings),
    // Marked as an ipython-mcp's (kernel-types.ts): other ipython-mcp on the kernel tell our requests from a person's.
    clientId: `${AGENT_SESSION_PREFIX}${randomUUID()}`,
    handleComms: true,
    commsOverSubshells: CommsOverSubshells.Disabled,
  });
  const kernel = new JupyterKernel(server, connection, owned);
  let timer: NodeJS.Timeout | undefined;
  let rejectGone: (error: JupyterKernelError) => void = () => undefined;
  const gone = new Promise<never>((_resolve, reject) => (rejectGone = reject));
  let looking = false;
  // A start abandoned while its channels open (the worker ended, ipython-mcp closes) is given up at once: an owned
  // kernel is shut down now (below), not at the end of the connect bound.
  const signal = options.start?.signal;
  const onAbort = (): void => rejectGone(new JupyterKernelError('jupyter_closed', { url: server.displayUrl, kernelId: model.id }));
  if (signal?.aborted === true) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  // A kernel_info_request sent while the server restarts the kernel (its restarter after a death, or a restart
  // another client asked for) reaches no kernel and is never answered; the server's REST state does not say a
  // restart is under way. So it is asked again each second until a kernel answers: the first reply is from a kernel
  // that listens, and everything sent after it arrives. Each second the server is also asked whether the kernel still
  // exists: one that went with its server (restarted while a warm standby opened its kernel there) or that someone
  // shut down is given up at once, not at the end of the connect bound (30 s by default).
  const asking = setInterval(() => {
    void connection.requestKernelInfo().catch(() => undefined);
    if (looking) return;
    looking = true;
    // Gone on the server's own word only (kernel-route.ts): a hub whose proxy restarts answers a "not found" page of
    // its own for a while, which says nothing about the kernel; a server that does not answer: the bound decides.
    askAboutKernel(server, model.id)
      .then((word) => {
        if (word.kind === 'gone') rejectGone(new JupyterKernelError('jupyter_kernel_not_found', { url: server.displayUrl, kernelId: model.id, reason: word.reason }));
      })
      .catch(() => undefined)
      .finally(() => (looking = false));
  }, KERNEL_INFO_RETRY_MS);
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new JupyterKernelError('jupyter_kernel_died', { url: server.displayUrl, kernelId: model.id, reason: `no kernel_info_reply within ${connectTimeoutMs} ms` })),
        connectTimeoutMs,
      );
    });
    gone.catch(() => undefined);
    await Promise.race([connection.info, timeout, gone]);
    return kernel;
  } catch (error) {
    await kernel.close().catch(() => undefined);
    throw error instanceof JupyterKernelError ? error : toJupyterError(error, server, { kernelId: model.id });
  } finally {
    clearTimeout(timer);
    clearInterval(asking);
    signal?.removeEventListener('abort', onAbort);
  }
}

