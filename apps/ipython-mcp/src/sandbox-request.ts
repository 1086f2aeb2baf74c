// What the opt-in sandbox was asked to allow: --sandbox and its repeatable flags, or their IPYTHON_MCP_SANDBOX* env
// vars. Parsing only: sandbox.ts turns a request into the engine's policy.
import { delimiter } from 'node:path';

/** The sandbox a command line or environment asked for. */
export interface SandboxRequest {
  enabled: boolean;
  /** Domains HTTPS (and HTTP) may reach through the engine's proxy; empty, no network at all. */
  allowDomains: string[];
  /** Directories the worker may write to beyond the default set. */
  write: string[];
  /** Paths the worker may not read beyond the credential defaults. */
  denyRead: string[];
}

/** The sandbox settings' environment variables (the flags are their lower-case, dashed, repeatable twins). */
export const SANDBOX_ENV = Object.freeze({
  enabled: 'IPYTHON_MCP_SANDBOX',
  allowDomains: 'IPYTHON_MCP_SANDBOX_ALLOW_DOMAINS',
  write: 'IPYTHON_MCP_SANDBOX_WRITE',
  denyRead: 'IPYTHON_MCP_SANDBOX_DENY_READ',
});

/** A sandbox flag or env var with a value that is not allowed (the command line turns it into exit code 2). */
export class SandboxSettingError extends Error {}

// A host name or IP literal, optionally with one leading `*.` wildcard: no scheme, path, port or spaces.
const DOMAIN = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

function truthy(raw: string | undefined, name: string): boolean {
  if (raw === undefined || raw === '') return false;
  const text = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'false', 'no', 'off'].includes(text)) return false;
  throw new SandboxSettingError(`${name} must be 1 or 0 (true/false), got ${JSON.stringify(raw.slice(0, 40))}`);
}

function domains(values: readonly string[], where: string): string[] {
  const out = values.flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value.length > 0);
  for (const domain of out) {
    if (!DOMAIN.test(domain)) throw new SandboxSettingError(`${where}: ${JSON.stringify(domain.slice(0, 60))} is not a domain (write e.g. pypi.org or *.example.com, no scheme, path or port)`);
  }
  return out;
}

function directories(values: readonly string[], where: string): string[] {
  const out = values.filter((value) => value.length > 0);
  for (const directory of out) {
    if (directory.trim() === '') throw new SandboxSettingError(`${where} must be a path, got an empty value`);
  }
  return out;
}

/**
 * The sandbox request from the parsed flags (a flag list wins over its env var, as with every setting). Throws
 * {@link SandboxSettingError} for a bad value; the sandbox flags without `--sandbox` are an error too, never ignored.
 */
export function sandboxRequest(values: Readonly<Record<string, unknown>>, env: Readonly<Record<string, string | undefined>>): SandboxRequest {
  const list = (flag: string, envName: string): string[] | undefined => {
    const flagged = values[flag];
    if (Array.isArray(flagged)) return flagged as string[];
    const raw = env[envName];
    if (raw === undefined || raw === '') return undefined;
    return envName === SANDBOX_ENV.allowDomains ? [raw] : raw.split(delimiter);
  };
  const enabled = values.sandbox === true || truthy(env[SANDBOX_ENV.enabled], SANDBOX_ENV.enabled);
  const allow = list('sandbox-allow-domain', SANDBOX_ENV.allowDomains);
  const write = list('sandbox-write', SANDBOX_ENV.write);
  const denyRead = list('sandbox-deny-read', SANDBOX_ENV.denyRead);
  if (!enabled && (allow !== undefined || write !== undefined || denyRead !== undefined)) {
    throw new SandboxSettingError('--sandbox-allow-domain, --sandbox-write and --sandbox-deny-read only apply with --sandbox (or IPYTHON_MCP_SANDBOX=1)');
  }
  return {
    enabled,
    allowDomains: domains(allow ?? [], '--sandbox-allow-domain'),
    write: directories(write ?? [], '--sandbox-write'),
    denyRead: directories(denyRead ?? [], '--sandbox-deny-read'),
  };
}
