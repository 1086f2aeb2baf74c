/**
 * One kernel on a Jupyter server or Kernel Gateway: find or start it, open its channels, execute, interrupt, close.
 */
import { randomUUID } from 'node:crypto';
import { CommsOverSubshells, KernelAPI, KernelConnection, KernelSpecAPI, ServerConnection, SessionAPI } from '@jupyterlab/services';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { JupyterKernelError } from './errors.js';
import { JupyterComm } from './jupyter-comm.js';
import type { CommData } from './jupyter-comm.js';
import { toOutput } from './outputs.js';
import type { JupyterExecuteError, JupyterExecuteResult, JupyterOutput } from './outputs.js';
import { resolveServer, toJupyterError } from './server-settings.js';
import type { JupyterServerOptions, ResolvedServer } from './server-settings.js';

/** Default bound on opening the kernel's channels and getting its `kernel_info_reply`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/**
 * Which kernel to use.
 *
 * - `kernelId`: a running kernel; it is left running on close.
 * - `notebookPath`: the kernel of the open session for that notebook (what a JupyterLab user has), or of a session
 *   started for it (a kernel of its kernelspec) when it has none; left running either way.
 * - `kernelName`: a new kernel of that kernelspec, started here and shut down on close.
 */
export type JupyterKernelTarget =
  | { readonly kernelId: string }
  | { readonly notebookPath: string }
  | { readonly kernelName: string };

/** Options of {@link openJupyterKernel}. */
export interface OpenJupyterKernelOptions {
  readonly server: JupyterServerOptions;
  readonly target: JupyterKernelTarget;
  /** Bound on opening the channels and the kernel's first reply; default {@link DEFAULT_CONNECT_TIMEOUT_MS}. */
  readonly connectTimeoutMs?: number | undefined;
}

/** Options of {@link JupyterKernel.execute}. */
export interface JupyterExecuteOptions {
  /** Record the cell in `In`/`Out` and history and advance the counter, as a notebook cell does; default `true`. */
  readonly storeHistory?: boolean | undefined;
  /** Run without publishing outputs or advancing the counter; default `false`. */
  readonly silent?: boolean | undefined;
  /** Abort requests queued behind this one if it fails; default `false`, so a human's queued cells still run. */
  readonly stopOnError?: boolean | undefined;
  /** Receives each output as it arrives, before the result resolves. */
  readonly onOutput?: ((output: JupyterOutput) => void) | undefined;
  /** The execute_request's message metadata (kernel-side code reads it, e.g. in a `pre_run_cell` hook). */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
  /** Keep no outputs in the result (a cell whose output only others watch, or that may print without bound). */
  readonly discardOutputs?: boolean | undefined;
  /** Called with the execute_request's message id as it is sent (IOPub `status` messages name it as their parent). */
  readonly onSent?: ((messageId: string) => void) | undefined;
}

/** One IOPub `status` message: what the kernel is doing, and for which request of which client. */
export interface KernelActivity {
  /** `busy`, `idle`, `starting`, `restarting`, ... */
  readonly state: string;
  /** The message id of the request the kernel is busy or idle for (empty when it has none). */
  readonly parentId: string;
  /** The client session that sent that request: {@link JupyterKernel.clientId} for this connection's own. */
  readonly parentSession: string;
  /** The request's message type (`execute_request`, `comm_msg`, ...). */
  readonly parentType: string;
}

/** How long {@link JupyterKernel.close} keeps asking a restarting kernel to shut down. */
const SHUTDOWN_RETRY_MS = 10_000;

/** Refused REST probes in a row, {@link SERVER_GONE_PROBE_INTERVAL_MS} apart, after which the server is gone. */
const SERVER_GONE_PROBES = 3;
const SERVER_GONE_PROBE_INTERVAL_MS = 1_000;

/** How long a request may still get its reply after the kernel announced its shutdown. */
const SHUTDOWN_GRACE_MS = 1_000;

const DEATH_STATUSES: ReadonlySet<Kernel.Status> = new Set<Kernel.Status>(['dead', 'restarting', 'autorestarting']);

/**
 * An open connection to one kernel. Requests are serialized by the kernel itself, alongside any other client's
 * (a human's notebook), so several may be in flight.
 */
export class JupyterKernel {
  /** The kernel's id on the server. */
  readonly kernelId: string;
  /** The kernelspec name the kernel runs. */
  readonly kernelName: string;
  /** Whether this connection started the kernel (and so shuts it down on close). */
  readonly owned: boolean;
  readonly #server: ResolvedServer;
  readonly #connection: KernelConnection;
  readonly #inFlight = new Set<(error: JupyterKernelError) => void>();
  readonly #comms = new Set<JupyterComm>();
  readonly #lostListeners = new Set<(error: JupyterKernelError) => void>();
  readonly #activityListeners = new Set<(activity: KernelActivity) => void>();
  readonly #reconnectListeners = new Set<() => void>();
  #lost: JupyterKernelError | undefined;
  #everConnected = false;
  #closed = false;
  #closing: Promise<void> | undefined;

  /** @internal Use {@link openJupyterKernel}. */
  constructor(server: ResolvedServer, connection: KernelConnection, owned: boolean) {
    this.#server = server;
    this.#connection = connection;
    this.kernelId = connection.id;
    this.kernelName = connection.name;
    this.owned = owned;
    // After a server-side restart the services reconnect from a detached promise chain, so a reconnect that fails
    // (or is cut short by dispose) would be an unhandled rejection, which ends a Node process. The failure is still
    // seen: the connection status turns `disconnected`, which fails the requests in flight below.
    const reconnect = connection.reconnect.bind(connection);
    // A disposed connection's reconnect throws at once rather than rejecting: caught here too.
    connection.reconnect = () => {
      try {
        return reconnect().catch(() => undefined);
      } catch {
        return Promise.resolve();
      }
    };
    connection.statusChanged.connect((_sender, status) => {
      if (DEATH_STATUSES.has(status)) this.#fail(`the kernel is ${status}`);
    });
    // A shutdown through the server (someone's DELETE, JupyterLab's "Shut Down Kernel") leaves the WebSocket open and
    // the reply to a running request never comes; the kernel's last word is a shutdown_reply on IOPub. A short
    // grace lets a reply already on its way land first.
    connection.iopubMessage.connect((_sender, message) => {
      if (message.header.msg_type === 'status' && this.#activityListeners.size > 0) {
        const parent = (message.parent_header ?? {}) as Partial<KernelMessage.IHeader>;
        const activity: KernelActivity = {
          state: String((message.content as { execution_state?: unknown }).execution_state ?? ''),
          parentId: typeof parent.msg_id === 'string' ? parent.msg_id : '',
          parentSession: typeof parent.session === 'string' ? parent.session : '',
          parentType: typeof parent.msg_type === 'string' ? parent.msg_type : '',
        };
        for (const listener of [...this.#activityListeners]) listener(activity);
      }
      if (message.header.msg_type !== 'shutdown_reply') return;
      if ((message.content as { restart?: unknown }).restart === true) return;
      setTimeout(() => {
        if (this.#closed) return;
        this.#fail('the kernel was shut down', true);
        this.#connection.dispose();
      }, SHUTDOWN_GRACE_MS).unref();
    });
    connection.connectionStatusChanged.connect((_sender, status) => {
      if (status === 'connected') {
        // A message sent on the channel that dropped may never have reached the kernel: listeners find out which.
        if (this.#everConnected && !this.#closed) for (const listener of [...this.#reconnectListeners]) listener();
        this.#everConnected = true;
      }
      if (status === 'disconnected') this.#fail('its channels closed and could not be reopened');
      // The services keep retrying a WebSocket to a kernel that was shut down for a minute or more, and a request
      // sent meanwhile waits for all of it. A lost channel is therefore checked at once: a kernel the server no
      // longer has is gone for good. Anything else (a brief drop, the server restarting) is left to the retries;
      // the server replays what the kernel sent meanwhile to the same session id.
      if (status === 'connecting' && this.#everConnected && !this.#closed) void this.#checkStillThere();
    });
  }

  /** This connection's client session id: the `session` of every message it sends. */
  get clientId(): string {
    return this.#connection.clientId;
  }

  /**
   * Adds a listener for the kernel's IOPub `status` messages, for every client's requests (a human's too).
   *
   * @returns a function that removes the listener
   */
  onActivity(listener: (activity: KernelActivity) => void): () => void {
    this.#activityListeners.add(listener);
    return () => this.#activityListeners.delete(listener);
  }

  /**
   * Adds a listener called each time the channels open again after they dropped (the services reconnected). A
   * message sent just before the drop may have been lost on the way.
   *
   * @returns a function that removes the listener
   */
  onReconnected(listener: () => void): () => void {
    this.#reconnectListeners.add(listener);
    return () => this.#reconnectListeners.delete(listener);
  }

  /**
   * Adds a listener called once, when the kernel is lost for good (died, shut down, channel closed beyond repair).
   * A restart is not a loss: it only fails the requests in flight and closes the comms.
   */
  onLost(listener: (error: JupyterKernelError) => void): void {
    if (this.#lost !== undefined) listener(this.#lost);
    else this.#lostListeners.add(listener);
  }

  /** The kernel's last reported status (`idle`, `busy`, `dead`, ...). */
  get status(): Kernel.Status {
    return this.#connection.status;
  }

  /** Set once the kernel died or restarted under this connection; every later request fails with it. */
  get lostReason(): JupyterKernelError | undefined {
    return this.#lost;
  }

  async #checkStillThere(): Promise<void> {
    // A server that refuses the connection (its process is gone) answers at once, again and again; the services
    // would keep retrying the WebSocket for minutes while a request waits. A few refusals in a row end the wait.
    // A server that is only slow (a timeout) is left to the reconnect attempts.
    for (let attempt = 1; ; attempt += 1) {
      let model: Kernel.IModel | undefined | null = null;
      let refused = false;
      try {
        model = await KernelAPI.getKernelModel(this.kernelId, this.#server.settings);
      } catch (error) {
        const typed = toJupyterError(error, this.#server, { kernelId: this.kernelId });
        refused = typed.code === 'jupyter_unreachable' && !/no answer within/.test(typed.message);
      }
      if (this.#closed || this.#connection.connectionStatus === 'connected') return;
      if (model === undefined) {
        this.#fail('the kernel was shut down', true);
        this.#connection.dispose();
        return;
      }
      if (!refused) return;
      if (attempt >= SERVER_GONE_PROBES) {
        this.#fail('the Jupyter server went away (it refuses connections)', true);
        this.#connection.dispose();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, SERVER_GONE_PROBE_INTERVAL_MS));
    }
  }

  #fail(reason: string, permanent = false): void {
    // A restart is fatal only to the requests in flight; death, shutdown and a closed channel are fatal for good.
    const error = new JupyterKernelError('jupyter_kernel_died', { url: this.#server.displayUrl, kernelId: this.kernelId, reason });
    if ((permanent || this.#connection.status === 'dead' || this.#connection.connectionStatus === 'disconnected') && this.#lost === undefined) {
      this.#lost = error;
      for (const listener of [...this.#lostListeners]) listener(error);
      this.#lostListeners.clear();
    }
    // A restart also drops every comm: the kernel-side objects that answered them are gone.
    for (const reject of [...this.#inFlight]) reject(error);
    for (const comm of [...this.#comms]) comm.markClosed();
  }

  #checkOpen(): void {
    if (this.#closed) throw new JupyterKernelError('jupyter_closed', { kernelId: this.kernelId });
    if (this.#lost !== undefined) throw this.#lost;
  }

  /**
   * Runs code as the kernel's own cell and collects what it published.
   *
   * @param code - the source to run
   * @param options - history, silence, stop-on-error, streaming
   * @returns status, execution count, outputs and the error, if the code raised
   * @throws JupyterKernelError `jupyter_kernel_died` if the kernel dies, restarts or its channel closes before the
   *   reply; `jupyter_closed` after {@link JupyterKernel.close}
   */
  async execute(code: string, options: JupyterExecuteOptions = {}): Promise<JupyterExecuteResult> {
    this.#checkOpen();
    const outputs: JupyterOutput[] = [];
    const future = this.#connection.requestExecute(
      {
        code,
        silent: options.silent ?? false,
        store_history: options.storeHistory ?? true,
        allow_stdin: false,
        stop_on_error: options.stopOnError ?? false,
      },
      true,
      options.metadata as never,
    );
    options.onSent?.(future.msg.header.msg_id);
    future.onIOPub = (message: KernelMessage.IIOPubMessage) => {
      const output = toOutput(message);
      if (output === undefined) return;
      if (options.discardOutputs !== true) outputs.push(output);
      options.onOutput?.(output);
    };
    let reject: ((error: JupyterKernelError) => void) | undefined;
    const lost = new Promise<never>((_resolve, rejectLost) => {
      reject = rejectLost;
      this.#inFlight.add(rejectLost);
    });
    try {
      const reply = await Promise.race([future.done, lost]).catch((error: unknown) => {
        if (error instanceof JupyterKernelError) throw error;
        // The services cancel a future whose kernel restarted or was disposed: the reply will never come.
        throw this.#closed
          ? new JupyterKernelError('jupyter_closed', { kernelId: this.kernelId })
          : new JupyterKernelError('jupyter_kernel_died', { url: this.#server.displayUrl, kernelId: this.kernelId, cause: error });
      });
      const content = reply.content as unknown as Record<string, unknown>;
      const status = content.status === 'error' ? 'error' : content.status === 'aborted' ? 'aborted' : 'ok';
      const error: JupyterExecuteError | undefined =
        status === 'error'
          ? {
              ename: String(content.ename ?? ''),
              evalue: String(content.evalue ?? ''),
              traceback: Array.isArray(content.traceback) ? content.traceback.map(String) : [],
            }
          : undefined;
      return {
        status,
        executionCount: typeof content.execution_count === 'number' ? content.execution_count : null,
        outputs,
        error,
      };
    } finally {
      if (reject !== undefined) this.#inFlight.delete(reject);
      lost.catch(() => undefined);
    }
  }

  /**
   * Opens a comm to a target that code in the kernel registered (with its comm manager), and waits until the
   * kernel has handled the `comm_open`.
   *
   * @param targetName - the registered target
   * @param data - the `comm_open` payload
   * @param onMessage - a first handler for messages from the kernel side, in place before the `comm_open` is sent
   *   (the kernel side may answer while it handles the open)
   * @returns the open comm; it closes with this connection
   */
  async openComm(targetName: string, data: CommData = {}, onMessage?: (data: CommData) => void): Promise<JupyterComm> {
    this.#checkOpen();
    const comm = new JupyterComm(this.#connection.createComm(targetName));
    if (onMessage !== undefined) comm.onMessage(onMessage);
    this.#comms.add(comm);
    comm.onClose(() => this.#comms.delete(comm));
    try {
      await comm.open(data);
    } catch (error) {
      comm.markClosed();
      throw new JupyterKernelError('jupyter_kernel_died', { url: this.#server.displayUrl, kernelId: this.kernelId, reason: 'the comm could not be opened', cause: error });
    }
    return comm;
  }

  /**
   * What the server says the kernel is doing now (`idle`, `busy`, ...), over REST: `undefined` if the server no
   * longer has the kernel.
   */
  async executionState(): Promise<string | undefined> {
    this.#checkOpen();
    return executionStateOn(this.#server, this.kernelId);
  }

  /**
   * Interrupts the kernel through the server's interrupt API (what JupyterLab's stop button does); the
   * namespace is kept.
   *
   * @throws JupyterKernelError `jupyter_kernel_not_found` if the kernel is gone, or a server error code
   */
  async interrupt(): Promise<void> {
    this.#checkOpen();
    try {
      await KernelAPI.interruptKernel(this.kernelId, this.#server.settings);
    } catch (error) {
      const typed = toJupyterError(error, this.#server, { kernelId: this.kernelId });
      if (typed.status === 404) throw new JupyterKernelError('jupyter_kernel_not_found', { url: this.#server.displayUrl, kernelId: this.kernelId });
      throw typed;
    }
  }

  /**
   * Closes the channels and, if this connection started the kernel, shuts it down. Requests in flight fail with
   * `jupyter_closed`. Calling it again returns the same promise (settled once the kernel is shut down).
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    const closed = new JupyterKernelError('jupyter_closed', { kernelId: this.kernelId });
    for (const reject of [...this.#inFlight]) reject(closed);
    for (const comm of [...this.#comms]) comm.close();
    this.#connection.dispose();
    if (!this.owned) return;
    // A kernel the server is restarting answers a shutdown with HTTP 500 until the restart is over: try again for a
    // few seconds. Already gone (404) is what we wanted.
    const deadline = Date.now() + SHUTDOWN_RETRY_MS;
    for (;;) {
      try {
        await KernelAPI.shutdownKernel(this.kernelId, this.#server.settings);
        return;
      } catch (error) {
        const typed = toJupyterError(error, this.#server, { kernelId: this.kernelId });
        if (typed.status === 404) return;
        if (typed.status !== 500 || Date.now() > deadline) throw typed;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
}

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
  const { model, owned } = await findKernel(server, options.target);
  // Comms stay on the kernel's main shell: by default the services give each comm target a subshell of its own
  // (ipykernel 7), whose thread would run the worker's operations beside the kernel's cells instead of in line with
  // them, out of reach of the server's interrupt (SIGINT reaches the main thread).
  const connection = new KernelConnection({
    model,
    serverSettings: server.settings,
    clientId: randomUUID(),
    handleComms: true,
    commsOverSubshells: CommsOverSubshells.Disabled,
  });
  const kernel = new JupyterKernel(server, connection, owned);
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new JupyterKernelError('jupyter_kernel_died', { url: server.displayUrl, kernelId: model.id, reason: `no kernel_info_reply within ${connectTimeoutMs} ms` })),
        connectTimeoutMs,
      );
    });
    await Promise.race([connection.info, timeout]);
    return kernel;
  } catch (error) {
    await kernel.close().catch(() => undefined);
    throw error instanceof JupyterKernelError ? error : toJupyterError(error, server, { kernelId: model.id });
  } finally {
    clearTimeout(timer);
  }
}

async function findKernel(server: ResolvedServer, target: JupyterKernelTarget): Promise<{ model: Kernel.IModel; owned: boolean }> {
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
  if (specs.kernelspecs[target.kernelName] === undefined) {
    throw new JupyterKernelError('jupyter_unknown_kernelspec', {
      url,
      kernelName: target.kernelName,
      reason: `the server has ${Object.keys(specs.kernelspecs).sort().join(', ') || 'none'}`,
    });
  }
  const model = await call(server, () => KernelAPI.startNew({ name: target.kernelName }, server.settings), { kernelName: target.kernelName });
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

async function call<T>(server: ResolvedServer, request: () => Promise<T>, details: { kernelId?: string; kernelName?: string }): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw toJupyterError(error, server, details);
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

async function executionStateOn(server: ResolvedServer, kernelId: string): Promise<string | undefined> {
  const model = await call(server, () => KernelAPI.getKernelModel(kernelId, server.settings), { kernelId });
  if (model === undefined) return undefined;
  return typeof model.execution_state === 'string' ? model.execution_state : 'unknown';
}
