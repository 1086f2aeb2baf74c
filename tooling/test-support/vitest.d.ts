import type { ViteUserConfig } from 'vitest/config';

/** Vitest settings for suites that start real Python workers, kernels or servers (long timeouts, serial files). */
export declare function realProcessesConfig(options?: { testTimeout?: number }): ViteUserConfig;
