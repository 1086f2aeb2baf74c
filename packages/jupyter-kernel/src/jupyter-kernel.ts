/**
 * One kernel on a Jupyter server or Kernel Gateway: find or start it, open its channels, execute, interrupt, close.
 */
import { KernelAPI, KernelMessage as Messages } from '@jupyterlab/services';
import { KernelRoute, askAboutKernel } from './kernel-route.js';
import type { KernelConnection } from '@jupyterlab/services';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { JupyterKernelError } from './errors.js';
import { JupyterComm } from './jupyter-comm.js';
import type { CommData } from './jupyter-comm.js';
import type { JupyterExecuteOptions, KernelActivity } from './kernel-types.js';
import { toOutput } from './outputs.js';
import type { JupyterExecuteError, JupyterExecuteResult, JupyterOutput } from './outputs.js';

export type { JupyterExecuteOptions, KernelActivity } from './kernel-types.js';
import { executionStateOn, shutdownKernelById } from './kernel-rest.js';
import { toJupyterError } from './server-settings.js';
import type { ResolvedServer } from './server-settings.js';

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
  readonly #awayListeners = new Set<(away: { since: Date; reason: string }) => void>();
  /** The route to the kernel while its channels are down (kernel-route.ts). */
  readonly #route: KernelRoute;
  #lost: JupyterKernelError | undefined;
  #lostToOtherClient: 'restart' | 'shutdown' | undefined;
  /** The kernel process's own session id (every message it sends carries it); a new one means a new process. */
  #kernelSession: string | undefined;
  /** When the kernel process this connection first spoke to was last heard (a reply, its busy or idle), on channels up since. */
  #heardAt: number | undefined;
  #everConnected = false;
  #closed = false;
  #closing: Promise<void> | undefined;

  /** @internal Use openJupyterKernel (open-kernel.ts). */
  constructor(server: ResolvedServer, connection: KernelConnection, owned: boolean) {
    this.#server = server;
    this.#connection = connection;
    this.kernelId = connection.id;
    this.kernelName = connection.name;
    this.owned = owned;
    this.#route = new KernelRoute({
      ask: () => askAboutKernel(server, this.kernelId),
      connected: () => connection.connectionStatus === 'connected',
      reopen: () => void connection.reconnect(),
      gone: (reason) => {
        this.#fail(reason, true);
        this.#connection.dispose();
      },
      awayTooLong: (away) => {
        for (const listener of [...this.#awayListeners]) listener(away);
      },
      closed: () => this.#closed || this.#lost !== undefined,
    });
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
      // The services call a kernel dead only on the server's word (the route-tolerant API client of open-kernel.ts).
      if (DEATH_STATUSES.has(status)) this.#fail(`the kernel is ${status}`, status === 'dead');
    });
    // A restart that another client asked for (JupyterLab's toolbar, a REST restart) is not announced to this
    // connection: the server reconnects its channels to the new process, which has none of what we booted into the
    // old one. Every message from a kernel carries its process's session id, so the first word of the new process
    // (its `starting` status, any reply) gives the restart away.
    connection.anyMessage.connect((_sender, { msg, direction }) => {
      if (direction === 'recv') this.#noteKernelSession(msg);
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
          date: typeof message.header.date === 'string' ? message.header.date : '',
          parentDate: typeof parent.date === 'string' ? parent.date : '',
        };
        for (const listener of [...this.#activityListeners]) listener(activity);
      }
      if (message.header.msg_type !== 'shutdown_reply') return;
      if ((message.content as { restart?: unknown }).restart === true) {
        // Someone restarts the kernel (JupyterLab's toolbar, a REST restart): the process that ends has everything
        // booted into it; the server's channels then reach a new one.
        if (!this.#closed) this.#fail('the kernel was restarted (from Jupyter, by another client), so its namespace is new', true, 'restart');
        return;
      }
      setTimeout(() => {
        if (this.#closed) return;
        this.#fail('the kernel was shut down', true, 'shutdown');
        this.#connection.dispose();
      }, SHUTDOWN_GRACE_MS).unref();
    });
    connection.connectionStatusChanged.connect((_sender, status) => {
      // What was heard before channels dropped or reopened says nothing of the process behind the new ones.
      this.#heardAt = undefined;
      if (status === 'connected') {
        this.#route.reopened();
        // A message sent on the channel that dropped may never have reached the kernel: listeners find out which.
        if (this.#everConnected && !this.#closed) for (const listener of [...this.#reconnectListeners]) listener();
        this.#everConnected = true;
      }
      // Channels that dropped (or that the services gave up reopening) say nothing about the kernel: the route is
      // watched, the kernel declared gone only on the server's word, and the channels reopened as soon as it answers
      // (kernel-route.ts). The server replays what the kernel sent meanwhile to the same session id.
      if ((status === 'connecting' || status === 'disconnected') && this.#everConnected && !this.#closed) this.#route.dropped();
    });
  }

  /**
   * Set when another client ended this kernel process on purpose: a restart it asked for (JupyterLab's Restart
   * Kernel, a REST restart: the kernel announces it with a `shutdown_reply` whose `restart` is true) or a shut down
   * (the kernel's last `shutdown_reply`: the person's Shut Down, a REST delete, or the Jupyter server stopping its
   * kernels). Undefined for a death (the server's own restart of a kernel that died says `restarting` and nothing
   * else), a lost channel, a kernel gone without a word, or a kernel still here.
   */
  get lostToOtherClient(): 'restart' | 'shutdown' | undefined {
    return this.#lostToOtherClient;
  }

  #noteKernelSession(message: Messages.IMessage): void {
    // The server itself words a few messages (its `restarting`/`dead` status, rate-limit notices) under its own
    // session: only replies and the kernel's own busy/idle/starting count.
    const state = message.header.msg_type === 'status' ? String((message.content as { execution_state?: unknown }).execution_state) : '';
    const fromKernel = message.channel === 'shell' || message.channel === 'control' || state === 'busy' || state === 'idle' || state === 'starting';
    const session = message.header.session;
    if (!fromKernel || typeof session !== 'string' || session === '' || this.#closed) return;
    if (this.#kernelSession === undefined) {
      this.#kernelSession = session;
      this.#heardAt = performance.now();
      return;
    }
    if (session === this.#kernelSession) {
      this.#heardAt = performance.now();
      return;
    }
    this.#heardAt = undefined;
    if (this.#lost === undefined) {
      this.#fail('the kernel was restarted (from Jupyter, by another client, or by the server after it died), so its namespace is new', true);
    }
  }

  /**
   * Whether the kernel process this connection first spoke to was heard (a reply, its busy or idle) within the last
   * `ms`, on channels up since, with no sign of a restart or loss.
   */
  heardWithin(ms: number): boolean {
    const heardAt = this.#heardAt;
    return heardAt !== undefined && !this.#closed && this.#lost === undefined && performance.now() - heardAt <= ms && this.#connection.connectionStatus === 'connected';
  }

  /** The kernel process's session id, once it answered: a restarted kernel has a new one. */
  get kernelSession(): string | undefined {
    return this.#kernelSession;
  }

  /**
   * Asks the kernel on its control channel (answered even while a cell runs) whether it is still the process this
   * connection first spoke to. A restart found this way fails the connection for good ({@link onLost}).
   *
   * @param timeoutMs - how long to wait for the answer
   * @returns `true` for the same process, `false` when it restarted or the connection is lost, `undefined` when no
   *   answer came in time (a dead kernel the server has not noticed yet, or a kernel too busy to answer)
   */
  async sameKernel(timeoutMs: number): Promise<boolean | undefined> {
    if (this.#closed || this.#lost !== undefined) return false;
    const deadline = performance.now() + timeoutMs;
    // A request sent on channels that were cut a moment before (the drop not noticed yet) is lost with them: it is
    // asked again on the channels that replace them, rather than waited for to the bound.
    for (let asked = 0; ; asked += 1) {
      const answer = await this.#askSameKernel(Math.max(0, deadline - performance.now()));
      if (answer === 'reopened' && asked < 3 && performance.now() < deadline) continue;
      if (answer === 'late' || answer === 'reopened') return this.#lost === undefined ? undefined : false;
      // The reply went past #noteKernelSession on its way in: a new process has already failed this connection.
      return answer === 'answered' && this.#lost === undefined && !this.#closed;
    }
  }

  /** One control-channel kernel_info_request: answered, lost with the connection, late, or cut by a reconnect. */
  async #askSameKernel(timeoutMs: number): Promise<'answered' | 'lost' | 'late' | 'reopened'> {
    const shellForm = Messages.createMessage({
      msgType: 'kernel_info_request',
      channel: 'shell',
      session: this.#connection.clientId,
      username: this.#connection.username,
      content: {},
    });
    // The protocol lets every shell request go on the control channel too; the typings list only control's own.
    const request = { ...shellForm, channel: 'control' } as unknown as Messages.IControlMessage;
    let future: Kernel.IControlFuture | undefined;
    let timer: NodeJS.Timeout | undefined;
    let reject: ((error: JupyterKernelError) => void) | undefined;
    let stopListening: (() => void) | undefined;
    const lost = new Promise<'lost'>((resolve) => {
      reject = () => resolve('lost');
      this.#inFlight.add(reject);
    });
    const reopened = new Promise<'reopened'>((resolve) => {
      stopListening = this.onReconnected(() => resolve('reopened'));
    });
    try {
      future = this.#connection.sendControlMessage(request, true, true);
      // The reply is the answer: the future's `done` also waits for the request's IOPub `idle`, which a channel
      // reopened a moment ago may miss (its IOPub subscription is not in place yet), and would then hang to the bound.
      const replied = new Promise<'answered'>((resolve) => {
        (future as Kernel.IControlFuture).onReply = () => resolve('answered');
      });
      return await Promise.race([
        replied,
        future.done.then(() => 'answered' as const, () => 'lost' as const),
        lost,
        reopened,
        new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs))),
      ]);
    } catch {
      return 'late';
    } finally {
      clearTimeout(timer);
      stopListening?.();
      if (reject !== undefined) this.#inFlight.delete(reject);
      if (future !== undefined && !future.isDisposed) future.dispose();
    }
  }

  /**
   * Since when the kernel's channels are down and why (the route to the server is away), or undefined while they are
   * open. The kernel is not lost meanwhile: only the server says that.
   */
  get away(): { since: Date; reason: string } | undefined {
    return this.#route.away;
  }

  /**
   * A call wants the kernel: when its channels are down, asks the server at once and reopens them if it answers for
   * the kernel, waiting up to `waitMs` for them.
   *
   * @returns whether the channels are open
   */
  reachNow(waitMs: number): Promise<boolean> {
    if (this.#closed || this.#lost !== undefined) return Promise.resolve(false);
    return this.#route.now(waitMs);
  }

  /**
   * Adds a listener called when the channels have been down for a while (kernel-route.ts's grace): requests sent
   * before they dropped are answered without their result, the kernel kept.
   *
   * @returns a function that removes the listener
   */
  onAwayTooLong(listener: (away: { since: Date; reason: string }) => void): () => void {
    this.#awayListeners.add(listener);
    return () => this.#awayListeners.delete(listener);
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

  #fail(reason: string, permanent = false, byOtherClient?: 'restart' | 'shutdown'): void {
    // A restart is fatal only to the requests in flight; death, shutdown and a closed channel are fatal for good.
    const error = new JupyterKernelError('jupyter_kernel_died', { url: this.#server.displayUrl, kernelId: this.kernelId, reason });
    if ((permanent || this.#connection.status === 'dead') && this.#lost === undefined) {
      this.#lost = error;
      this.#route.stop();
      this.#lostToOtherClient = byOtherClient;
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
    const message = Messages.createMessage({
      msgType: 'execute_request',
      channel: 'shell',
      username: this.#connection.username,
      session: this.#connection.clientId,
      subshellId: this.#connection.subshellId,
      content: {
        code,
        silent: options.silent ?? false,
        store_history: options.storeHistory ?? true,
        user_expressions: {},
        allow_stdin: options.onInput !== undefined,
        stop_on_error: options.stopOnError ?? false,
      },
      metadata: (options.metadata ?? {}) as never,
    });
    // The services send any shell message and match its reply and outputs by message id, whatever its type.
    if (options.messageType !== undefined) (message.header as { msg_type: string }).msg_type = options.messageType;
    const future = this.#connection.sendShellMessage(message, true, true);
    options.onSent?.(future.msg.header.msg_id);
    future.onIOPub = (message: KernelMessage.IIOPubMessage) => {
      const output = toOutput(message);
      if (output === undefined) return;
      if (options.discardOutputs !== true) outputs.push(output);
      options.onOutput?.(output);
    };
    const onInput = options.onInput;
    if (onInput !== undefined) {
      const connection = this.#connection;
      future.onStdin = (message: KernelMessage.IStdinMessage) => {
        if (message.header.msg_type !== 'input_request') return;
        const request = message as KernelMessage.IInputRequestMsg;
        onInput(String(request.content.prompt ?? ''), (value) => connection.sendInputReply({ status: 'ok', value }, request.header));
      };
    }
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
    // An owned kernel whose route is away may be alive, with its names: it is not shut down now (a request could not
    // reach the server anyway); the backend shuts down every kernel it asked for when ipython-mcp exits. Read before
    // the watch stops (stopping it forgets since when the route is away).
    const routeAway = this.#route.away !== undefined || (this.#everConnected && this.#connection.connectionStatus !== 'connected');
    this.#closed = true;
    this.#route.stop();
    const closed = new JupyterKernelError('jupyter_closed', { kernelId: this.kernelId });
    for (const reject of [...this.#inFlight]) reject(closed);
    for (const comm of [...this.#comms]) comm.close();
    this.#connection.dispose();
    if (!this.owned || routeAway) return;
    await shutdownKernelById(this.#server, this.kernelId);
  }
}
