// Any new export here becomes public API of @ipython-mcp/worker-supervisor.
export { createStderrLogger, silentLogger } from './logger.js';
export type { LogLevel, Logger } from './logger.js';
export { MAX_MEMORY_LIMIT_MB, defaultMemoryLimitMb } from './memory-watch.js';
export type { MemoryProbe, MemorySampler, MemoryTrigger } from './memory-watch.js';
export { chooseInterpreter, environmentPython, managedEnvironmentDirectory, probePython } from './python-interpreter.js';
export type { InterpreterChoice } from './python-interpreter.js';
export { Runtime } from './runtime.js';
export { RUNTIME_DEFAULTS, statePathFor } from './runtime-options.js';
export type { ResolvedRuntimeOptions, RuntimeOptions, StateOptions, WorkerConfiguration } from './runtime-options.js';
export type {
  AfterInterruptPolicy,
  EpochChange,
  InterruptionKind,
  OtherClientAction,
  NamespaceOutcome,
  OperationFailure,
  OperationMeta,
  OperationOutcome,
  RunOptions,
  RuntimeState,
  RuntimeStatus,
  ToolAnswer,
} from './runtime-types.js';
export { EXIT_NO_IPYTHON, WorkerExitedError, WorkerProcess, WorkerStartupError } from './worker-process.js';
export { knownFailure } from './worker-connection.js';
export type { RequestHooks, SharedKernelFacts, WorkerHandle, WorkerInfo, WorkerReply } from './worker-handle.js';
export type { WorkerSpawnOptions } from './worker-process.js';
export { WORKER_CAPABILITIES, capabilityProblem } from './worker-backend.js';
export type { WorkerBackend, WorkerCapability, WorkerStartOptions } from './worker-backend.js';
export { localProcessBackend } from './local-process-backend.js';
export { CONTRACT_CELLS, workerBackendContract } from './worker-backend-contract.js';
export type { WorkerBackendContractCase, WorkerBackendUnderTest } from './worker-backend-contract.js';
export { workerSourceDirectory } from './worker-source.js';
export type { LaunchCommand, WorkerLaunch } from './worker-launch.js';
export { ChannelWorker } from './channel-worker.js';
export type { ChannelWorkerOptions } from './channel-worker.js';
export { InMemoryChannel, StreamChannel } from './worker-channel.js';
export type { WorkerChannel } from './worker-channel.js';
