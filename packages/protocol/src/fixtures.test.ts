import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, RETRYABLE_ERROR_CODES } from './error-codes.js';
import { FrameDecoder, encodeFrame } from './frame-codec.js';
import { ParentMessageSchema, WorkerMessageSchema } from './messages.js';
import { DEFAULT_WORKER_LIMITS, workerLimits } from './settings.js';

const fixtures = fileURLToPath(new URL('../../../fixtures/protocol/', import.meta.url));
const load = (name: string): any => JSON.parse(readFileSync(fixtures + name, 'utf8'));

describe('shared protocol corpus', () => {
  const { messages } = load('messages.json') as { messages: { name: string; from: string; valid: boolean; message: unknown }[] };
  it.each(messages.map((entry) => [entry.name, entry] as const))('%s validates as the corpus says', (_name, entry) => {
    const schema = entry.from === 'worker' ? WorkerMessageSchema : ParentMessageSchema;
    expect(schema.safeParse(entry.message).success).toBe(entry.valid);
  });

  interface Frame {
    name: string;
    codec: string;
    hex: string;
    message: unknown;
    limit?: number;
    error?: string;
    then?: unknown;
  }
  const { frames, bad_frames: badFrames } = load('frames.json') as { frames: Frame[]; bad_frames: Frame[] };
  it.each(frames.map((frame) => [frame.name, frame] as const))('%s decodes to its message', (_name, frame) => {
    const decoded = new FrameDecoder(1 << 20).push(Buffer.from(frame.hex, 'hex'));
    expect(decoded).toHaveLength(1);
    expect(decoded[0]).toEqual({ ok: true, message: frame.message });
    if (frame.codec === 'json') {
      expect(encodeFrame(frame.message, 'json', 1 << 20).toString('hex')).toBe(frame.hex);
    } else {
      const roundTrip = new FrameDecoder(1 << 20).push(encodeFrame(frame.message, 'msgpack', 1 << 20));
      expect(roundTrip[0]).toEqual({ ok: true, message: frame.message });
    }
  });

  it.each(badFrames.map((frame) => [frame.name, frame] as const))('%s is a structured frame error', (_name, frame) => {
    const decoded = new FrameDecoder(frame.limit ?? 1 << 20).push(Buffer.from(frame.hex, 'hex'));
    expect(decoded[0]).toMatchObject({ ok: false, error: { code: frame.error } });
    if (frame.then) expect(decoded[1]).toEqual({ ok: true, message: frame.then });
  });

  it('error codes match the list both languages read', () => {
    const shared = load('error-codes.json');
    expect([...ERROR_CODES]).toEqual(shared.codes);
    expect([...RETRYABLE_ERROR_CODES].sort()).toEqual([...shared.retryable].sort());
  });

  it('worker limits go on the wire by the names and with the defaults of worker-limits.json', () => {
    const shared = load('worker-limits.json').limits as Record<string, { default: number }>;
    expect(workerLimits(DEFAULT_WORKER_LIMITS)).toEqual(Object.fromEntries(Object.entries(shared).map(([name, entry]) => [name, entry.default])));
  });
});

describe('frame codec', () => {
  it('refuses to encode an oversized message', () => {
    expect(() => encodeFrame({ type: 'request', text: 'x'.repeat(100) }, 'json', 64)).toThrowError(
      expect.objectContaining({ code: 'message_too_large' }),
    );
  });

  it('reassembles frames split at every byte and skips oversized ones without buffering them', () => {
    const good = encodeFrame({ type: 'shutdown' }, 'msgpack', 1024);
    const big = encodeFrame({ type: 'event', text: 'y'.repeat(5000) }, 'json', 1 << 20);
    const stream = Buffer.concat([good, big, good]);
    const decoder = new FrameDecoder(1024);
    const out = [];
    for (const byte of stream) out.push(...decoder.push(Buffer.from([byte])));
    expect(out.map((frame) => (frame.ok ? 'ok' : frame.error.code))).toEqual(['ok', 'message_too_large', 'ok']);
  });
});
