import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ConfigureSchema, HelloSchema, PROTOCOL_VERSION, ReadySchema, type CodecName, type Configure, type FrameError, type Hello, type StateReport } from '@ipython-mcp/protocol';
import { silentLogger, type Logger } from './logger.js';
import { StreamChannel } from './worker-channel.js';
import {
  RequestMatcher,
  WorkerExitedError,
  WorkerStartupError,
} from './worker-connection.js';
import type { ToolAnswer } from './runtime-types.js';
import type { RequestHooks, WorkerHandle, WorkerInfo, WorkerReply } from './worker-handle.js';
import { workerIpythonDirectory } from './python-interpreter.js';
import type { LaunchCommand, WorkerLaunch } from './worker-launch.js';
import { workerBootstrapCode } from './worker-source.js';

/** Exit code the bootstrap uses when the interpreter cannot import IPython. */
export const EXIT_NO_IPYTHON = 4;
const STDERR_TAIL_BYTES = 4096;

/** How to start one worker process. */
export interface WorkerSpawnOptions {
  /** Python interpreter to run. */
  python: string;
  /** The `configure` message minus `type`, `protocol` and `codec` (negotiated). */
  configure: Omit<Configure, 'type' | 'protocol' | 'codec'>;
  /** Largest frame either side may send. */
  maxMessageBytes: number;
  /** Start-up bound: spawn → `ready`. */
  startupTimeoutMs: number;
  /** Working directory of the worker; unset, the parent's. */
  cwd?: string | undefined;
  /** Extra environment for the worker. */
  env?: Record<string, string> | undefined;
  /** Prefer JSON even when msgpack is available (release matrix, debugging). */
  forceJsonCodec?: boolean | undefined;
  /** Wraps the command before it is spawned (an isolation engine); unset, Python is spawned directly. */
  launch?: WorkerLaunch | undefined;
  logger?: Logger | undefined;
}

export { WorkerExitedError, WorkerStartupError } from './worker-connection.js';

/** `128 + N` from a wrapper that cannot die by its worker's signal N itself, read back as that signal. */
function decodeSignalExit(code: number | null, signal: NodeJS.Signals | null): { code: number | null; signal: NodeJS.Signals | null } {
  if (signal !== null || code === null || code <= 128) return { code, signal };
  const name = Object.entries(osConstants.signals).find(([, number]) => number === code - 128)?.[0];
  return name === undefined ? { code, signal } : { code: null, signal: name as NodeJS.Signals };
}

/**
 * One Python worker process: spawn, handshake, process group and exit. Its messages travel over a
 * {@link StreamChannel} on fd 3 (to the worker) and fd 4 (from it), matched to requests by a {@link RequestMatcher}.
 * It knows nothing about deadlines or admission: the runtime owns those.
 */
export class WorkerProcess implements WorkerHandle {
  /** Resolves after `ready`; rejects with {@link WorkerStartupError}. */
  readonly ready: Promise<WorkerInfo>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private readonly child: ChildProcess;
  private readonly channel: StreamChannel;
  private readonly requests: RequestMatcher;
  private readonly logger: Logger;
  private readonly options: WorkerSpawnOptions;
  private stderrTail = '';
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readyState: 'starting' | 'ready' | 'failed' = 'starting';
  private settleReady!: { resolve: (info: WorkerInfo) => void; reject: (error: Error) => void };
  private startedAt = performance.now();

  private constructor(options: WorkerSpawnOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.ready = new Promise<WorkerInfo>((resolve, reject) => {
      this.settleReady = { resolve, reject };
    });
    this.ready.catch(() => undefined);
    const ipythonDirectory = options.env?.IPYTHONDIR ?? workerIpythonDirectory();
    try {
      // IPython falls back to a fresh temporary directory (left behind) when the parent is missing.
      mkdirSync(ipythonDirectory, { recursive: true });
    } catch {
      // unwritable home: IPython then picks its temporary directory itself
    }
    const direct = {
      file: options.python,
      args: ['-c', workerBootstrapCode()],
      // IPython's own directory (profile_default) lives in ipython-mcp's home, never in the user's ~/.ipython.
      env: { ...process.env, IPYTHONDIR: ipythonDirectory, ...options.env, PYTHONUNBUFFERED: '1' },
    };
    const command: LaunchCommand = options.launch ? options.launch(direct) : direct;
    this.child = spawn(command.file, [...command.args], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      detached: true,
      cwd: options.cwd,
      env: command.env,
    });
    let resolveExited!: (value: { code: number | null; signal: NodeJS.Signals | null }) => void;
    this.exited = new Promise((resolve) => {
      resolveExited = resolve;
      this.child.once('exit', (rawCode, rawSignal) => {
        const { code, signal } = command.signalsAsExitCodes ? decodeSignalExit(rawCode, rawSignal) : { code: rawCode, signal: rawSignal };
        this.exitInfo = { code, signal };
        // Whatever user code started stays in the worker's process group: it ends with the worker, on every path
        // (graceful shutdown, crash, kill). The group id stays reserved while any member lives, so this reaches
        // only them.
        this.killGroup();
        this.onExit(code, signal);
        resolve({ code, signal });
      });
    });
    this.child.once('error', (error: NodeJS.ErrnoException) => {
      // A process that never started emits no 'exit': settle `exited` here so close() cannot hang.
      if (this.child.pid === undefined) resolveExited({ code: null, signal: null });
      const message =
        error.code === 'ENOENT'
          ? `Python interpreter not found: ${options.python}. Set IPYTHON_MCP_PYTHON (or --python) to a Python with IPython, or run \`ipython-mcp setup\`.`
          : `could not start Python interpreter ${options.python}: ${error.message}`;
      this.failStartup(message);
      this.exitInfo ??= { code: null, signal: null };
      this.requests.rejectAll(new WorkerExitedError(message, null, null));
    });
    this.channel = new StreamChannel(this.child.stdio[3] as Duplex, this.child.stdio[4] as Duplex, options.maxMessageBytes);
    this.requests = new RequestMatcher(
      this.channel,
      this.logger,
      () =>
        this.alive && this.readyState === 'ready'
          ? undefined
          : new WorkerExitedError('the worker is not running', this.exitInfo?.code ?? null, this.exitInfo?.signal ?? null),
      () => this.alive && this.readyState !== 'failed',
    );
    this.channel.onmessage = (message) => this.onMessage(message);
    this.channel.onerror = (error) => this.onProtocolError(error);
    this.child.stdout?.on('data', () => undefined);
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    this.startupTimer = setTimeout(() => {
      this.failStartup(`the worker did not become ready within ${options.startupTimeoutMs} ms`);
      this.kill();
    }, options.startupTimeoutMs);
  }

  private startupTimer: NodeJS.Timeout | undefined;

  /** Spawns a worker; await {@link WorkerProcess.ready} before sending requests. */
  static spawn(options: WorkerSpawnOptions): WorkerProcess {
    return new WorkerProcess(options);
  }

  /** The worker's pid (undefined if spawning failed). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * The pid the worker reported in its hello, in its own pid namespace (not `pid` when a launch wrapper stands
   * between them); undefined before the hello.
   */
  get reportedPid(): number | undefined {
    return this.hello?.pid;
  }

  /** Whether the process is still running. */
  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** Requests sent and not yet answered. */
  get inFlight(): number {
    return this.requests.inFlight;
  }

  /**
   * Sends one request. Resolves with the worker's reply; rejects with {@link WorkerExitedError} if the worker
   * dies first, or with a `message_too_large` {@link FrameError} if the request cannot be framed.
   */
  request(op: string, params: Record<string, unknown>, hooks: RequestHooks = {}): { id: number; reply: Promise<WorkerReply> } {
    return this.requests.request(op, params, hooks);
  }

  /**
   * Whether this worker keeps Node's event loop alive (default true). Unheld, the process, its pipes and its
   * start-up timer are unref'd, so a program with nothing else to do can exit; the worker then sees EOF on its
   * pipe and exits too. Events still arrive while the loop runs for other reasons.
   */
  setHeld(held: boolean): void {
    if (!this.alive) return;
    if (held) this.child.ref();
    else this.child.unref();
    for (const stream of this.child.stdio as Array<Socket | null>) {
      // A closed pipe has no handle: ref() on it would only queue a 'connect' listener that never fires.
      if (stream === null || stream.destroyed) continue;
      if (held) stream.ref();
      else stream.unref();
    }
    if (held) this.startupTimer?.ref();
    else this.startupTimer?.unref();
  }

  /**
   * Asks the worker to interrupt request `id` if it is still the active one; `memory_limit` also has it free what
   * the stopped code left unreachable before it answers.
   */
  interrupt(id: number, reason?: 'memory_limit'): void {
    this.requests.interrupt(id, reason);
  }

  /** Answers a nested tool call. */
  sendToolResult(callId: number, result: ToolAnswer): void {
    this.requests.sendToolResult(callId, result);
  }

  /** Called with each save of the namespace snapshot the worker reports (`--state`). */
  get onStateReport(): ((report: StateReport) => void) | undefined {
    return this.requests.onStateReport;
  }

  set onStateReport(listener: ((report: StateReport) => void) | undefined) {
    this.requests.onStateReport = listener;
  }

  /**
   * SIGKILLs the worker's whole process group: the worker, its group watchdog and anything user code started in
   * it. After the worker has exited there is nothing left to do: its exit already ended the group.
   */
  kill(): void {
    if (this.alive) this.killGroup();
  }

  /** Whether this start-up was abandoned by {@link WorkerProcess.shutdown} before `ready`. */
  get abandoned(): boolean {
    return this.abandonedStartup;
  }

  /**
   * Asks the worker to exit after its active request; kills its group if it has not exited within `graceMs`. A
   * worker still starting is not sent `shutdown`: closing its channel is the request (it exits quietly at the
   * end of file), and its start-up counts as abandoned, not failed.
   */
  async shutdown(graceMs: number): Promise<void> {
    if (!this.alive) return;
    if (this.readyState === 'starting') this.abandonedStartup = true;
    else this.requests.send({ type: 'shutdown' });
    this.channel.close();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private abandonedStartup = false;

  private killGroup(): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // The group is gone (ESRCH), or the worker never became a group leader: end the worker alone.
      if (this.alive) {
        try {
          this.child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }

  private onProtocolError(error: FrameError): void {
    this.logger.warn('worker.bad_frame', { code: error.code, size: error.size });
    if (this.readyState !== 'ready') {
      this.failStartup(`the worker sent an unusable frame during start-up (${error.code})`);
      this.kill();
    }
    // After start-up an unreadable frame cannot be matched to its request. The runtime's deadline
    // handles the request that never gets an answer.
  }

  private onMessage(raw: unknown): void {
    if (this.readyState === 'starting') {
      this.onHandshakeMessage(raw);
      return;
    }
    this.requests.handle(raw);
  }

  private onHandshakeMessage(raw: unknown): void {
    const type = typeof raw === 'object' && raw !== null ? (raw as { type?: unknown }).type : undefined;
    if (type === 'hello') {
      const hello = HelloSchema.safeParse(raw);
      if (!hello.success || hello.data.protocol !== PROTOCOL_VERSION) {
        this.failStartup(`the worker speaks an unsupported protocol (expected ${PROTOCOL_VERSION})`);
        this.kill();
        return;
      }
      this.hello = hello.data;
      const codec: CodecName = !this.options.forceJsonCodec && hello.data.codecs.includes('msgpack') ? 'msgpack' : 'json';
      const configure = ConfigureSchema.parse({ type: 'configure', protocol: PROTOCOL_VERSION, codec, ...this.options.configure });
      // The configure message itself is JSON: the worker switches to the negotiated codec after reading it.
      this.channel.setCodec('json');
      this.sendHandshake(configure);
      this.channel.setCodec(codec);
      return;
    }
    if (type === 'ready') {
      const ready = ReadySchema.safeParse(raw);
      if (!ready.success || this.hello === undefined) {
        this.failStartup('the worker sent an invalid ready message');
        this.kill();
        return;
      }
      this.readyState = 'ready';
      clearTimeout(this.startupTimer);
      this.settleReady.resolve({
        pid: this.hello.pid,
        python: this.hello.python,
        ipython: this.hello.ipython,
        codec: this.channel.codec,
        protectedNames: ready.data.protected_names,
        startupMs: performance.now() - this.startedAt,
        ...(ready.data.state === undefined ? {} : { stateRestore: ready.data.state }),
      });
      return;
    }
    if (type === 'startup_failed') {
      const error = (raw as { error?: { message?: unknown } }).error;
      const message = typeof error?.message === 'string' ? error.message : 'unknown start-up failure';
      this.failStartup(`the worker could not start: ${message.slice(0, 2000)}`);
      return;
    }
    this.failStartup(`unexpected ${String(type).slice(0, 32)} message during start-up`);
    this.kill();
  }

  private hello: Hello | undefined;

  private failStartup(message: string): void {
    if (this.readyState !== 'starting') return;
    this.readyState = 'failed';
    clearTimeout(this.startupTimer);
    this.settleReady.reject(new WorkerStartupError(message));
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(this.startupTimer);
    if (this.readyState === 'starting') {
      this.failStartup(this.describeEarlyExit(code, signal));
    }
    this.requests.rejectAll(new WorkerExitedError(`the worker exited (${signal ?? `code ${String(code)}`})`, code, signal));
  }

  private sendHandshake(message: unknown): void {
    try {
      this.channel.send(message);
    } catch (error) {
      this.failStartup(`the configure message cannot be sent: ${(error as Error).message}`);
      this.kill();
    }
  }

  private describeEarlyExit(code: number | null, signal: NodeJS.Signals | null): string {
    if (code === EXIT_NO_IPYTHON) {
      return `IPython is not installed for ${this.options.python}. Fix: install it there (\`${this.options.python} -m pip install ipython\`), point IPYTHON_MCP_PYTHON (or --python) at a Python that has it, or run \`ipython-mcp setup\`; then restart the session.`;
    }
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ').slice(0, 600);
    return `the worker exited during start-up (${signal ?? `code ${String(code)}`})${tail ? `: ${tail}` : ''}`;
  }
}
