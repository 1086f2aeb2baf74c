import { defineConfig } from 'vitest/config';
import { realProcessesConfig } from '@ipython-mcp/test-support/vitest';

// The suites under test/ start a real Jupyter server or Kernel Gateway (one per file) and real kernels.
export default defineConfig(realProcessesConfig({ testTimeout: 60_000 }));
