// Any new export here becomes public API of @ipython-mcp/protocol.
export { IMAGE_MIME_TYPES, MAX_IMAGE_BASE64_CHARS, MAX_INT32, PROTOCOL_VERSION, RUNTIME_NAME_LIST, RUN_CODE_DROPPED_FIELDS } from './constants.js';
export { ERROR_CODES, RETRYABLE_ERROR_CODES, isErrorCode } from './error-codes.js';
export type { ErrorCode } from './error-codes.js';
export {
  CODEC_JSON,
  CODEC_MSGPACK,
  FrameDecoder,
  FrameError,
  codecByte,
  decodeBody,
  encodeFrame,
} from './frame-codec.js';
export type { DecodedFrame } from './frame-codec.js';
export {
  CodecNameSchema,
  ConfigureSchema,
  EventSchema,
  HelloSchema,
  InterruptSchema,
  ParentMessageSchema,
  ProtocolErrorSchema,
  ReadySchema,
  RequestSchema,
  ResponseSchema,
  ShutdownSchema,
  StartupFailedSchema,
  StateReportMessageSchema,
  StateReportSchema,
  ToolCallSchema,
  ToolResultSchema,
  WireErrorSchema,
  WorkerMessageSchema,
} from './messages.js';
export type {
  CodecName,
  Configure,
  Hello,
  ParentMessage,
  Ready,
  Request,
  Response,
  StateReport,
  ToolCall,
  ToolResult,
  WireError,
  WorkerEvent,
  WorkerMessage,
} from './messages.js';
export {
  OPERATION_FACTS,
  OPERATION_NAMES,
  OPERATIONS,
  checkOperationParams,
  checkOperationResult,
  isOperationName,
  operationsJsonSchema,
} from './operations.js';
export type { CatalogEffect, Display, ExecuteResult, OperationFacts, OperationName, OperationParams, OperationResult, Registration, RunCodeResult } from './operations.js';
export { parseWorkerMessage } from './parse-worker-message.js';
export { DEFAULT_WORKER_LIMITS, workerLimits } from './settings.js';
export type { WorkerLimits } from './settings.js';
export { ValueJsonError, loneSurrogatePath, toPythonJson } from './value-json.js';
