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
  const close = (): Promise<void> => {
    closing ??= instance.close().finally(resolveClosed);
    return closing;
  };
  instance.server.onclose = () => void close();
  process.stdin.once('end', () => void close());
  process.stdin.once('close', () => void close());
  process.once('SIGTERM', () => void close());
  process.once('SIGINT', () => void close());
  // A client that goes away leaves stdout broken: that is a close, not a crash.
  process.stdout.on('error', () => void close());
  await instance.server.connect(transport);
  return { instance, closed };
}
