import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isLoopbackHost, isWildcardAddress, serveHttp, type HttpServeOptions, type HttpTls, type IpythonMcpServerOptions, type Settings } from '@ipython-mcp/mcp-server';
import { managedEnvironmentDirectory, type Logger } from '@ipython-mcp/worker-supervisor';
import { HttpSettingError, loadTls, type HttpRequest } from './http-request.js';

/** Where `--http` listens. */
export interface HttpAddress {
  host: string;
  port: number;
}

/** `[HOST:]PORT` (HOST may be `[v6]`) -> address, or a message saying what is wrong. */
export function parseHttpAddress(text: string): HttpAddress | string {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[2]);
  if (match === null || !Number.isInteger(port) || port > 65_535) return `--http must be [HOST:]PORT (e.g. 8765 or 127.0.0.1:8765), got ${JSON.stringify(text.slice(0, 100))}`;
  const host = (match[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/** The token file: in ipython-mcp's own home, beside the managed environment. */
export function tokenFilePath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return join(dirname(managedEnvironmentDirectory(env)), 'http-token');
}

/**
 * The bearer token: IPYTHON_MCP_HTTP_TOKEN, else the token file, else a new 256-bit token written to that file
 * (mode 0600). The file is kept across runs, so a client configured with it keeps working after a restart.
 */
export function httpToken(env: Readonly<Record<string, string | undefined>> = process.env): { token: string; source: string } {
  const fromEnv = env.IPYTHON_MCP_HTTP_TOKEN;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return { token: fromEnv.trim(), source: 'IPYTHON_MCP_HTTP_TOKEN' };
  const path = tokenFilePath(env);
  try {
    const existing = readFileSync(path, 'utf8').trim();
    if (existing.length >= 32) {
      chmodSync(path, 0o600);
      return { token: existing, source: path };
    }
  } catch {
    // No file yet: make one below.
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { token, source: path };
}

/** What {@link serveHttpCommand} needs. */
export interface HttpCommandOptions {
  /** `[HOST:]PORT`, as given. */
  address: string;
  allowRemote: boolean;
  request: HttpRequest;
  settings: Settings;
  python: string;
  logger: Logger;
  version: string;
  /** Ends the process with exit code 2 and the message. */
  fail: (message: string) => never;
  isolation?: Pick<IpythonMcpServerOptions, 'launch' | 'sandbox' | 'outputSpillParent'>;
  /** Each namespace's own backend (Jupyter kernels), or why a namespace cannot be served. */
  backendFor?: HttpServeOptions['backendFor'];
}

/** The one warning line a non-loopback bind prints (undefined for loopback). */
export function exposureWarning(host: string, tls: boolean): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  const where = isWildcardAddress(host) ? 'every interface' : host;
  const wire = tls ? 'over TLS' : 'WITHOUT TLS: the bearer token and every cell travel in clear text (use --http-tls-cert/--http-tls-key or an SSH tunnel, docs/clients.md)';
  return `ipython-mcp: WARNING: serving on ${where}, reachable from other machines, ${wire}; every request with the token runs code as this user`;
}

/**
 * `ipython-mcp --http [HOST:]PORT`: serves until SIGTERM/SIGINT, then closes every namespace and session and
 * resolves. A non-loopback HOST needs `allowRemote` (refused otherwise) and is warned about; a wildcard HOST needs
 * allowed host names.
 */
export async function serveHttpCommand(options: HttpCommandOptions): Promise<void> {
  const { address, settings, python, logger, version } = options;
  const fail: (message: string) => never = options.fail;
  const parsed = parseHttpAddress(address);
  if (typeof parsed === 'string') fail(parsed);
  if (!isLoopbackHost(parsed.host)) {
    if (!options.allowRemote) fail(`--http ${parsed.host} is not a loopback address; anyone who can reach it and has the token runs code as you. Add --http-allow-remote to mean it`);
    if (isWildcardAddress(parsed.host) && options.request.allowedHosts.length === 0) {
      fail(`--http ${parsed.host} listens on every interface, but names no host a client may use: add --http-allow-host NAME (or IPYTHON_MCP_HTTP_ALLOWED_HOSTS) for each name or address clients connect through`);
    }
  }
  let tls: HttpTls | undefined;
  try {
    tls = options.request.tlsFiles === undefined ? undefined : loadTls(options.request.tlsFiles);
  } catch (error) {
    if (error instanceof HttpSettingError) fail(error.message);
    throw error;
  }
  const warning = exposureWarning(parsed.host, tls !== undefined);
  if (warning !== undefined) process.stderr.write(`${warning}\n`);
  let token;
  try {
    token = httpToken();
  } catch (error) {
    fail(`cannot create the HTTP token file ${tokenFilePath()}: ${(error as Error).message}`);
  }
  let server;
  try {
    server = await serveHttp({
      python,
      settings,
      logger,
      version,
      host: parsed.host,
      port: parsed.port,
      token: token.token,
      allowedHosts: options.request.allowedHosts,
      ...(tls === undefined ? {} : { tls }),
      ...options.isolation,
      ...(options.backendFor === undefined ? {} : { backendFor: options.backendFor }),
    });
  } catch (error) {
    fail(`cannot listen on ${address}: ${(error as Error).message}`);
  }
  process.stderr.write(
    `ipython-mcp ${version} ready on ${server.url} (named namespaces at ${server.url}/NAME; bearer token from ${token.source}; python: ${python})\n`,
  );
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  // Every signal joins the one close (a second one must not fall through to Node's default, exiting at once).
  const onSignal = (): void => {
    closing ??= server.close().finally(resolveClosed);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await closed;
}
