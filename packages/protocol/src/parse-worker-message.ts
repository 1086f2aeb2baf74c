import { WorkerMessageSchema, type WorkerMessage } from './messages.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

/** An optional count (`catalog_revision`, a tool call's `waited_us`; docs/protocol.md): absent, or a non-negative safe integer. */
function isOptionalCount(value: unknown): boolean {
  return value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0);
}

function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

const RESPONSE_OK_KEYS = new Set(['type', 'id', 'ok', 'result', 'catalog_revision']);
const RESPONSE_ERROR_KEYS = new Set(['type', 'id', 'ok', 'error', 'catalog_revision']);
const ERROR_KEYS = new Set(['code', 'message', 'details']);
const EVENT_KEYS = new Set(['type', 'id', 'kind', 'text']);
const TOOL_CALL_KEYS = new Set(['type', 'id', 'call_id', 'name', 'arguments', 'waited_us']);

/**
 * Validates a decoded worker message. Responses, stream events and nested tool calls, the messages on hot paths,
 * are checked by hand with exactly the rules of their strict zod schemas (a test holds the two to the same
 * verdicts); everything else goes through zod. Returns undefined for a message that does not validate.
 */
export function parseWorkerMessage(raw: unknown): WorkerMessage | undefined {
  if (isPlainObject(raw)) {
    if (raw.type === 'response') {
      if (
        raw.ok === true &&
        isRequestId(raw.id) &&
        isPlainObject(raw.result) &&
        hasOnlyKeys(raw, RESPONSE_OK_KEYS) &&
        isOptionalCount(raw.catalog_revision)
      ) {
        return raw as WorkerMessage;
      }
      const error = raw.error;
      if (
        raw.ok === false &&
        (raw.id === null || isRequestId(raw.id)) &&
        isPlainObject(error) &&
        hasOnlyKeys(raw, RESPONSE_ERROR_KEYS) &&
        isOptionalCount(raw.catalog_revision) &&
        hasOnlyKeys(error, ERROR_KEYS) &&
        typeof error.code === 'string' &&
        error.code.length >= 1 &&
        error.code.length <= 64 &&
        typeof error.message === 'string' &&
        (error.details === undefined || isPlainObject(error.details))
      ) {
        return raw as WorkerMessage;
      }
      return undefined;
    }
    if (raw.type === 'tool_call') {
      return isRequestId(raw.id) &&
        isRequestId(raw.call_id) &&
        typeof raw.name === 'string' &&
        isPlainObject(raw.arguments) &&
        isOptionalCount(raw.waited_us) &&
        hasOnlyKeys(raw, TOOL_CALL_KEYS)
        ? (raw as WorkerMessage)
        : undefined;
    }
    if (raw.type === 'event') {
      return isRequestId(raw.id) &&
        (raw.kind === 'stdout' || raw.kind === 'stderr') &&
        typeof raw.text === 'string' &&
        hasOnlyKeys(raw, EVENT_KEYS)
        ? (raw as WorkerMessage)
        : undefined;
    }
  }
  const parsed = WorkerMessageSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
