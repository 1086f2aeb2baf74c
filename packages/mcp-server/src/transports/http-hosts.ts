/**
 * Which names a client may put in `Host` (and `Origin`) when it talks to the HTTP server. The check is against the
 * host name only, never the port: a client behind an SSH tunnel, a reverse proxy or a port forward names the port
 * it dialled, which need not be the one this server bound, and what DNS rebinding changes is the name.
 */

/** The names of the loopback interface every server accepts when it binds a loopback address. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** A listed name that is not a host name or an IP address. */
export class AllowedHostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AllowedHostError';
  }
}

const DNS_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * The canonical form of a host name or address: the host name a WHATWG URL parser (every HTTP client here) makes of
 * it, so a listed name and the `Host` a client writes for it compare equal: lower case, IPv4 in dotted decimal
 * (`0` is `0.0.0.0`), IPv6 compressed in brackets, no trailing dot. Throws {@link AllowedHostError} for anything
 * else (a port, a scheme, a path, a wildcard, an empty string).
 */
export function canonicalHostName(name: string): string {
  const trimmed = name.trim();
  const refuse = (why = 'list a bare name or address, without a port, scheme or path'): never => {
    throw new AllowedHostError(`"${name.slice(0, 100)}" is not a host name or IP address (${why})`);
  };
  if (trimmed === '' || /[\s/?#@\\%*]/.test(trimmed)) refuse();
  const bracketed = !trimmed.startsWith('[') && trimmed.includes(':') ? `[${trimmed}]` : trimmed;
  let url: URL;
  try {
    url = new URL(`http://${bracketed}/`);
  } catch {
    return refuse(IPV4.test(trimmed) ? 'not a valid IPv4 address' : undefined);
  }
  if (url.port !== '' || url.username !== '' || url.password !== '' || url.pathname !== '/') refuse();
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  if (!host.startsWith('[') && !IPV4.test(host) && !DNS_NAME.test(host)) refuse();
  return host;
}

/** The host name a `Host` header names, canonical, with any port dropped; undefined when it names nothing valid. */
export function hostHeaderName(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const value = header.trim();
  let name: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    name = value.slice(0, end + 1);
  } else {
    const colon = value.lastIndexOf(':');
    if (colon >= 0) {
      if (!/^\d{1,5}$/.test(value.slice(colon + 1))) return undefined;
      name = value.slice(0, colon);
    } else {
      name = value;
    }
  }
  try {
    return canonicalHostName(name);
  } catch {
    return undefined;
  }
}

/** The host name of an `Origin` header (http or https only), canonical; undefined for anything else. */
export function originHostName(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return canonicalHostName(url.hostname);
  } catch {
    return undefined;
  }
}

/** Whether `host` is a wildcard bind address (every interface), which names no host a client could use. */
export function isWildcardAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === '0.0.0.0' || bare === '::' || bare === '0:0:0:0:0:0:0:0';
}

/**
 * The set of host names the server accepts: the loopback names, the bind address itself when it names a host,
 * and every listed name. Throws {@link AllowedHostError} for a listed name that is not valid.
 */
export function allowedHostNames(bindHost: string, listed: readonly string[]): Set<string> {
  const names = new Set(LOOPBACK_HOST_NAMES);
  if (!isWildcardAddress(bindHost)) names.add(canonicalHostName(bindHost));
  for (const name of listed) names.add(canonicalHostName(name));
  return names;
}
