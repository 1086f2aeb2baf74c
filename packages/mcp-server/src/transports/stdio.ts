import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport as LegacyTransport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StdioEraRouter } from './era-stdio.js';
import { createIpythonMcpServer, type IpythonMcpServer, type IpythonMcpServerOptions } from '../server/index.js';

/** Largest JSON-RPC line the stdio transport buffers (the SDK's default of 10 MiB would close the transport). */
const STDIO_MAX_BUFFER_BYTES = 256 * 1024 * 1024;

/** A stdio transport on this process's stdin/stdout whose line buffer holds a 256 MiB message. */
export function stdioTransport(): StdioServerTransport {
  return new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: STDIO_MAX_BUFFER_BYTES });
}

/**
 * Joins every way a stdio server ends to one call of `close`: stdin EOF or close, the transport closing, a broken
 * stdout (a client that went away), and every SIGTERM/SIGINT — not just the first: a second signal during the
 * shutdown grace must not fall through to Node's default (exit at once), which would skip the answers of queued
 * and active requests and could leave processes behind. The signal handlers go once the close is done. Resolves
 * when `close` has finished.
 */
export function closeOnStdioEnd(server: { onclose?: (() => void) | undefined }, close: () => Promise<void>): Promise<void> {
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  const onSignal = (): void => void closeOnce();
  const closeOnce = (): Promise<void> => {
    closing ??= close().finally(() => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolveClosed();
    });
    return closing;
  };
  server.onclose = () => void closeOnce();
  process.stdin.once('end', () => void closeOnce());
  process.stdin.once('close', () => void closeOnce());
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.stdout.on('error', () => void closeOnce());
  return closed;
}

/**
 * Serves over this process's stdin/stdout, in the protocol era the client opens with (era-stdio.ts): 2025-era
 * `initialize` on the v1 SDK server, 2026-07-28 `server/discover` on the v2 one. Stdin EOF, a transport close,
 * SIGTERM and SIGINT all close the runtime (queued work ends as runtime_closed, the worker is stopped) and resolve
 * the returned promise.
 */
export async function serveStdio(options: IpythonMcpServerOptions): Promise<{ instance: IpythonMcpServer; closed: Promise<void> }> {
  const instance = createIpythonMcpServer(options);
  const closed = closeOnStdioEnd(instance.server, () => instance.close());
  await connectEras(instance, stdioTransport());
  return { instance, closed };
}

/**
 * Connects `instance` to one connection's transport in both eras (era-stdio.ts), and starts it. Every client message
 * passes the connection's detached cells first: a cancel may name a call that detached.
 */
export async function connectEras(instance: IpythonMcpServer, transport: LegacyTransport): Promise<StdioEraRouter> {
  const router = new StdioEraRouter(transport, instance.attachModern, undefined, (message) => instance.calls.observe(message));
  await instance.server.connect(router.legacy);
  await router.start();
  return router;
}
