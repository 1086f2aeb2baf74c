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

/**
 * One sandbox setting as a user meets it: its env var and flag (a boolean flag has no placeholder; the others take a
 * value and repeat), with what `--help` and the README's settings table say about it. The command line's options,
 * `--help` and the table are rendered from these.
 */
export interface SandboxSettingDefinition {
  readonly env: string;
  readonly flag: string;
  /** The value the flag takes, as `--help` names it; none for the on/off flag. */
  readonly placeholder?: string;
  /** The flag takes one value, not repeatable. */
  readonly single?: boolean;
  /** How the env var is written, after its name in `--help` (`=1`, `, comma-separated`). */
  readonly envForm: string;
  /** The README's default. */
  readonly defaultLabel: string;
  /** `--help`'s text, one line each. */
  readonly help: readonly string[];
  /** The README table's "meaning" cell (Markdown). */
  readonly summary: string;
}

/** The sandbox settings, in documentation order. */
export const SANDBOX_SETTINGS: readonly SandboxSettingDefinition[] = [
  {
    env: SANDBOX_ENV.enabled,
    flag: '--sandbox',
    envForm: '=1',
    defaultLabel: 'off',
    help: [
      'run the worker and everything its cells start in an OS sandboxing engine',
      '(@anthropic-ai/sandbox-runtime: bubblewrap on Linux, Seatbelt on macOS): no network, writes',
      "only under the working directory and the server's own files, credential files unreadable.",
      'Exits with code 2 if the engine cannot run here. docs/sandbox.md',
    ],
    summary: '`1`: run the worker inside the opt-in sandbox ([docs/sandbox.md](docs/sandbox.md))',
  },
  {
    env: SANDBOX_ENV.allowDomains,
    flag: '--sandbox-allow-domain',
    placeholder: 'D',
    envForm: ', comma-separated',
    defaultLabel: '—',
    help: ["(repeatable) let HTTP(S) reach domain D through the engine's proxy"],
    summary: "domains HTTP(S) may reach through the sandbox's proxy, comma-separated",
  },
  {
    env: SANDBOX_ENV.write,
    flag: '--sandbox-write',
    placeholder: 'DIR',
    envForm: ', path-separated',
    defaultLabel: '—',
    help: ['(repeatable) also allow writes under DIR'],
    summary: 'more directories the sandboxed worker may write, `:`-separated',
  },
  {
    env: SANDBOX_ENV.denyRead,
    flag: '--sandbox-deny-read',
    placeholder: 'DIR',
    envForm: ', path-separated',
    defaultLabel: '—',
    help: ['(repeatable) also deny reads of DIR'],
    summary: 'more paths it may not read, `:`-separated',
  },
];

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
