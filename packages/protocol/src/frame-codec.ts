import { Packr, Unpackr } from 'msgpackr';
import type { CodecName } from './messages.js';

/** Codec byte of a JSON frame. */
export const CODEC_JSON = 1;
/** Codec byte of a msgpack frame. */
export const CODEC_MSGPACK = 2;
const HEADER_BYTES = 4;

// Plain maps as JS objects, no records/structures extension: the Python side must read every frame.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
// int64AsType 'auto': Python writes every int beyond 32 bits as a 64-bit msgpack int; those within ±2^53 become
// numbers (never a BigInt, which JSON.stringify refuses). The worker sends nothing larger (docs/protocol.md).
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'auto' as 'bigint' }); // 'auto' is missing from msgpackr's types

/** Why a frame could not be written or read. */
export class FrameError extends Error {
  /** `message_too_large` or `protocol_error`. */
  readonly code: 'message_too_large' | 'protocol_error';
  /** Frame size in bytes, when known. */
  readonly size: number | undefined;
  constructor(code: 'message_too_large' | 'protocol_error', message: string, size?: number) {
    super(message);
    this.name = 'FrameError';
    this.code = code;
    this.size = size;
  }
}

/** The codec byte for a codec name. */
export function codecByte(codec: CodecName): number {
  return codec === 'msgpack' ? CODEC_MSGPACK : CODEC_JSON;
}

/**
 * Encodes one message as a frame: uint32 BE length (codec byte + payload), codec byte, payload.
 * Throws {@link FrameError} `message_too_large` when the frame would exceed `limit` bytes.
 */
export function encodeFrame(message: unknown, codec: CodecName, limit: number): Buffer {
  const payload = codec === 'msgpack' ? packr.pack(message) : Buffer.from(JSON.stringify(message), 'utf8');
  const size = payload.length + 1;
  if (size > limit) {
    throw new FrameError('message_too_large', `message of ${size} bytes exceeds the ${limit}-byte IPC limit`, size);
  }
  const frame = Buffer.allocUnsafe(HEADER_BYTES + size);
  frame.writeUInt32BE(size, 0);
  frame[HEADER_BYTES] = codecByte(codec);
  payload.copy(frame, HEADER_BYTES + 1);
  return frame;
}

/** Decodes a frame body (codec byte + payload). */
export function decodeBody(body: Buffer): unknown {
  if (body.length === 0) {
    throw new FrameError('protocol_error', 'empty frame');
  }
  const codec = body[0];
  const payload = body.subarray(1);
  try {
    if (codec === CODEC_JSON) {
      return JSON.parse(payload.toString('utf8'));
    }
    if (codec === CODEC_MSGPACK) {
      return unpackr.unpack(payload);
    }
  } catch (error) {
    throw new FrameError('protocol_error', `undecodable frame payload: ${(error as Error).name}`);
  }
  throw new FrameError('protocol_error', `unknown codec byte ${String(codec)}`);
}

/** What {@link FrameDecoder.push} yields: a decoded message, or a frame that could not be used. */
export type DecodedFrame = { ok: true; message: unknown } | { ok: false; error: FrameError };

/**
 * Incremental frame reader. Oversized frames are skipped byte for byte (never buffered), so the stream stays in
 * sync and memory stays bounded by the limit.
 */
export class FrameDecoder {
  private readonly limit: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private skipRemaining = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Feeds bytes; returns every complete frame now available, in order. */
  push(chunk: Buffer): DecodedFrame[] {
    const out: DecodedFrame[] = [];
    let data = chunk;
    if (this.skipRemaining > 0) {
      const skipped = Math.min(this.skipRemaining, data.length);
      this.skipRemaining -= skipped;
      data = data.subarray(skipped);
      if (data.length === 0) return out;
    }
    this.chunks.push(data);
    this.buffered += data.length;
    for (;;) {
      if (this.buffered < HEADER_BYTES) break;
      const head = this.peek(HEADER_BYTES);
      const size = head.readUInt32BE(0);
      if (size === 0) {
        this.take(HEADER_BYTES);
        out.push({ ok: false, error: new FrameError('protocol_error', 'zero-length frame') });
        continue;
      }
      if (size > this.limit) {
        this.take(HEADER_BYTES);
        const skipped = Math.min(size, this.buffered);
        this.take(skipped);
        this.skipRemaining = size - skipped;
        out.push({
          ok: false,
          error: new FrameError('message_too_large', `frame of ${size} bytes exceeds the ${this.limit}-byte IPC limit`, size),
        });
        if (this.skipRemaining > 0) break;
        continue;
      }
      if (this.buffered < HEADER_BYTES + size) break;
      this.take(HEADER_BYTES);
      const body = this.take(size);
      try {
        out.push({ ok: true, message: decodeBody(body) });
      } catch (error) {
        out.push({ ok: false, error: error as FrameError });
      }
    }
    return out;
  }

  private peek(count: number): Buffer {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= count) return first.subarray(0, count);
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined.subarray(0, count);
  }

  private take(count: number): Buffer {
    const joined = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    const taken = joined.subarray(0, count);
    const rest = joined.subarray(count);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered -= count;
    return taken;
  }
}
