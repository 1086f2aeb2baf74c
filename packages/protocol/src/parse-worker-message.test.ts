import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WorkerMessageSchema } from './messages.js';
import { parseWorkerMessage } from './parse-worker-message.js';

const corpus = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../fixtures/protocol/messages.json', import.meta.url)), 'utf8'),
) as { messages: { name: string; from: string; message: Record<string, unknown> }[] };

// Variants of valid responses and events that break one rule each, so the hand-written fast path is held to
// exactly the zod schema's verdicts.
const base = {
  ok: { type: 'response', id: 3, ok: true, result: { status: 'ok' } },
  error: { type: 'response', id: 3, ok: false, error: { code: 'name_not_found', message: 'x', details: { name: 'y' } } },
  event: { type: 'event', id: 3, kind: 'stdout', text: 'hi' },
  toolCall: { type: 'tool_call', id: 3, call_id: 1, name: 'get_weather', arguments: { city: 'Oslo' } },
};
const variants: Record<string, unknown>[] = [
  base.ok,
  base.error,
  base.event,
  { ...base.ok, id: 0 },
  { ...base.ok, id: 1.5 },
  { ...base.ok, id: '3' },
  { ...base.ok, result: [] },
  { ...base.ok, result: null },
  { ...base.ok, extra: 1 },
  { ...base.ok, ok: 'true' },
  { ...base.ok, catalog_revision: 4 },
  { ...base.ok, catalog_revision: 0 },
  { ...base.ok, catalog_revision: -1 },
  { ...base.ok, catalog_revision: 1.5 },
  { ...base.ok, catalog_revision: '4' },
  { ...base.ok, catalog_revision: null },
  { ...base.error, catalog_revision: 7 },
  { ...base.error, catalog_revision: -7 },
  { ...base.error, id: null },
  { ...base.error, error: { code: '', message: 'x' } },
  { ...base.error, error: { code: 'x'.repeat(65), message: 'x' } },
  { ...base.error, error: { code: 'c', message: 1 } },
  { ...base.error, error: { code: 'c', message: 'm', details: [] } },
  { ...base.error, error: { code: 'c', message: 'm', extra: true } },
  { ...base.error, result: {} },
  { ...base.ok, catalog_revision: 4 },
  { ...base.ok, catalog_revision: 0 },
  { ...base.ok, catalog_revision: -1 },
  { ...base.ok, catalog_revision: 1.5 },
  { ...base.ok, catalog_revision: '4' },
  { ...base.ok, catalog_revision: null },
  { ...base.ok, catalog_revision: 2 ** 53 },
  { ...base.error, catalog_revision: 7 },
  { ...base.error, catalog_revision: -7 },
  { ...base.event, kind: 'stdin' },
  { ...base.event, text: 5 },
  { ...base.event, id: -1 },
  { ...base.event, extra: 'x' },
  base.toolCall,
  { ...base.toolCall, call_id: 0 },
  { ...base.toolCall, id: 2.5 },
  { ...base.toolCall, name: 7 },
  { ...base.toolCall, arguments: [] },
  { ...base.toolCall, arguments: null },
  { ...base.toolCall, extra: true },
  { type: 'response' },
  { type: 'event' },
  { type: 'tool_call' },
];

describe('parseWorkerMessage', () => {
  it.each(corpus.messages.filter((entry) => entry.from === 'worker').map((entry) => [entry.name, entry.message] as const))(
    'agrees with the zod schema on corpus message %s',
    (_name, message) => {
      expect(parseWorkerMessage(message) !== undefined).toBe(WorkerMessageSchema.safeParse(message).success);
    },
  );

  it('accepts an optional integer catalog_revision on both kinds of response (docs/protocol.md)', () => {
    expect(parseWorkerMessage({ ...base.ok, catalog_revision: 4 })).toBeDefined();
    expect(parseWorkerMessage({ ...base.error, catalog_revision: 0 })).toBeDefined();
    expect(parseWorkerMessage({ ...base.ok, catalog_revision: -1 })).toBeUndefined();
  });

  it.each(variants.map((message, index) => [index, message] as const))('agrees with the zod schema on variant %i', (_index, message) => {
    expect(parseWorkerMessage(message) !== undefined).toBe(WorkerMessageSchema.safeParse(message).success);
  });
});
