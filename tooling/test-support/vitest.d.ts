import type { ViteUserConfig } from 'vitest/config';

/** Vitest settings for suites that start real Python workers, kernels or servers (long timeouts, serial files). */
export declare function realProcessesConfig(options?: { testTimeout?: number }): ViteUserConfig;

/** The reporters every suite uses: Vitest's default, plus the timing reporter when IPYTHON_MCP_TEST_TIMINGS is set. */
export declare function reporters(): Array<string | object>;

/** Writes per-file timings (JSON) into the directory IPYTHON_MCP_TEST_TIMINGS names, at the end of a run. */
export declare class TimingReporter {
  onInit(vitest: unknown): void;
  onTestRunEnd(testModules: ReadonlyArray<unknown>): void;
}
