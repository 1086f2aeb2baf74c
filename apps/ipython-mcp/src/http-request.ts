// What `--http` was asked for beyond its address: the host names clients may use and the TLS certificate. Parsing
// and loading only; http-command.ts serves.
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { AllowedHostError, canonicalHostName, type HttpTls } from '@ipython-mcp/mcp-server';
import type { SandboxSettingDefinition } from './sandbox-request.js';

/** The HTTP settings' environment variables. */
export const HTTP_ENV = Object.freeze({
  allowedHosts: 'IPYTHON_MCP_HTTP_ALLOWED_HOSTS',
  tlsCert: 'IPYTHON_MCP_HTTP_TLS_CERT',
  tlsKey: 'IPYTHON_MCP_HTTP_TLS_KEY',
});

/** The `--http` settings, in documentation order (same shape as the sandbox's, for --help and the README table). */
export const HTTP_SETTINGS: readonly SandboxSettingDefinition[] = [
  {
    env: HTTP_ENV.allowedHosts,
    flag: '--http-allow-host',
    placeholder: 'NAME',
    envForm: ', comma-separated',
    defaultLabel: 'the loopback names',
    help: [
      '(repeatable) a host name or address clients may use in Host and Origin',
      '(any port); needed for a 0.0.0.0 or :: bind. The loopback names are always allowed',
    ],
    summary: 'host names and addresses `--http` clients may use (any port), comma-separated; required for a `0.0.0.0`/`::` bind',
  },
  {
    env: HTTP_ENV.tlsCert,
    flag: '--http-tls-cert',
    placeholder: 'FILE',
    envForm: '',
    single: true,
    defaultLabel: '—',
    help: ['serve HTTPS with this PEM certificate chain (with --http-tls-key)'],
    summary: 'PEM certificate chain: serve `--http` as HTTPS (with the key below)',
  },
  {
    env: HTTP_ENV.tlsKey,
    flag: '--http-tls-key',
    placeholder: 'FILE',
    envForm: '',
    single: true,
    defaultLabel: '—',
    help: ["the certificate's PEM private key"],
    summary: "the certificate's PEM private key",
  },
];

/** An HTTP flag or env var with a value that is not allowed (exit code 2). */
export class HttpSettingError extends Error {}

/** What `--http` was asked for besides its address. */
export interface HttpRequest {
  allowedHosts: string[];
  /** The certificate and key files, when HTTPS was asked for. */
  tlsFiles: { cert: string; key: string } | undefined;
}

/** The request from the parsed flags (a flag wins over its env var). Throws {@link HttpSettingError}. */
export function httpRequest(values: Readonly<Record<string, unknown>>, env: Readonly<Record<string, string | undefined>>): HttpRequest {
  const flagged = values['http-allow-host'];
  const raw = Array.isArray(flagged) ? (flagged as string[]) : env[HTTP_ENV.allowedHosts] ? [env[HTTP_ENV.allowedHosts] as string] : [];
  const allowedHosts: string[] = [];
  for (const name of raw.flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '')) {
    try {
      canonicalHostName(name);
    } catch (error) {
      if (error instanceof AllowedHostError) throw new HttpSettingError(`--http-allow-host: ${error.message}`);
      throw error;
    }
    allowedHosts.push(name);
  }
  const pick = (flag: string, envName: string): string | undefined => {
    const value = values[flag];
    if (typeof value === 'string') return value;
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const cert = pick('http-tls-cert', HTTP_ENV.tlsCert);
  const key = pick('http-tls-key', HTTP_ENV.tlsKey);
  if ((cert === undefined) !== (key === undefined)) throw new HttpSettingError('--http-tls-cert and --http-tls-key go together: give both, or neither');
  return { allowedHosts, tlsFiles: cert === undefined || key === undefined ? undefined : { cert, key } };
}

/** Reads and checks the certificate and key (they must load into a TLS context together). Throws HttpSettingError. */
export function loadTls(files: { cert: string; key: string }): HttpTls {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(files.cert);
    key = readFileSync(files.key);
  } catch (error) {
    throw new HttpSettingError(`cannot read the TLS certificate or key: ${(error as Error).message}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new HttpSettingError(`the TLS certificate and key do not load together (${(error as Error).message}); both must be PEM, the key the certificate's own`);
  }
  return { cert, key };
}
