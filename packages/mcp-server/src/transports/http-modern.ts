import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import { claimsModernEra } from './era-stdio.js';
import { writeWebResponse } from './http-exchange.js';
import { RequestJobs, type Namespace } from '../server/index.js';

/**
 * Protocol 2026-07-28 over `--http`: stateless, one exchange per POST, no `Mcp-Session-Id`, through the v2 SDK's
 * own handler (`createMcpHandler`, which answers `server/discover` and checks the per-request envelope). It sits
 * behind the same checks as the 2025-era sessions (Host/Origin, bearer token, body bound), on the same path's
 * namespace: `/mcp/NAME` keeps its namespace whichever era the client speaks. Each request gets a server of its own
 * from the namespace; all state (the runtime, the catalog, detached cells and tasks) lives in the namespace.
 *
 * Closing a POST's stream before its answer is written is its cancel (2026-07-28 sends no notifications/cancelled
 * over HTTP): it aborts the request, which stops a call until it detaches, and stops a call that detached while its
 * handle was being written through the POST's own {@link RequestJobs}. An answer written in full is the client's.
 */
export class ModernHttp {
  private readonly handlers = new Map<string, McpHttpHandler>();
  /** Each POST's detached cell by its request id, found by the SDK's per-request server factory from the Request. */
  private readonly calls = new WeakMap<Request, RequestJobs>();

  constructor(
    private readonly bodyLimit: number,
    private readonly onerror: (error: Error) => void,
  ) {}

  /** Whether a request without a session belongs here: one message (no batch) that claims 2026-07-28. */
  static claims(body: unknown): boolean {
    return typeof body === 'object' && body !== null && !Array.isArray(body) && claimsModernEra(body as JSONRPCMessage);
  }

  /** Answers one 2026-07-28 POST on `namespace`'s handler; the client going away aborts the request (cancellation). */
  async answer(namespace: Namespace, req: IncomingMessage, res: ServerResponse, raw: Buffer, body: unknown): Promise<void> {
    const handler = this.handlerFor(namespace);
    const gone = new AbortController();
    const calls = new RequestJobs();
    const requestId = (body as { id?: unknown }).id;
    res.once('close', () => {
      if (res.writableFinished) return;
      gone.abort();
      if (typeof requestId === 'string' || typeof requestId === 'number') calls.cancel(requestId, 'the client closed the stream');
    });
    const headers = new Headers();
    for (let index = 0; index + 1 < req.rawHeaders.length; index += 2) headers.append(req.rawHeaders[index] as string, req.rawHeaders[index + 1] as string);
    const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
    const request = new Request(url, { method: 'POST', headers, body: new Uint8Array(raw), signal: gone.signal });
    this.calls.set(request, calls);
    const response = await handler.fetch(request, { parsedBody: body });
    await writeWebResponse(response, res, false);
  }

  /** Closes every namespace's handler (its open subscription streams end). */
  async close(): Promise<void> {
    const open = [...this.handlers.values()];
    this.handlers.clear();
    await Promise.all(open.map((handler) => handler.close().catch(() => undefined)));
  }

  private handlerFor(namespace: Namespace): McpHttpHandler {
    let handler = this.handlers.get(namespace.name);
    if (handler === undefined) {
      handler = createMcpHandler(
        (context) => {
          // One server per request: attached while the request is served, released when the SDK closes it.
          const { server, release } = namespace.attachModern(context?.requestInfo === undefined ? undefined : this.calls.get(context.requestInfo));
          const previous = server.onclose;
          server.onclose = () => {
            previous?.();
            release();
          };
          return server;
        },
        { legacy: 'reject', onerror: this.onerror, maxRequestBodySize: this.bodyLimit },
      );
      this.handlers.set(namespace.name, handler);
    }
    return handler;
  }
}
