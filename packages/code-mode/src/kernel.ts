import {
  MAX_MEMORY_LIMIT_MB,
  Runtime,
  chooseInterpreter,
  defaultMemoryLimitMb,
  type Logger,
  type OperationOutcome,
  type RunOptions,
  type RuntimeOptions,
  type WorkerBackend,
} from '@ipython-mcp/worker-supervisor';
import type { OperationName, OperationParams, OperationResult } from '@ipython-mcp/protocol';
import PQueue from 'p-queue';
import { CodeModeCancelledError, InvalidRunCodeInputError, KernelClosedError, KernelStartupError } from './errors.js';
import { MAX_RESULT_BYTES, MAX_RESULT_DEPTH } from './result-cut.js';
import { MAX_OUTPUT_CHARS } from './return-value.js';
import { KERNEL_IPC_LIMIT_BYTES } from './kernel-ipc-limit.js';
import { RunCodeJournal, type KernelJournalOption } from './run-code-journal.js';
import type { JournalStatus } from '@ipython-mcp/session-journal';

/** Options of an {@link IPythonKernel}. */
export interface IPythonKernelOptions {
  /**
   * The Python interpreter to run the kernel with (it needs IPython). Unset: `IPYTHON_MCP_PYTHON`, then the
   * environment `ipython-mcp setup` manages, then `python3` on PATH.
   */
  python?: string | undefined;
  /** The kernel's working directory; unset, this process's. */
  cwd?: string | undefined;
  /** How long a new kernel may take to answer (default 60 000 ms). */
  startupTimeoutMs?: number | undefined;
  /** Extra environment variables for the kernel process. */
  env?: Record<string, string> | undefined;
  /**
   * Keep a started spare process, so a kernel that had to be replaced is back at once (default false: one
   * process per kernel).
   */
  warmStandby?: boolean | undefined;
  /** Where supervision events go (stderr logger of `@ipython-mcp/worker-supervisor`); silent by default. */
  logger?: Logger | undefined;
  /**
   * The memory guard, as `IPYTHON_MCP_MEMORY_LIMIT_MB` for the server: MiB the kernel process and the processes it
   * started may hold while code runs. Code that grows past it is stopped; the kernel keeps its state when memory
   * falls back below the limit, else it is restarted. `0` or `null` turns the guard off. Default: half of physical
   * memory.
   */
  memoryLimitMb?: number | null | undefined;
  /**
   * A Jupyter notebook to record every run_code cell in (with its outputs, nested tool calls as comments, and
   * notes for timeouts, crashes and restarts), for the human to open. It holds code and values: it is created
   * with mode 0600. Writing never slows the kernel; a journal that cannot be written stops, see
   * {@link IPythonKernel.journalStatus}.
   */
  journal?: KernelJournalOption | undefined;
  /**
   * Where the kernel's namespace lives. Unset: a worker process started here. A Jupyter kernel's backend
   * (`jupyterKernelBackend` of `@ipython-mcp/jupyter-kernel`) runs each run_code as that kernel's own cell, its
   * nested tool calls travelling on the kernel's stdin channel (docs/jupyter.md). With a kernel someone else owns,
   * leave `warmStandby` off: a second worker would take the kernel over from the first. What the backend cannot do
   * (the memory guard, for one) is off.
   */
  backend?: WorkerBackend | undefined;
  /**
   * The kernel is someone else's (a Jupyter kernel attached by id or notebook): it is never restarted, so run_code's
   * `restart: true` is refused instead of leaving the namespace as it was.
   */
  attached?: boolean | undefined;
}

const journals = new WeakMap<IPythonKernel, RunCodeJournal>();

/** The journal of a kernel, if it has one (package-internal: Code Mode records its cells through it). */
export function kernelJournal(kernel: IPythonKernel): RunCodeJournal | undefined {
  return journals.get(kernel);
}

/** Exclusive use of a started kernel, handed to {@link IPythonKernel.exclusive} tasks. */
export interface KernelSession {
  /** Changes whenever the kernel's state is lost: restart, crash, forced replacement. */
  readonly stateId: string;
  /** Runs one worker operation (no queueing: the session already holds the kernel). */
  run<Op extends OperationName>(op: Op, params: OperationParams<Op>, options?: RunOptions): Promise<OperationOutcome<OperationResult<Op>>>;
  /** Replaces the kernel process with a fresh one, discarding its state. */
  restart(): Promise<void>;
}

/** The time a running cell gets after {@link IPythonKernel.shutdown} before it is interrupted. */
export const SHUTDOWN_WAIT_MS = 5_000;
/** The time an interrupted cell gets before its process is killed. */
export const INTERRUPT_GRACE_MS = 5_000;
const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;
/** What follows a kernel that failed to start or to come back: the next call really does try again. */
export const KERNEL_RETRY_NOTE = 'Nothing was left running; the next run_code call (or start()) tries a fresh kernel.';
const HEALTH_TIMEOUT_MS = 10_000;

/**
 * A persistent IPython kernel (one Python worker process) that Code Mode runs code in. You own it: share one
 * across runs to keep variables, imports and loaded data, and stop it with {@link IPythonKernel.shutdown} or
 * `await using`. Work on it runs one cell at a time, in call order. While idle it does not keep Node's event loop
 * alive, so a program that forgets to shut it down still exits, and the kernel process with it.
 *
 * Not a sandbox: code runs with your user's permissions.
 */
export class IPythonKernel implements AsyncDisposable {
  private readonly options: IPythonKernelOptions;
  // Not a second admission queue: the runtime admits single operations, while this serialises whole sessions
  // (exclusive(): define_tools, run_code and a restart as one unit, with pre-start cancellation by signal).
  private readonly queue = new PQueue({ concurrency: 1 });
  private runtime: Runtime | undefined;
  private starting: Promise<Runtime> | undefined;
  private generation = 0;
  private lifecycle = 0;

  constructor(options: IPythonKernelOptions = {}) {
    const startup = options.startupTimeoutMs;
    if (startup !== undefined && !(Number.isFinite(startup) && startup > 0)) {
      throw new RangeError('startupTimeoutMs must be a positive number of milliseconds');
    }
    const memory = options.memoryLimitMb;
    if (memory !== undefined && memory !== null && !(Number.isSafeInteger(memory) && memory >= 0 && memory <= MAX_MEMORY_LIMIT_MB)) {
      throw new RangeError(`memoryLimitMb must be a whole number of MiB from 0 (off) to ${MAX_MEMORY_LIMIT_MB}, or null (off)`);
    }
    this.options = { ...options };
    if (options.journal !== undefined) journals.set(this, new RunCodeJournal(options.journal));
  }

  /** The journal's state (path, cells on disk, and why it stopped if it did), or null without a journal. */
  journalStatus(): JournalStatus | null {
    return journals.get(this)?.status() ?? null;
  }

  /** The memory guard's limit in MiB; null when it is off. */
  get memoryLimitMb(): number | null {
    const backend = this.options.backend;
    if (backend !== undefined && !backend.capabilities.has('memoryGuard')) return null;
    const memory = this.options.memoryLimitMb;
    if (memory === undefined) return defaultMemoryLimitMb();
    return memory === null || memory === 0 ? null : memory;
  }

  /** Whether a kernel process is running now. */
  get running(): boolean {
    const runtime = this.runtime;
    if (runtime === undefined) return false;
    // A kernel on another backend (a Jupyter kernel) has no local pid: its runtime's state says it.
    if (this.options.backend !== undefined) return runtime.status().state === 'ready' || runtime.status().state === 'busy';
    return runtime.workerPids().length > 0;
  }

  /** Pids of the kernel's processes (with a warm standby, two), for diagnostics and tests. */
  workerPids(): number[] {
    return this.runtime?.workerPids() ?? [];
  }

  /** Starts the kernel process, unless it is already running. Rejects with {@link KernelStartupError}. */
  async start(): Promise<void> {
    await this.ensureRuntime(this.lifecycle);
  }

  /** Replaces the kernel process with a fresh one, discarding its state; waits for the running cell first. */
  async restart(): Promise<void> {
    await this.exclusive((session) => session.restart());
  }

  /**
   * Stops the kernel process; a later {@link IPythonKernel.start} or cell starts a fresh one. A running cell
   * gets 5 s to finish, is then interrupted, and 5 s later its process is killed; work still waiting for the
   * kernel fails with {@link KernelClosedError}.
   */
  async shutdown(): Promise<void> {
    this.lifecycle += 1;
    if (this.queue.pending > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.queue.onPendingZero(), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)))]);
      clearTimeout(timer);
    }
    const starting = this.starting;
    const runtime = this.runtime;
    this.runtime = undefined;
    await runtime?.close();
    const late = await starting?.catch(() => undefined);
    if (late !== undefined && late !== runtime) await late.close();
    await journals.get(this)?.flushed();
  }

  /** Same as {@link IPythonKernel.shutdown}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  /**
   * Runs `task` with the kernel to itself, after the work queued before it; starts the kernel first if needed.
   * This is how Code Mode runs a cell and its tool definitions as one unit.
   */
  async exclusive<T>(task: (session: KernelSession) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const lifecycle = this.lifecycle;
    try {
      return await this.queue.add(
        async () => {
          if (lifecycle !== this.lifecycle) throw new KernelClosedError('the kernel was shut down before this work started');
          if (signal?.aborted) throw new CodeModeCancelledError();
          return task(this.session(await this.ensureRuntime(lifecycle), lifecycle));
        },
        signal === undefined ? {} : { signal },
      );
    } catch (error) {
      if (signal?.aborted && !KernelClosedError.isInstance(error)) throw new CodeModeCancelledError();
      throw error;
    }
  }

  private session(runtime: Runtime, lifecycle: number): KernelSession {
    let current = runtime;
    const kernel = this;
    return {
      get stateId() {
        return `${kernel.generation}:${current.epoch}`;
      },
      run: async (op, params, options = {}) => {
        if (lifecycle !== this.lifecycle) throw new KernelClosedError();
        if (this.runtime !== current || current.status().state === 'unavailable') current = await this.ensureRuntime(lifecycle);
        return current.run(op, params, options);
      },
      restart: async () => {
        if (this.options.attached === true) {
          throw new InvalidRunCodeInputError(
            "restart is not available here: the kernel is someone else's (attached with --kernel or --notebook) and is never restarted; run the code without restart, and `del` the names to clear",
          );
        }
        if (this.runtime === current) this.runtime = undefined;
        await current.close();
        current = await this.ensureRuntime(lifecycle);
      },
    };
  }

  private async ensureRuntime(lifecycle: number): Promise<Runtime> {
    const runtime = this.runtime;
    if (runtime !== undefined) {
      const state = runtime.status().state;
      if (state !== 'unavailable' && state !== 'closed') return runtime;
      this.runtime = undefined;
      await runtime.close();
    }
    this.starting ??= this.startRuntime().finally(() => {
      this.starting = undefined;
    });
    const started = await this.starting;
    if (lifecycle !== this.lifecycle) {
      if (this.runtime === started) this.runtime = undefined;
      await started.close();
      throw new KernelClosedError('the kernel was shut down while it started');
    }
    return started;
  }

  private async startRuntime(): Promise<Runtime> {
    const startupTimeoutMs = this.options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    const backend = this.options.backend;
    const runtime = new Runtime({
      // A backend other than the local process brings its own Python (a Jupyter kernel's).
      python: this.options.python ?? (backend === undefined ? chooseInterpreter(undefined).python : 'python3'),
      ...(backend === undefined ? {} : { backend }),
      ...kernelRuntimeOptions(startupTimeoutMs),
      memoryLimitMb: this.memoryLimitMb,
      cwd: this.options.cwd,
      env: this.options.env,
      logger: this.options.logger,
      warmStandby: this.options.warmStandby ?? false,
      // An idle kernel must not keep the program alive: a script that forgets shutdown() still exits, and the
      // worker with it (it sees EOF on its pipe).
      unrefWhenIdle: true,
    });
    runtime.start();
    const health = await runtime.run('health', {}, { timeoutMs: HEALTH_TIMEOUT_MS });
    if (!health.ok) {
      // The supervisor words this for a server ("unavailable until the server restarts"); a kernel is different:
      // the next call starts a new runtime. Take the bare reason and say what is true here.
      const reason = runtime.status().error ?? health.error.message;
      // Not awaited: when the interpreter could not even be spawned, the supervisor's close() waits for an exit
      // event that never comes. Nothing is left running in that case; otherwise the worker is already gone.
      void runtime.close().catch(() => undefined);
      throw new KernelStartupError(`the IPython kernel could not start: ${reason}. ${KERNEL_RETRY_NOTE}`);
    }
    this.generation += 1;
    this.runtime = runtime;
    return runtime;
  }
}

/**
 * Runtime options for a Code Mode kernel: 10 MiB of printed output and 10 MiB of result, both with exact counts of
 * what was dropped, tracebacks generous enough for a model to read, and an IPC limit that carries all of it at
 * once ({@link KERNEL_IPC_LIMIT_BYTES}). Built directly in the runtime's own units (ms), not as server settings.
 */
export function kernelRuntimeOptions(startupTimeoutMs: number): Omit<RuntimeOptions, 'python'> {
  return {
    worker: {
      limits: {
        maxTextChars: MAX_OUTPUT_CHARS,
        maxTracebackChars: 64 * 1024,
        // Results are bounded by bytes (run_code's max_result_bytes), not counted in items: every item takes at
        // least one byte of JSON, so an item limit equal to the byte budget can never cut first.
        maxResults: MAX_RESULT_BYTES,
        maxJsonDepth: MAX_RESULT_DEPTH,
        maxDisplayItems: 50,
        maxIpcMessageBytes: KERNEL_IPC_LIMIT_BYTES,
      },
    },
    interruptionGraceMs: INTERRUPT_GRACE_MS,
    startupTimeoutMs,
    maxPendingOperations: 8,
    queueWaitTimeoutMs: 24 * 60 * 60 * 1000,
  };
}
