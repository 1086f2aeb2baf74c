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

/**
 * `structured` as JSON text, and the structure the client will parse from it. The worker never sends a value
 * JSON cannot hold (docs/protocol.md, "Value contract"); should a BigInt still arrive, it is written as its digits
 * rather than failing the whole response (`JSON.stringify` throws on BigInt).
 */
function jsonText(structured: Record<string, unknown>): { text: string; structured: Record<string, unknown> } {
  try {
    return { text: JSON.stringify(structured), structured };
  } catch {
    const text = JSON.stringify(structured, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
    return { text, structured: JSON.parse(text) as Record<string, unknown> };
  }
}

/** A successful tool result: structured content plus the same JSON as text. */
export function success(structured: Record<string, unknown>, extra: CallToolResult['content'] = []): CallToolResult {
  const json = jsonText(structured);
  return { content: [{ type: 'text', text: json.text }, ...extra], structuredContent: json.structured };
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
  const json = jsonText(structured);
  return { isError: true, content: [{ type: 'text', text: json.text }], structuredContent: json.structured };
}

/** Largest image (base64 characters) returned as MCP image content; the worker bounds images the same way. */
export const MAX_IMAGE_BASE64_CHARS = 2 * 1024 * 1024;
const IMAGE_MIME_TYPES = ['image/png', 'image/jpeg'] as const;

type ImageItem = { type: 'image'; data: string; mimeType: string };

/**
 * An execute result. Each display bundle and the value's `images` bundle contributes its first PNG or JPEG as MCP
 * `image` content; in the structured copy (and so in the text copy) that base64 is replaced by a short reference,
 * so a model never reads an image as text and the payload is not doubled.
 */
export function executeResult(structured: Record<string, unknown>, isError: boolean): CallToolResult {
  const images: ImageItem[] = [];
  const take = (bundle: unknown): unknown => {
    if (bundle === null || typeof bundle !== 'object' || Array.isArray(bundle)) return bundle;
    const copy: Record<string, unknown> = { ...(bundle as Record<string, unknown>) };
    for (const mimeType of IMAGE_MIME_TYPES) {
      const data = copy[mimeType];
      if (typeof data !== 'string' || data.length > MAX_IMAGE_BASE64_CHARS) continue;
      images.push({ type: 'image', data: data.replace(/\s+/g, ''), mimeType });
      copy[mimeType] = `[image ${images.length}: ${mimeType}, ${data.length} base64 characters, returned as MCP image content]`;
      break;
    }
    return copy;
  };
  const shown: Record<string, unknown> = { ...structured };
  if (Array.isArray(structured.displays)) {
    shown.displays = structured.displays.map((display: unknown) =>
      display !== null && typeof display === 'object' && 'data' in display
        ? { ...(display as Record<string, unknown>), data: take((display as { data: unknown }).data) }
        : display,
    );
  }
  const value = structured.result;
  if (value !== null && typeof value === 'object' && 'images' in value) {
    shown.result = { ...(value as Record<string, unknown>), images: take((value as { images: unknown }).images) };
  }
  const result = success(shown, images);
  return isError ? { ...result, isError: true } : result;
}
