/**
 * A worker backend whose workers live in a Jupyter kernel (a human's notebook kernel, a kernel on a GPU box, a
 * gateway's), with the policy that decides what a kill means: a kernel ipython-mcp attached to is never restarted; a
 * kernel it started is replaced by a fresh one and shut down when ipython-mcp exits.
 */
import {
  WorkerStartupError,
  workerSourceDirectory,
  type Logger,
  type WorkerBackend,
  type WorkerCapability,
  type WorkerHandle,
  type WorkerStartOptions,
} from '@ipython-mcp/worker-supervisor';
import { JupyterKernelError, redactUrl } from './errors.js';
import type { JupyterKernelErrorCode } from './errors.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, openJupyterKernel } from './open-kernel.js';
import type { JupyterKernel } from './jupyter-kernel.js';
import { kernelExecutionState, shutdownKernelById } from './kernel-rest.js';
import type { JupyterKernelTarget } from './kernel-rest.js';
import { JupyterKernelWorker, type KernelCellObserver } from './kernel-worker.js';
import { logServicesConsoleTo } from './services-console.js';
import type { MachineGuardOptions } from './kernel-stdin.js';
import { resolveServer } from './server-settings.js';
import type { JupyterServerOptions } from './server-settings.js';

/**
 * What a kill of a worker means for its kernel.
 *
 * - `attached`: the kernel is someone else's (`--kernel`, `--notebook`): it is never restarted or shut down; after
 *   a kill the next start re-attaches, and is put off (`runtime_busy`, tried again later) while the kernel is still
 *   stuck in the cell that was killed.
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
  /**
   * Kernel start parameters sent in the start request's `env` (`kernelName` targets): Enterprise Gateway and Kernel
   * Gateway read `KERNEL_USERNAME` and the other `KERNEL_*` variables there; a plain Jupyter server ignores them.
   */
  readonly kernelEnv?: Readonly<Record<string, string>> | undefined;
  /** The directory that holds `ipython_mcp_worker`; default workerSourceDirectory(). */
  readonly sourceDirectory?: string | undefined;
  /** Gives each worker's observer of the agent's cells (the notebook mirror); none by default. */
  readonly cells?: (() => KernelCellObserver) | undefined;
  readonly logger?: Logger | undefined;
  /** The kernel side's memory guard and process cleanup on the kernel's machine; unset, both are off. */
  readonly machineGuard?: MachineGuardOptions | undefined;
}

/** What runtime_status reports about a Jupyter backend. Never the token. */
export interface JupyterBackendStatus {
  kind: 'jupyter';
  server: string;
  /** The kernel that runs the agent's cells (the active worker's); null while none is open. */
  kernel_id: string | null;
  /** `owned` only: the warm standby's kernel, started ahead for the next replacement (it runs no cell); null while none. */
  standby_kernel_id?: string | null | undefined;
  kernel_name?: string | undefined;
  notebook?: string | undefined;
  policy: JupyterKernelPolicy;
  /** Set while the attached kernel is stuck in a cell a killed worker left running. */
  stuck?: boolean | undefined;
  /**
   * Set while a call waits for the kernel, busy with another client's request: how many wait, behind whose request
   * (`person`: a client that is not an ipython-mcp, such as JupyterLab; `agent`: another ipython-mcp), since how long.
   */
  waiting?: { count: number; behind: 'person' | 'agent'; since_ms: number } | undefined;
  /**
   * Set while the kernel's channels are down and the server does not answer for it (a server or a hub's proxy
   * restarting, a cut connection): since when, and what answered instead. The kernel is not taken for lost.
   */
  unreachable?: { since: string; reason: string } | undefined;
}

/** A {@link WorkerBackend} over one Jupyter server, with what it reports and a close for its kernels. */
export interface JupyterBackend extends WorkerBackend {
  readonly policy: JupyterKernelPolicy;
  /**
   * The server, kernel and policy as runtime_status reports them. Given the runtime's workers, `kernel_id` is the
   * active worker's kernel and `standby_kernel_id` the standby's; without, the kernel last opened.
   */
  status(workers?: { active: WorkerHandle | undefined; standby: WorkerHandle | undefined }): JupyterBackendStatus;
  /** Shuts down every kernel this backend started that is still running (idempotent). */
  close(): Promise<void>;
}

/** The calls a live worker holds for the kernel, busy with another client's request, as runtime_status shows them. */
function waitingOf(worker: JupyterKernelWorker | undefined): Pick<JupyterBackendStatus, 'waiting'> {
  const waiting = worker?.alive === true ? worker.waitingNow() : null;
  return waiting === null ? {} : { waiting };
}

/** The route to the live worker's kernel while it is away, as runtime_status shows it. */
function unreachableOf(worker: JupyterKernelWorker | undefined): Pick<JupyterBackendStatus, 'unreachable'> {
  const away = worker?.awayNow();
  return away === undefined ? {} : { unreachable: { since: away.since.toISOString(), reason: away.reason.slice(0, 300) } };
}

/** The kernel a live worker of this backend runs in, if it opened one. */
function kernelOf(worker: WorkerHandle | undefined): string | undefined {
  return worker instanceof JupyterKernelWorker && worker.alive ? worker.kernelId : undefined;
}

/** The words a start of a stuck attached kernel fails with. */
export const STUCK_KERNEL_MESSAGE =
  'the kernel is stuck running a cell; ipython-mcp does not restart a kernel it did not start — interrupt or restart it from Jupyter';

/** How long a start after a kill waits for the attached kernel to finish the killed cell before it calls it stuck. */
const STUCK_WAIT_MS = 3_000;
/** How long a later start looks at a kernel the server still calls busy before it puts the call off again. */
const STUCK_LOOK_MS = 1_000;

/** The back-off between starts while the kernel is stuck or gone: doubling from the first, never past the last. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 10_000;

/**
 * Failures that may pass once the kernel or server is back (a server that is restarting, a hub's proxy that is
 * away, a kernel that comes back under its id, a notebook opened again): answered at once with what is wrong, and
 * retried with the back-off in the background. A refused token is retried too (see startupRetry). Only what no
 * waiting can mend is final: a malformed option, a server without sessions, a kernelspec it does not have.
 */
const PASSING: ReadonlySet<JupyterKernelErrorCode> = new Set<JupyterKernelErrorCode>([
  'jupyter_unreachable',
  'jupyter_bad_response',
  'jupyter_kernel_not_found',
  'jupyter_no_session',
  'jupyter_kernel_died',
]);

/** What a start that failed with `error` waits for, in words for the agent. */
function waitingFor(error: JupyterKernelError, target: JupyterKernelTarget, url: string): string {
  switch (error.code) {
    case 'jupyter_kernel_not_found':
      return 'kernel' + ('kernelId' in target ? ` ${target.kernelId}` : '') + ` to be running on ${url}`;
    case 'jupyter_no_session':
      return 'notebook' + ('notebookPath' in target ? ` ${target.notebookPath}` : '') + ` to exist on ${url}`;
    case 'jupyter_kernel_died':
      return `the kernel on ${url} to answer`;
    default:
      return `the Jupyter server at ${url} to answer`;
  }
}

/**
 * How long after a start request failed a JSON 404 for its kernel may still be the server making it: jupyter_server
 * answers 404 for a kernel whose start is under way (a request cut by a proxy's restart may have reached it).
 */
const START_PENDING_MS = 5_000;

/** A kernel this backend asked the server to start. */
interface AskedKernel {
  /** Settles once its start request did (answered or failed). */
  readonly settled: Promise<void>;
  /** Settles {@link AskedKernel.settled}. */
  readonly settle: () => void;
  /** Until when (Date.now()) a 404 for it may be its start still under way: 0 once the server answered the start. */
  pendingUntil: number;
}

/** fd-level capture only: the kernel side points fd 1 and 2 at its own pipes while an agent's request runs. */
const KERNEL_CAPABILITIES: ReadonlySet<WorkerCapability> = new Set<WorkerCapability>(['fdCapture']);

/**
 * Workers in a Jupyter kernel: fd-level capture (the kernel side's, while an agent's request runs) and nothing else
 * (no local process to measure or group, no sandbox, no snapshot), so the runtime refuses `--state` and `--sandbox`
 * and switches its local memory guard off (the kernel side guards the kernel's machine itself).
 *
 * Warm standbys: with the `attached` policy every worker attaches to the same kernel, and the newest attach takes
 * the kernel side over, so the runtime must run without a standby (`warmStandby: false`); with `owned` a standby
 * is a warm kernel of its own.
 */
export function jupyterKernelBackend(options: JupyterBackendOptions): JupyterBackend {
  const policy: JupyterKernelPolicy = options.policy ?? ('kernelName' in options.target ? 'owned' : 'attached');
  if (options.logger !== undefined) logServicesConsoleTo(options.logger);
  const started = new Set<JupyterKernel>();
  /** Every kernel id this backend asked the server to start, whether or not the start came back: shut down at close. */
  const asked = new Map<string, AskedKernel>();
  /** Aborted by close: every opening is given up, its kernel shut down as soon as the server answered its start. */
  const closing = new AbortController();
  /** Shuts down a kernel asked for, once its start request settled (a start in flight is not answered 404 as gone). */
  const shutdownAsked = async (kernelId: string, kernel: AskedKernel): Promise<void> => {
    await kernel.settled;
    await shutdownKernelById(resolveServer(options.server), kernelId, kernel.pendingUntil);
  };
  let lastKernelId: string | null = 'kernelId' in options.target ? options.target.kernelId : null;
  let stuck = false;
  /** Whether the post-kill wait for a stuck kernel was spent (later starts look once and put the call off). */
  let stuckWaited = false;
  let closed = false;
  let failures = 0;
  /** The session of the kernel process the last ready worker was booted into. */
  let lastSession: string | undefined;
  /** The newest worker: the one whose waiting calls runtime_status shows. */
  let current: JupyterKernelWorker | undefined;

  /** Read when needed: a caller may fill the server's URL in after it built the backend. */
  const displayUrl = (): string => redactUrl(options.server.url);
  const retryHint = (code: 'runtime_busy' | 'runtime_unavailable', waiting: string): NonNullable<WorkerStartupError['retry']> => {
    const afterMs = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** failures);
    failures += 1;
    return { code, afterMs, waitingFor: waiting };
  };
  /** Whether a start that failed with `cause` may pass, and when to try again; undefined when it is final. */
  const startupRetry = (cause: unknown): WorkerStartupError['retry'] => {
    if (closed || !(cause instanceof JupyterKernelError)) return undefined;
    // A refused token is nothing wrong with the server: once the token is fixed (the server given this token, or a
    // server restarted with it), a new attempt passes, so it is tried again as a passing failure is.
    if (cause.code === 'jupyter_unauthorized') return retryHint('runtime_unavailable', `${displayUrl()} to accept the token`);
    if (!PASSING.has(cause.code)) return undefined;
    return retryHint('runtime_unavailable', waitingFor(cause, options.target, displayUrl()));
  };

  const opening = new Set<Promise<unknown>>();
  const open = (boundMs: number, abandoned: AbortSignal): Promise<JupyterKernel> => {
    const attempt = openKernel(boundMs, AbortSignal.any([abandoned, closing.signal])).catch((error: unknown) => {
      if (error instanceof WorkerStartupError) throw error;
      const retry = startupRetry(error);
      if (retry === undefined) throw error;
      throw new WorkerStartupError((error as Error).message, retry);
    });
    const settled = attempt.catch(() => undefined);
    opening.add(settled);
    void settled.finally(() => opening.delete(settled));
    return attempt;
  };
  /** Opens the target's kernel within `boundMs` (the worker's start-up bound): a start given up is not left running. */
  const openKernel = async (boundMs: number, signal: AbortSignal): Promise<JupyterKernel> => {
    if (closed) throw new Error('the Jupyter backend is closed');
    const onStarting = (kernelId: string): void => {
      if (asked.has(kernelId)) return;
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      asked.set(kernelId, { settled, settle, pendingUntil: 0 });
    };
    const onStartSettled = (kernelId: string, answered: boolean): void => {
      const kernel = asked.get(kernelId);
      if (kernel === undefined) return;
      kernel.pendingUntil = answered ? 0 : Date.now() + START_PENDING_MS;
      kernel.settle();
    };
    const openWithin = (connectTimeoutMs: number | undefined): Promise<JupyterKernel> =>
      openJupyterKernel({
        server: options.server,
        target: options.target,
        connectTimeoutMs,
        start: { env: options.kernelEnv, onStarting, onStartSettled, signal },
      });
    let kernel: JupyterKernel;
    if (policy === 'attached' && stuck && lastKernelId !== null && (await kernelExecutionState(options.server, lastKernelId)) === 'busy') {
      // The server's 'busy' may be stale: after a restart it keeps the old kernel's state until the new one runs a
      // cell (a kernel_info does not count). So the kernel is asked itself: a kernel still in the killed cell does
      // not answer on its shell; one that finished the cell, or was restarted, does. Right after the kill the cell
      // may still be finishing, so the first look waits a little; later ones put the call off sooner.
      const waitMs = stuckWaited ? STUCK_LOOK_MS : STUCK_WAIT_MS;
      stuckWaited = true;
      try {
        kernel = await openWithin(waitMs);
      } catch (error) {
        if (error instanceof JupyterKernelError && error.code === 'jupyter_kernel_died') {
          throw new WorkerStartupError(STUCK_KERNEL_MESSAGE, retryHint('runtime_busy', 'the kernel to finish the cell it is stuck in'));
        }
        throw error;
      }
    } else {
      kernel = await openWithin(Math.min(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, boundMs));
    }
    stuck = false;
    stuckWaited = false;
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
    capabilities: KERNEL_CAPABILITIES,
    sharedKernel: true,
    policy,
    start(start: WorkerStartOptions): JupyterKernelWorker {
      const worker = new JupyterKernelWorker({
        open: (abandoned) => open(start.startupTimeoutMs, abandoned),
        start,
        sourceDirectory: options.sourceDirectory ?? workerSourceDirectory(),
        logger: options.logger ?? start.logger,
        machineGuard: options.machineGuard,
        startupRetry,
        cells: options.cells?.(),
        onKilledBusy: () => {
          if (policy === 'attached') stuck = true;
        },
        namespaceKept: (kernel) => {
          // The same kernel process as the last worker's (an attached kernel interrupted, not restarted): same names.
          const kept = policy === 'attached' && lastSession !== undefined && kernel.kernelSession === lastSession;
          lastSession = kernel.kernelSession;
          return kept;
        },
      });
      worker.ready.then(
        () => {
          failures = 0;
          current = worker;
        },
        () => undefined,
      );
      return worker;
    },
    status(workers?: { active: WorkerHandle | undefined; standby: WorkerHandle | undefined }): JupyterBackendStatus {
      const target = options.target;
      // With --kernel-name the standby opens a kernel of its own after the active one: the kernel last opened is the
      // standby's, not the one running the agent's cells.
      const active = kernelOf(workers?.active) ?? (workers === undefined || policy === 'attached' ? lastKernelId : null);
      return {
        kind: 'jupyter',
        server: displayUrl(),
        kernel_id: active,
        ...(policy === 'owned' && workers !== undefined ? { standby_kernel_id: kernelOf(workers.standby) ?? null } : {}),
        ...('kernelName' in target ? { kernel_name: target.kernelName } : {}),
        ...('notebookPath' in target ? { notebook: target.notebookPath } : {}),
        policy,
        ...(stuck ? { stuck: true } : {}),
        ...waitingOf(current),
        ...unreachableOf(current),
      };
    },
    async close(): Promise<void> {
      closed = true;
      // Everything at once, nothing waited for first: a client gives a closing server a few seconds before it kills
      // it (the MCP SDK's: 2 s after stdin closes, SIGTERM; SIGKILL 2 s later), and a shutdown never sent leaves its
      // kernel running. A kernel still opening is given up (its channels may wait out the connect bound) and shut
      // down as soon as the server answered its start.
      closing.abort();
      const kernels = [...started];
      started.clear();
      // Every kernel asked for, including one whose start failed or timed out after the server made it, or whose
      // shutdown was put off or failed when its worker ended (a route away, a kernel the server was restarting).
      // They stay in `asked` until then: a start still in flight settles its entry there.
      await Promise.all([
        ...kernels.map((kernel) => kernel.close().catch(() => undefined)),
        ...[...asked].map(([kernelId, kernel]) => shutdownAsked(kernelId, kernel).catch(() => undefined)),
        ...opening,
      ]);
      asked.clear();
    },
  };
}
