import { defineConfig } from 'vitest/config';
import { realProcessesConfig } from '@ipython-mcp/test-support/vitest';

// These suites start real Python kernels and a real MCP server.
export default defineConfig(realProcessesConfig({ testTimeout: 120_000 }));
