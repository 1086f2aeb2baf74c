/**
 * Finding, starting and shutting down a kernel over the server's REST API: no channel is opened here (the live
 * connection is jupyter-kernel.ts).
 */
import { randomUUID } from 'node:crypto';
import { KernelAPI, KernelSpecAPI, ServerConnection, SessionAPI } from '@jupyterlab/services';
import type { Kernel } from '@jupyterlab/services';
import { JupyterKernelError } from './errors.js';
import { resolveServer, toJupyterError } from './server-settings.js';
import type { JupyterServerOptions, ResolvedServer } from './server-settings.js';

/**
 * Which kernel to use.
 *
 * - `kernelId`: a running kernel; it is left running on close.
 * - `notebookPath`: the kernel of the open session for that notebook (what a JupyterLab user has), or of a session
 *   started for it (a kernel of its kernelspec) when it has none; left running either way.
 * - `kernelName`: a new kernel of that kernelspec (the empty name: the server's default kernelspec), started here
 *   and shut down on close.
 */
export type JupyterKernelTarget =
  | { readonly kernelId: string }
  | { readonly notebookPath: string }
  | { readonly kernelName: string };

/** How a kernel is started for a `kernelName` target. */
export interface KernelStartOptions {
  /**
   * Kernel start parameters a gateway reads from the request's `env` (Enterprise Gateway's `KERNEL_USERNAME`, ...);
   * a plain Jupyter server ignores them.
   */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /**
   * Called with the id the kernel will have, before the start request is sent: a start that fails or times out
   * may still leave a kernel of that id on the server, which the caller then shuts down.
   */
  readonly onStarting?: ((kernelId: string) => void) | undefined;
  /**
   * Called once the start request of `kernelId` settled: `answered` when the server answered with the kernel (it
   * is registered there now), false when the request failed (the server may still be making it).
   */
  readonly onStartSettled?: ((kernelId: string, answered: boolean) => void) | undefined;
  /** The start is abandoned (ipython-mcp closes, the worker ended): a start request not sent yet is not sent. */
  readonly signal?: AbortSignal | undefined;
}

/** How long {@link shutdownKernelById} keeps asking a restarting kernel to shut down. */
const SHUTDOWN_RETRY_MS = 10_000;
/** How often {@link shutdownKernelById} asks again. */
const SHUTDOWN_ASK_AGAIN_MS = 250;

export async function call<T>(server: ResolvedServer, request: () => Promise<T>, details: { kernelId?: string; kernelName?: string }): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw toJupyterError(error, server, details);
  }
}

/** The kernel the target names (started now for a `kernelName`), and whether it was started here. */
export async function findKernel(server: ResolvedServer, target: JupyterKernelTarget, start: KernelStartOptions = {}): Promise<{ model: Kernel.IModel; owned: boolean }> {
  const url = server.displayUrl;
  // Every server lets a valid token read the kernelspecs, so this call tells a wrong token (401/403 here) from a
  // server that forbids one listing (a Kernel Gateway answers 403 to /api/sessions unless listing is enabled).
  const specs = await call(server, () => KernelSpecAPI.getSpecs(server.settings), {});
  if ('kernelId' in target) {
    const model = await call(server, () => KernelAPI.getKernelModel(target.kernelId, server.settings), { kernelId: target.kernelId });
    if (model === undefined) throw new JupyterKernelError('jupyter_kernel_not_found', { url, kernelId: target.kernelId });
    return { model, owned: false };
  }
  if ('notebookPath' in target) {
    const wanted = target.notebookPath.replace(/^\/+/, '');
    let sessions;
    try {
      sessions = await SessionAPI.listRunning(server.settings);
    } catch (error) {
      const typed = toJupyterError(error, server, { notebookPath: target.notebookPath });
      if (typed.status === 404 || typed.code === 'jupyter_unauthorized') {
        throw new JupyterKernelError('jupyter_sessions_unsupported', { url, notebookPath: target.notebookPath, status: typed.status });
      }
      throw typed;
    }
    const session = sessions.find((candidate) => candidate.path.replace(/^\/+/, '') === wanted && candidate.kernel);
    if (session?.kernel != null) return { model: session.kernel, owned: false };
    // A notebook nobody has open: start its session (a kernel of its kernelspec), as opening it in JupyterLab would,
    // so a person who opens it later finds the agent's kernel. The session is left running, like one JupyterLab
    // started: the person shuts it down from JupyterLab (docs/jupyter.md).
    const kernelName = await notebookKernelspec(server, wanted, specs.default);
    if (kernelName === undefined) throw new JupyterKernelError('jupyter_no_session', { url, notebookPath: target.notebookPath });
    const started = await call(server, () => SessionAPI.startSession({ path: wanted, type: 'notebook', name: wanted.split('/').pop() ?? wanted, kernel: { name: kernelName } }, server.settings), { kernelName });
    if (started.kernel == null) throw new JupyterKernelError('jupyter_no_session', { url, notebookPath: target.notebookPath });
    return { model: started.kernel, owned: false };
  }
  const kernelName = target.kernelName === '' ? specs.default : target.kernelName;
  if (specs.kernelspecs[kernelName] === undefined) {
    throw new JupyterKernelError('jupyter_unknown_kernelspec', {
      url,
      kernelName,
      reason: `the server has ${Object.keys(specs.kernelspecs).sort().join(', ') || 'none'}`,
    });
  }
  // The id is ours, chosen before the request: a start that fails or times out after the server made the kernel
  // still names a kernel we can shut down. jupyter_server takes it as `kernel_id`, Enterprise Gateway as KERNEL_ID.
  if (start.signal?.aborted === true) throw new JupyterKernelError('jupyter_closed', { url, kernelName });
  const kernelId = randomUUID();
  start.onStarting?.(kernelId);
  const body = { name: kernelName, kernel_id: kernelId, env: { ...start.env, KERNEL_ID: kernelId } };
  let model;
  try {
    model = await call(server, () => KernelAPI.startNew(body as never, server.settings), { kernelName });
  } catch (error) {
    start.onStartSettled?.(kernelId, false);
    throw error;
  }
  start.onStartSettled?.(kernelId, true);
  // A server that chose its own id anyway: that one is the kernel to shut down.
  if (model.id !== kernelId) {
    start.onStarting?.(model.id);
    start.onStartSettled?.(model.id, true);
  }
  return { model, owned: true };
}

/** The kernelspec the notebook at `path` names (its metadata), or the server's default; undefined when there is no such notebook. */
async function notebookKernelspec(server: ResolvedServer, path: string, fallback: string): Promise<string | undefined> {
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  const response = await ServerConnection.makeRequest(`${server.settings.baseUrl.replace(/\/+$/, '')}/api/contents/${encoded}?content=1&type=notebook`, {}, server.settings).catch(() => undefined);
  if (response === undefined || !response.ok) return undefined;
  const model = (await response.json().catch(() => undefined)) as { content?: { metadata?: { kernelspec?: { name?: unknown } } } } | undefined;
  const named = model?.content?.metadata?.kernelspec?.name;
  return typeof named === 'string' && named !== '' ? named : fallback;
}

/**
 * Shuts a kernel down by id. A kernel the server is restarting answers HTTP 500 until the restart is over, and a
 * hub's proxy or a server coming back answers 502/503, a "not found" page of its own (a hub whose routes are not
 * restored yet) or nothing at all for a moment: each is asked again for a few seconds (a shutdown given up leaves the
 * kernel running). Gone is the server's own word only, a JSON 404 for the kernel, and even that is asked again until
 * `startPendingUntil` (a Date.now() time): a server still making a kernel answers 404 for it until the start is over.
 */
export async function shutdownKernelById(server: ResolvedServer, kernelId: string, startPendingUntil = 0): Promise<void> {
  const deadline = Date.now() + SHUTDOWN_RETRY_MS;
  const url = `${server.settings.baseUrl.replace(/\/+$/, '')}/api/kernels/${encodeURIComponent(kernelId)}`;
  for (;;) {
    let typed: JupyterKernelError;
    try {
      const response = await ServerConnection.makeRequest(url, { method: 'DELETE' }, server.settings);
      const json = (response.headers.get('content-type') ?? '').includes('json');
      if (response.status === 204 || (response.status === 404 && json && Date.now() >= startPendingUntil)) return;
      // Read to the end (the connection is reused); its words are not needed: a proxy's page is no JSON.
      await response.text().catch(() => undefined);
      typed = toJupyterError(new ServerConnection.ResponseError(response), server, { kernelId });
    } catch (error) {
      typed = toJupyterError(error, server, { kernelId });
    }
    const passing = typed.code === 'jupyter_unreachable' || typed.status === 404 || (typed.status !== undefined && typed.status >= 500);
    if (!passing || Date.now() > deadline) throw typed;
    await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_ASK_AGAIN_MS));
  }
}

/**
 * What the server says a kernel is doing now (`idle`, `busy`, `starting`, ...), over REST only: no channel is
 * opened, so it answers even while the kernel is stuck in a cell.
 *
 * @param server - where the kernel is
 * @param kernelId - which kernel
 * @returns its execution state, or `undefined` if the server has no kernel of that id
 * @throws JupyterKernelError for a server that refuses or does not answer
 */
export async function kernelExecutionState(server: JupyterServerOptions, kernelId: string): Promise<string | undefined> {
  return executionStateOn(resolveServer(server), kernelId);
}

export async function executionStateOn(server: ResolvedServer, kernelId: string): Promise<string | undefined> {
  const model = await call(server, () => KernelAPI.getKernelModel(kernelId, server.settings), { kernelId });
  if (model === undefined) return undefined;
  return typeof model.execution_state === 'string' ? model.execution_state : 'unknown';
}

/**
 * Shuts down a kernel by id over REST (see {@link shutdownKernelById}), for a caller that holds no connection.
 *
 * @throws JupyterKernelError for a server that refuses or does not answer
 */
export async function shutdownKernel(server: JupyterServerOptions, kernelId: string): Promise<void> {
  await shutdownKernelById(resolveServer(server), kernelId);
}
