import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/protocol, pinned: adding or removing one is a deliberate change of public API (update
// this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/protocol public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'CODEC_JSON',
      'CODEC_MSGPACK',
      'CodecNameSchema',
      'ConfigureSchema',
      'DEFAULT_WORKER_LIMITS',
      'ERROR_CODES',
      'EventSchema',
      'FrameDecoder',
      'FrameError',
      'HelloSchema',
      'IMAGE_MIME_TYPES',
      'InterruptSchema',
      'MAX_IMAGE_BASE64_CHARS',
      'MAX_INT32',
      'OPERATIONS',
      'OPERATION_FACTS',
      'OPERATION_NAMES',
      'PROTOCOL_VERSION',
      'ParentMessageSchema',
      'ProtocolErrorSchema',
      'RETRYABLE_ERROR_CODES',
      'RUNTIME_NAME_LIST',
      'RUN_CODE_DROPPED_FIELDS',
      'ReadySchema',
      'RequestSchema',
      'ResponseSchema',
      'ShutdownSchema',
      'StartupFailedSchema',
      'StateReportMessageSchema',
      'StateReportSchema',
      'ToolCallSchema',
      'ToolResultSchema',
      'ValueJsonError',
      'WireErrorSchema',
      'WorkerMessageSchema',
      'checkOperationParams',
      'checkOperationResult',
      'codecByte',
      'decodeBody',
      'encodeFrame',
      'isErrorCode',
      'isOperationName',
      'loneSurrogatePath',
      'operationsJsonSchema',
      'parseWorkerMessage',
      'toPythonJson',
      'workerLimits',
    ]);
  });
});
