import { defineConfig } from 'vitest/config';

// These suites start real Python kernels and a real MCP server: long timeouts, one file at a time (the machine
// has two cores).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
