// The worker-backend contract against the local process backend inside the opt-in sandbox: the same cases the plain
// backend and the in-memory fake pass (packages/worker-supervisor/src/worker-backend-contract.test.ts), with the
// worker's launch wrapped by the sandbox engine. Like the other --sandbox suites it never skips: an engine that cannot
// start here fails every case with its reason.
import { dirname } from 'node:path';
import { DEFAULT_WORKER_LIMITS, workerLimits } from '@ipython-mcp/protocol';
import { localProcessBackend, managedEnvironmentDirectory, workerBackendContract, type WorkerStartOptions } from '@ipython-mcp/worker-supervisor';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/sandbox.js';
import { testPython } from './harness.js';

const started: RunningSandbox | Error = await startSandbox(
  { enabled: true, allowDomains: [], write: [], denyRead: [] },
  { cwd: process.cwd(), runtimeDirectories: [dirname(managedEnvironmentDirectory())] },
).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));

afterAll(async () => {
  if (!(started instanceof Error)) await started.close();
});

function startOptions(): WorkerStartOptions {
  if (started instanceof Error) throw started;
  return {
    python: testPython(),
    maxMessageBytes: DEFAULT_WORKER_LIMITS.maxIpcMessageBytes,
    startupTimeoutMs: 30_000,
    launch: started.launch,
    env: { TMPDIR: started.temporaryDirectory },
    configure: { limits: workerLimits(DEFAULT_WORKER_LIMITS), library_paths: [], preload_modules: [], module_aliases: {}, reserved_tool_names: [] },
  };
}

describe('worker backend contract: the local process backend under --sandbox', () => {
  const cases = workerBackendContract(() => ({ backend: localProcessBackend, startOptions }));
  it('applies whole: the local backend has every capability, inside the sandbox too', () => {
    expect(cases.filter((each) => each.skip !== undefined)).toEqual([]);
  });
  for (const contractCase of cases) it(contractCase.name, contractCase.run, contractCase.timeoutMs + 30_000);
});
