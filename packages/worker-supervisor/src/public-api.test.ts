import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/worker-supervisor, pinned: adding or removing one is a deliberate change of public API (update
// this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/worker-supervisor public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'CONTRACT_CELLS',
      'ChannelWorker',
      'EXIT_NO_IPYTHON',
      'InMemoryChannel',
      'MAX_MEMORY_LIMIT_MB',
      'RUNTIME_DEFAULTS',
      'Runtime',
      'StreamChannel',
      'WORKER_CAPABILITIES',
      'WorkerExitedError',
      'WorkerProcess',
      'WorkerStartupError',
      'capabilityProblem',
      'chooseInterpreter',
      'createStderrLogger',
      'defaultMemoryLimitMb',
      'environmentPython',
      'knownFailure',
      'localProcessBackend',
      'managedEnvironmentDirectory',
      'probePython',
      'silentLogger',
      'statePathFor',
      'workerBackendContract',
      'workerSourceDirectory',
    ]);
  });
});
