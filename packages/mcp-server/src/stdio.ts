import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createIpythonMcpServer, type IpythonMcpServer, type IpythonMcpServerOptions } from './server.js';

/** Largest JSON-RPC line the stdio transport buffers (the SDK's default of 10 MiB would close the transport). */
const STDIO_MAX_BUFFER_BYTES = 256 * 1024 * 1024;

/**
 * Serves over this process's stdin/stdout. Stdin EOF, a transport close, SIGTERM and SIGINT all close the
 * runtime (queued work ends as runtime_closed, the worker is stopped) and resolve the returned promise.
 */
export async function serveStdio(options: IpythonMcpServerOptions): Promise<{ instance: IpythonMcpServer; closed: Promise<void> }> {
  const instance = createIpythonMcpServer(options);
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: STDIO_MAX_BUFFER_BYTES });
  let closing: Promise<void> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  // Every SIGTERM/SIGINT, not just the first, joins the one graceful close: a second signal during the shutdown
  // grace must not fall through to Node's default (exit at once), which would skip the runtime_closed answers of
  // queued and active requests and could leave the worker behind. The handlers go once the close is done.
  const onSignal = (): void => void close();
  const close = (): Promise<void> => {
    closing ??= instance.close().finally(() => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolveClosed();
    });
    return closing;
  };
  instance.server.onclose = () => void close();
  process.stdin.once('end', () => void close());
  process.stdin.once('close', () => void close());
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // A client that goes away leaves stdout broken: that is a close, not a crash.
  process.stdout.on('error', () => void close());
  await instance.server.connect(transport);
  return { instance, closed };
}
