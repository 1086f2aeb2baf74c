/** The Python the tests run workers with: IPYTHON_MCP_TEST_PYTHON, else the repository's .venv. */
export declare function testPython(): string;
/** Whether a pid is alive (not a zombie, not dead). */
export declare function isAlive(pid: number): boolean;
/** Resolves true when the pid is gone within `ms`. */
export declare function waitForExit(pid: number, ms: number): Promise<boolean>;
/** Waits until every pid has exited (up to `timeoutMs`), then returns the ones still alive. */
export declare function survivors(pids: readonly number[], timeoutMs?: number): Promise<number[]>;
/** Pids of every process whose parent is `pid`. */
export declare function childPids(pid: number): number[];
/** Live (non-zombie) members of process group `pgid`, its leader included while it lives. */
export declare function processGroupMembers(pgid: number): number[];
/**
 * Live server and worker processes carrying `IPYTHON_MCP_TEST_RUN_TAG=<tag>` in their environment: a test file tags
 * what it starts, so its leftover check sees only its own processes.
 */
export declare function taggedProcesses(tag: string): number[];
/** Polls `probe` until `accept` holds or `ms` pass; returns the last value either way. */
export declare function eventually<T>(probe: () => Promise<T> | T, accept: (value: T) => boolean, ms?: number): Promise<T>;
