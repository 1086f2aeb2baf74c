import type { Readable, Writable } from 'node:stream';
import { FrameDecoder, encodeFrame, type CodecName, type FrameError } from '@ipython-mcp/protocol';

/**
 * A message channel to one worker, like the MCP SDK's `Transport`: it moves whole decoded messages and knows
 * nothing about requests, handshakes or deadlines. {@link StreamChannel} frames them over the worker's fd 3/4
 * pipes; {@link InMemoryChannel} links two ends in one process for unit tests.
 */
export interface WorkerChannel {
  /**
   * Sends one message. Throws a `message_too_large` {@link FrameError} when it cannot be framed; the message is
   * then not sent at all.
   */
  send(message: unknown): void;
  /** Switches the codec of later frames (after the handshake negotiated one). */
  setCodec(codec: CodecName): void;
  /** The codec later frames use. */
  readonly codec: CodecName;
  /** Each decoded message the other end sent. */
  onmessage?: ((message: unknown) => void) | undefined;
  /** A frame that could not be read (too large, bad codec, undecodable body): it matches no request. */
  onerror?: ((error: FrameError) => void) | undefined;
  /** Ends the sending side: the other end sees end of file. */
  close(): void;
}

/** A {@link WorkerChannel} over a pair of byte streams: length-prefixed frames, msgpack or JSON. */
export class StreamChannel implements WorkerChannel {
  onmessage?: ((message: unknown) => void) | undefined;
  onerror?: ((error: FrameError) => void) | undefined;
  private currentCodec: CodecName = 'json';
  private readonly decoder: FrameDecoder;

  constructor(
    private readonly output: Writable,
    input: Readable,
    private readonly maxMessageBytes: number,
  ) {
    this.decoder = new FrameDecoder(maxMessageBytes);
    // A dead pipe surfaces as the process's exit, which the spawner reports; its stream errors add nothing.
    output.on('error', () => undefined);
    input.on('error', () => undefined);
    input.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  get codec(): CodecName {
    return this.currentCodec;
  }

  setCodec(codec: CodecName): void {
    this.currentCodec = codec;
  }

  send(message: unknown): void {
    this.output.write(encodeFrame(message, this.currentCodec, this.maxMessageBytes));
  }

  close(): void {
    this.output.end();
  }

  private onData(chunk: Buffer): void {
    for (const frame of this.decoder.push(chunk)) {
      if (frame.ok) this.onmessage?.(frame.message);
      else this.onerror?.(frame.error);
    }
  }
}

/**
 * Two linked in-process {@link WorkerChannel} ends, like the MCP SDK's `InMemoryTransport.createLinkedPair()`.
 * A message is delivered to the other end on a later microtask as a structured clone, so neither side can share
 * objects with the other, as across a real pipe.
 */
export class InMemoryChannel implements WorkerChannel {
  onmessage?: ((message: unknown) => void) | undefined;
  onerror?: ((error: FrameError) => void) | undefined;
  /** Called once when the other end closes its sending side. */
  onclose?: (() => void) | undefined;
  /** Every message this end has sent, in order (for tests). */
  readonly sent: unknown[] = [];
  private peer: InMemoryChannel | undefined;
  private currentCodec: CodecName = 'json';
  private closed = false;

  /** A pair of ends: what one sends, the other receives. */
  static createLinkedPair(): [InMemoryChannel, InMemoryChannel] {
    const left = new InMemoryChannel();
    const right = new InMemoryChannel();
    left.peer = right;
    right.peer = left;
    return [left, right];
  }

  get codec(): CodecName {
    return this.currentCodec;
  }

  setCodec(codec: CodecName): void {
    this.currentCodec = codec;
  }

  send(message: unknown): void {
    if (this.closed) return;
    const copy = structuredClone(message);
    this.sent.push(copy);
    const peer = this.peer;
    queueMicrotask(() => peer?.onmessage?.(copy));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const peer = this.peer;
    queueMicrotask(() => peer?.onclose?.());
  }
}
