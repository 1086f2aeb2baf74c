import { defineConfig } from 'vitest/config';
import { realProcessesConfig } from '@ipython-mcp/test-support/vitest';

// These suites start real Python kernels.
export default defineConfig(realProcessesConfig({ testTimeout: 120_000 }));
