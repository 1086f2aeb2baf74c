// Any new export here becomes public API of @ipython-mcp/worker-supervisor.
export { createStderrLogger, silentLogger } from './logger.js';
export type { LogLevel, Logger } from './logger.js';
export { DEFAULT_MEMORY_SHARE, MAX_MEMORY_LIMIT_MB, defaultMemoryLimitMb, MEMORY_BASELINE_DELAY_MS, MEMORY_WATCH_INTERVAL_MS, OperationMemoryWatch, WorkerMemory, describeMemoryStop, memoryBounds, toMb } from './memory-watch.js';
export type { MemoryBounds, MemoryStop, MemoryTrigger, WatchedProcess } from './memory-watch.js';
export { PausableTimer } from './pausable-timer.js';
export { ProcessTreeMemory, procAvailable } from './process-tree-memory.js';
export { chooseInterpreter, environmentPython, managedEnvironmentDirectory, probePython, workerIpythonDirectory } from './python-interpreter.js';
export type { InterpreterChoice } from './python-interpreter.js';
export { Runtime } from './runtime.js';
export { RUNTIME_DEFAULTS, resolveRuntimeOptions } from './runtime-options.js';
export type { ResolvedRuntimeOptions, RuntimeOptions, WorkerConfiguration } from './runtime-options.js';
export type {
  AfterInterruptPolicy,
  EpochChange,
  InterruptionKind,
  NamespaceOutcome,
  OperationFailure,
  OperationMeta,
  OperationOutcome,
  RunOptions,
  RuntimeState,
  RuntimeStatus,
} from './runtime.js';
export { EXIT_NO_IPYTHON, WorkerExitedError, WorkerProcess, WorkerStartupError } from './worker-process.js';
export type { RequestHooks, ToolAnswer, WorkerHandle, WorkerInfo, WorkerReply, WorkerSpawnOptions } from './worker-process.js';
export { workerBootstrapCode, workerSourceDirectory } from './worker-source.js';
export { ChannelWorker } from './channel-worker.js';
export type { ChannelWorkerOptions } from './channel-worker.js';
export { InMemoryChannel, StreamChannel } from './worker-channel.js';
export type { WorkerChannel } from './worker-channel.js';
