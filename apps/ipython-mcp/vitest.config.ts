import { defineConfig } from 'vitest/config';

// End-to-end suites spawn the built binary and real Python workers: long timeouts, one file at a time
// (the machine has two cores and each server keeps a warm standby worker).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
