// Vitest settings shared by the workspace's suites.
import { TimingReporter } from './timing-reporter.js';

/** The default reporter, plus the timing reporter when tooling/test.sh asks for the time table. */
export function reporters() {
  return process.env.IPYTHON_MCP_TEST_TIMINGS ? ['default', new TimingReporter()] : ['default'];
}

export { TimingReporter };

/**
 * Settings for suites that start real Python workers, kernels or servers: long timeouts, and one file at a time (the
 * machines have two cores, and every server keeps a warm standby worker). `tooling/test.sh --quick` (the inner loop)
 * leaves out the end-to-end files (*.e2e.test.ts). apps/ipython-mcp builds two groups on these settings (most files
 * two at a time, then the timing-bound ones alone; docs/decisions/0018-bench-ci.md).
 */
export function realProcessesConfig({ testTimeout = 60_000 } = {}) {
  return {
    test: {
      reporters: reporters(),
      include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
      exclude: process.env.IPYTHON_MCP_TEST_QUICK ? ['**/node_modules/**', '**/*.e2e.test.ts'] : ['**/node_modules/**'],
      testTimeout,
      hookTimeout: 60_000,
      fileParallelism: false,
    },
  };
}
