import type { Transport as LegacyTransport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Server as ModernServer, Transport as ModernTransport } from '@modelcontextprotocol/server';
import { serveStdio as serveModernStdio } from '@modelcontextprotocol/server/stdio';

/** The `_meta` key by which a 2026-07-28 message names its protocol revision (the per-request envelope). */
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/** Which protocol era a stdio connection speaks: not decided yet, 2025-era (`initialize`), or 2026-07-28. */
export type StdioEra = 'open' | 'legacy' | 'modern';

/**
 * Whether a message claims the 2026-07-28 era: `server/discover`, or a message whose `_meta` carries the
 * protocol-version envelope key. Everything else (`initialize` first of all) is 2025-era.
 */
export function claimsModernEra(message: JSONRPCMessage): boolean {
  if (!('method' in message)) return false;
  if (message.method === 'server/discover') return true;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return typeof meta?.[PROTOCOL_VERSION_META] === 'string';
}

/** One side of the router: a transport that the router feeds and that writes through the real one. */
class SideTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  private readonly queued: JSONRPCMessage[] = [];
  private started = false;
  closed = false;

  constructor(
    private readonly write: (message: JSONRPCMessage) => Promise<void>,
    private readonly onClose: () => Promise<void>,
  ) {}

  async start(): Promise<void> {
    this.started = true;
    for (const message of this.queued.splice(0)) this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.onClose();
    this.onclose?.();
  }

  /** A message from the client: handed on now, or once the side has started (the SDK starts it asynchronously). */
  deliver(message: JSONRPCMessage): void {
    if (this.started && this.onmessage !== undefined) this.onmessage(message);
    else this.queued.push(message);
  }

  /** The real transport closed: tell the side once. */
  ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

/**
 * Serves both protocol eras on one stdio connection. The v1 SDK server (2025-era, `initialize`, 2025-11-25 tasks)
 * is connected at once; a 2026-07-28 opening (`server/discover`, or a request with the version envelope) goes to a
 * v2 SDK server made by `modern` on first use, through the v2 SDK's own stdio entry, which answers discovery and
 * the per-request envelope. The era is pinned by the first message that is not `server/discover`: a client whose
 * discovery found no common revision and falls back to `initialize` gets the 2025-era server.
 */
export class StdioEraRouter {
  private state: StdioEra = 'open';
  readonly legacy: SideTransport;
  private readonly modernSide: SideTransport;
  private modernStarted = false;

  constructor(
    private readonly real: LegacyTransport,
    private readonly modern: () => ModernServer,
    private readonly onerror: (error: Error) => void = () => undefined,
    /** Sees every message from the client before either side does (the connection's RequestJobs). */
    private readonly observe?: (message: JSONRPCMessage) => void,
  ) {
    const write = (message: JSONRPCMessage) => this.real.send(message);
    const closeReal = () => this.real.close();
    this.legacy = new SideTransport(write, closeReal);
    // A modern side given up for a legacy fallback closes alone; the connection goes on.
    this.modernSide = new SideTransport(write, () => (this.state === 'legacy' ? Promise.resolve() : closeReal()));
    real.onmessage = (message) => this.route(message);
    real.onclose = () => {
      this.legacy.ended();
      this.modernSide.ended();
    };
    real.onerror = (error) => {
      this.legacy.onerror?.(error);
      this.modernSide.onerror?.(error);
    };
  }

  /** The era this connection speaks ('open' until decided). */
  get era(): StdioEra {
    return this.state;
  }

  /** Starts reading the real transport. */
  start(): Promise<void> {
    return this.real.start();
  }

  private route(message: JSONRPCMessage): void {
    this.observe?.(message);
    if (this.state === 'legacy') return this.legacy.deliver(message);
    if (this.state === 'modern') return this.modernSide.deliver(message);
    if (!claimsModernEra(message)) {
      this.state = 'legacy';
      if (this.modernStarted) void this.modernSide.close();
      return this.legacy.deliver(message);
    }
    if (!('method' in message && message.method === 'server/discover')) this.state = 'modern';
    if (!this.modernStarted) {
      this.modernStarted = true;
      serveModernStdio(this.modern, { transport: this.modernSide as unknown as ModernTransport, legacy: 'reject', onerror: this.onerror });
    }
    this.modernSide.deliver(message);
  }
}
