// Any new export here becomes public API of @ipython-mcp/worker-supervisor.
export { createStderrLogger, silentLogger } from './logger.js';
export type { LogLevel, Logger } from './logger.js';
export { PausableTimer } from './pausable-timer.js';
export { chooseInterpreter, environmentPython, managedEnvironmentDirectory, probePython, workerIpythonDirectory } from './python-interpreter.js';
export type { InterpreterChoice } from './python-interpreter.js';
export { Runtime } from './runtime.js';
export type {
  EpochChange,
  InterruptionKind,
  NamespaceOutcome,
  OperationFailure,
  OperationMeta,
  OperationOutcome,
  RunOptions,
  RuntimeOptions,
  RuntimeState,
  RuntimeStatus,
} from './runtime.js';
export { EXIT_NO_IPYTHON, WorkerExitedError, WorkerProcess, WorkerStartupError } from './worker-process.js';
export type { RequestHooks, ToolAnswer, WorkerInfo, WorkerReply, WorkerSpawnOptions } from './worker-process.js';
export { workerBootstrapCode, workerSourceDirectory } from './worker-source.js';
