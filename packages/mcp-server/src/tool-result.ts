import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OperationFailure, OperationMeta } from '@ipython-mcp/worker-supervisor';

/** Runtime metadata attached to every namespace result: control-plane facts only. */
export function runtimeMeta(meta: OperationMeta): Record<string, unknown> {
  return {
    request_id: meta.requestId,
    sequence: meta.sequence,
    epoch: meta.epoch,
    queue_wait_ms: meta.queueWaitMs,
    duration_ms: meta.durationMs,
    interruption: meta.interruption,
    namespace: meta.namespace,
  };
}

/** A successful tool result: structured content plus the same JSON as text. */
export function success(structured: Record<string, unknown>, extra: CallToolResult['content'] = []): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }, ...extra], structuredContent: structured };
}

/** A structured failure: `isError`, the error object and the runtime metadata, never user values. */
export function failure(error: OperationFailure, meta?: OperationMeta, extra: Record<string, unknown> = {}): CallToolResult {
  const structured: Record<string, unknown> = {
    ...extra,
    error: {
      code: error.code,
      message: error.message,
      ...(error.retryable !== undefined ? { retryable: error.retryable } : {}),
      ...(error.retryAfterMs !== undefined ? { retry_after_ms: error.retryAfterMs } : {}),
      ...(error.details !== undefined ? { details: error.details } : {}),
    },
  };
  if (meta) structured.runtime = runtimeMeta(meta);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}
