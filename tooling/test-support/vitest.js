// Vitest settings for suites that start real Python workers, kernels or servers: long timeouts, and one file at
// a time (the machines have two cores, and every server keeps a warm standby worker).
export function realProcessesConfig({ testTimeout = 60_000 } = {}) {
  return {
    test: {
      include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
      testTimeout,
      hookTimeout: 60_000,
      fileParallelism: false,
    },
  };
}
