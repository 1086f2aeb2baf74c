import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  ConfigureSchema,
  FrameDecoder,
  FrameError,
  HelloSchema,
  PROTOCOL_VERSION,
  ReadySchema,
  parseWorkerMessage,
  encodeFrame,
  type CodecName,
  type Configure,
  type Hello,
  type ToolCall,
  type WireError,
  type WorkerEvent,
} from '@ipython-mcp/protocol';
import { silentLogger, type Logger } from './logger.js';
import { workerIpythonDirectory } from './python-interpreter.js';
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
  logger?: Logger | undefined;
}

/** What a successful handshake tells the parent. */
export interface WorkerInfo {
  pid: number;
  python: string;
  ipython: string;
  codec: CodecName;
  protectedNames: string[];
  startupMs: number;
}

/** A request's answer from the worker. */
export type WorkerReply = { ok: true; result: Record<string, unknown> } | { ok: false; error: WireError };

/** The answer to a nested tool call: the value as JSON text for Python (`toPythonJson`), or a failure message. */
export type ToolAnswer = { ok: true; valueJson: string } | { ok: false; message: string };

/** Hooks for one in-flight request. */
export interface RequestHooks {
  onEvent?: ((event: WorkerEvent) => void) | undefined;
  onToolCall?: ((call: ToolCall) => void) | undefined;
}

/** Why a worker stopped being usable. */
export class WorkerExitedError extends Error {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  constructor(message: string, exitCode: number | null, signal: NodeJS.Signals | null) {
    super(message);
    this.name = 'WorkerExitedError';
    this.exitCode = exitCode;
    this.signal = signal;
  }
}

/** Start-up failed: the message is one clear line for a person. */
export class WorkerStartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerStartupError';
  }
}

interface Pending {
  resolve: (reply: WorkerReply) => void;
  reject: (error: Error) => void;
  hooks: RequestHooks;
}

/**
 * One Python worker process and its framed IPC channel (fd 3 in, fd 4 out). It knows nothing about deadlines
 * or admission: the runtime owns those.
 */
export class WorkerProcess {
  /** Resolves after `ready`; rejects with {@link WorkerStartupError}. */
  readonly ready: Promise<WorkerInfo>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private readonly child: ChildProcess;
  private readonly toWorker: Duplex;
  private readonly decoder: FrameDecoder;
  private readonly logger: Logger;
  private readonly options: WorkerSpawnOptions;
  private readonly pending = new Map<number, Pending>();
  private codec: CodecName = 'json';
  private nextId = 1;
  private stderrTail = '';
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readyState: 'starting' | 'ready' | 'failed' = 'starting';
  private settleReady!: { resolve: (info: WorkerInfo) => void; reject: (error: Error) => void };
  private startedAt = performance.now();

  private constructor(options: WorkerSpawnOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.decoder = new FrameDecoder(options.maxMessageBytes);
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
    this.child = spawn(options.python, ['-c', workerBootstrapCode()], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      detached: true,
      cwd: options.cwd,
      // IPython's own directory (profile_default) lives in ipython-mcp's home, never in the user's ~/.ipython.
      env: { ...process.env, IPYTHONDIR: ipythonDirectory, ...options.env, PYTHONUNBUFFERED: '1' },
    });
    let resolveExited!: (value: { code: number | null; signal: NodeJS.Signals | null }) => void;
    this.exited = new Promise((resolve) => {
      resolveExited = resolve;
      this.child.once('exit', (code, signal) => {
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
      this.rejectAll(new WorkerExitedError(message, null, null));
    });
    const toWorker = this.child.stdio[3] as Duplex;
    const fromWorker = this.child.stdio[4] as Duplex;
    this.toWorker = toWorker;
    toWorker.on('error', () => undefined);
    fromWorker.on('error', () => undefined);
    fromWorker.on('data', (chunk: Buffer) => this.onData(chunk));
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

  /** Whether the process is still running. */
  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** Requests sent and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request. Resolves with the worker's reply; rejects with {@link WorkerExitedError} if the worker
   * dies first, or with a `message_too_large` {@link FrameError} if the request cannot be framed.
   */
  request(op: string, params: Record<string, unknown>, hooks: RequestHooks = {}): { id: number; reply: Promise<WorkerReply> } {
    const id = this.nextId++;
    const reply = new Promise<WorkerReply>((resolve, reject) => {
      if (!this.alive || this.readyState !== 'ready') {
        reject(new WorkerExitedError('the worker is not running', this.exitInfo?.code ?? null, this.exitInfo?.signal ?? null));
        return;
      }
      let frame: Buffer;
      try {
        frame = encodeFrame({ type: 'request', id, op, params, stream: hooks.onEvent !== undefined }, this.codec, this.options.maxMessageBytes);
      } catch (error) {
        reject(error as Error);
        return;
      }
      this.pending.set(id, { resolve, reject, hooks });
      this.toWorker.write(frame);
    });
    return { id, reply };
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
    this.send(reason === undefined ? { type: 'interrupt', id } : { type: 'interrupt', id, reason });
  }

  /** Answers a nested tool call. */
  sendToolResult(callId: number, result: ToolAnswer): void {
    this.send(
      result.ok
        ? { type: 'tool_result', call_id: callId, ok: true, value_json: result.valueJson }
        : { type: 'tool_result', call_id: callId, ok: false, message: result.message },
    );
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
    else this.send({ type: 'shutdown' });
    this.toWorker.end();
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

  private send(message: unknown): void {
    if (!this.alive || this.readyState === 'failed') return;
    try {
      this.toWorker.write(encodeFrame(message, this.codec, this.options.maxMessageBytes));
    } catch (error) {
      this.logger.warn('worker.send_failed', { reason: (error as Error).message });
    }
  }

  private onData(chunk: Buffer): void {
    for (const frame of this.decoder.push(chunk)) {
      if (!frame.ok) {
        this.onProtocolError(frame.error);
        continue;
      }
      this.onMessage(frame.message);
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
    const message = parseWorkerMessage(raw);
    if (message === undefined) {
      this.logger.warn('worker.invalid_message', { type: typeof raw === 'object' && raw !== null ? String((raw as { type?: unknown }).type).slice(0, 32) : typeof raw });
      return;
    }
    switch (message.type) {
      case 'response': {
        if (message.id === null) return;
        const pending = this.pending.get(message.id);
        if (pending === undefined) return;
        this.pending.delete(message.id);
        pending.resolve(message.ok ? { ok: true, result: message.result } : { ok: false, error: message.error });
        return;
      }
      case 'event':
        this.pending.get(message.id)?.hooks.onEvent?.(message);
        return;
      case 'tool_call': {
        const pending = this.pending.get(message.id);
        if (pending?.hooks.onToolCall === undefined) {
          this.sendToolResult(message.call_id, { ok: false, message: 'tool calls are not available here' });
          return;
        }
        pending.hooks.onToolCall(message);
        return;
      }
      case 'protocol_error': {
        this.logger.warn('worker.protocol_error', { code: message.code });
        if (message.id !== undefined) {
          const pending = this.pending.get(message.id);
          if (pending !== undefined) {
            this.pending.delete(message.id);
            pending.resolve({ ok: false, error: { code: message.code, message: message.message } });
          }
        }
        return;
      }
      default:
        return;
    }
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
      this.toWorker.write(encodeFrame(configure, 'json', this.options.maxMessageBytes));
      this.codec = codec;
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
        codec: this.codec,
        protectedNames: ready.data.protected_names,
        startupMs: performance.now() - this.startedAt,
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
    this.rejectAll(new WorkerExitedError(`the worker exited (${signal ?? `code ${String(code)}`})`, code, signal));
  }

  private describeEarlyExit(code: number | null, signal: NodeJS.Signals | null): string {
    if (code === EXIT_NO_IPYTHON) {
      return `IPython is not installed for ${this.options.python}. Fix: install it there (\`${this.options.python} -m pip install ipython\`), point IPYTHON_MCP_PYTHON (or --python) at a Python that has it, or run \`ipython-mcp setup\`; then restart the session.`;
    }
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ').slice(0, 600);
    return `the worker exited during start-up (${signal ?? `code ${String(code)}`})${tail ? `: ${tail}` : ''}`;
  }

  private rejectAll(error: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const entry of pending) entry.reject(error);
  }
}
