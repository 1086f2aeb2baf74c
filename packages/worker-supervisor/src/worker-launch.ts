/** The command that starts one worker: what would be exec'd, and with which environment. */
export interface LaunchCommand {
  /** Program to run (the Python interpreter, unless a launch wrapper changed it). */
  readonly file: string;
  readonly args: readonly string[];
  /** The whole environment of the process. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * The wrapper reports a worker killed by signal N as exit code 128 + N, as a shell or bubblewrap does; the
   * supervisor then reports the signal, as it would for a worker it spawned directly.
   */
  readonly signalsAsExitCodes?: boolean | undefined;
}

/**
 * Wraps a worker's launch, e.g. in an isolation engine (the opt-in sandbox). The supervisor does not know which
 * engine, only that the process it spawns still passes fds 3 and 4 through to the worker and ends everything it
 * started when it is killed (SIGKILL of its process group) or its parent dies. Synchronous, because a replacement
 * worker is spawned on the hot path: an engine that needs asynchronous set-up does it before the runtime starts.
 */
export type WorkerLaunch = (command: LaunchCommand) => LaunchCommand;
