import { defineConfig } from 'vitest/config';
import { realProcessesConfig } from '@ipython-mcp/test-support/vitest';

// End-to-end suites spawn the built binary and real Python workers.
export default defineConfig(realProcessesConfig());
