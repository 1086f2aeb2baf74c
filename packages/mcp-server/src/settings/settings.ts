// The server's settings: the CLI's IPYTHON_MCP_* env/flag table, in the units a person writes (seconds, MiB).
// Each layer below takes its own options in milliseconds (runtimeOptionsFromSettings converts, once).
import { delimiter, resolve } from 'node:path';
import { DEFAULT_WORKER_LIMITS, type WorkerLimits } from '@ipython-mcp/protocol';
import { MAX_MEMORY_LIMIT_MB, RUNTIME_DEFAULTS, defaultMemoryLimitMb, type RuntimeOptions } from '@ipython-mcp/worker-supervisor';
import { IPYTHON_RUNTIME_NAMES } from './runtime-names.js';
import { WORKER_LIMIT_SETTINGS } from './worker-limit-settings.js';

/** Claude Code's default cap on one MCP tool result (MAX_MCP_OUTPUT_TOKENS); the server's default (IPYTHON_MCP_MAX_RESULT_TOKENS). */
export const CLIENT_TOKEN_CAP = 25_000;

/** Kinds of value a setting takes. */
export type SettingKind = 'path' | 'paths' | 'list' | 'aliases' | 'count' | 'seconds' | 'megabytes' | 'tokens';

/**
 * One `IPYTHON_MCP_*` setting: its env var, CLI flag, kind, default and meaning. The flags, `--help`, `config` and the
 * README's settings table are all rendered from these (the table by apps/ipython-mcp/scripts/settings-table.mjs).
 */
export interface SettingDefinition {
  readonly key: keyof Settings;
  readonly env: string;
  readonly flag: string;
  readonly kind: SettingKind;
  readonly defaultValue: Settings[keyof Settings];
  /** The sentence `--help` prints. */
  readonly description: string;
  /** The README table's "meaning" cell (Markdown: may link to a README section). */
  readonly summary: string;
  /** The README's default when the value depends on the machine (e.g. half of physical memory). */
  readonly defaultLabel?: string;
  /** A count's smallest value (1 when not given). */
  readonly minimum?: number;
  /** A count's largest value (any safe integer when not given). */
  readonly maximum?: number;
}

/** What a setting says besides its name, kind and default. */
interface SettingText {
  description: string;
  summary: string;
  /** The flag when it is not the env suffix in lower-case kebab form. */
  flag?: string;
  defaultLabel?: string;
  minimum?: number;
  maximum?: number;
}

const ENV_PREFIX = 'IPYTHON_MCP_';

/**
 * Resolved server settings. Counts are positive integers; seconds are positive and finite; megabytes are positive
 * integers of MiB, or `null` for off. The worker limits (WorkerLimits, typed once by the wire) are settings too.
 */
export interface Settings extends WorkerLimits {
  libraryPaths: string[];
  preloadModules: string[];
  moduleAliases: Record<string, string>;
  operationTimeoutSeconds: number;
  /** The largest `timeout_seconds` one call may ask for (execute, call_function, dynamic tools). */
  maxOperationTimeoutSeconds: number;
  interruptionGraceSeconds: number;
  workerStartupTimeoutSeconds: number;
  maxPendingOperations: number;
  queueWaitTimeoutSeconds: number;
  /** The memory guard's limit in MiB (2^20 bytes) for the worker and the processes it started; `null` is off. */
  memoryLimitMb: number | null;
  /** MiB of spill files (the whole text of truncated stdout/stderr) the server keeps; `null` is off. */
  outputSpillMb: number | null;
  /** The tool-result cap (tokens) results are held within, images and the excess behind resource links; `null` is off. */
  maxResultTokens: number | null;
  /** The session journal notebook, or null for none. */
  journal: string | null;
  journalMaxBytes: number;
  /** `--state FILE`: the namespace snapshot saved at a graceful end and restored at start, or null for none. */
  stateFile: string | null;
  /** Size cap of one snapshot, in MiB. */
  stateMaxMb: number;
  /** Time cap of one save (and of the restore), in seconds; the shutdown grace grows by it. */
  stateSaveSeconds: number;
  /** Over HTTP: open MCP sessions at once, across namespaces. */
  httpMaxSessions: number;
  /** Over HTTP: namespaces (`/mcp` and `/mcp/NAME`) the server holds at once. */
  maxNamespaces: number;
}

function define(key: keyof Settings, suffix: string, kind: SettingKind, defaultValue: Settings[keyof Settings], text: SettingText): SettingDefinition {
  const flag = text.flag ?? `--${suffix.toLowerCase().replaceAll('_', '-')}`;
  const definition: { -readonly [Field in keyof SettingDefinition]: SettingDefinition[Field] } = {
    key,
    env: `${ENV_PREFIX}${suffix}`,
    flag,
    kind,
    defaultValue,
    description: text.description,
    summary: text.summary,
  };
  if (text.defaultLabel !== undefined) definition.defaultLabel = text.defaultLabel;
  if (text.minimum !== undefined) definition.minimum = text.minimum;
  if (text.maximum !== undefined) definition.maximum = text.maximum;
  return definition;
}

/** Every setting, in documentation order. */
export const SETTING_DEFINITIONS: readonly SettingDefinition[] = [
  define('libraryPaths', 'LIBRARY_PATHS', 'paths', [], {
    description: 'Trusted library directories, separated by the platform path separator.',
    summary: 'trusted library directories, `:`-separated, put first on `sys.path`',
  }),
  define('preloadModules', 'PRELOAD_MODULES', 'list', [], {
    description: 'Comma-separated modules imported at worker start.',
    summary: 'comma-separated modules imported at start',
  }),
  define('moduleAliases', 'MODULE_ALIASES', 'aliases', {}, {
    description: 'JSON object mapping module names to namespace aliases.',
    summary: 'JSON object, module → alias (`{"numpy": "np"}`)',
  }),
  // The worker limits: env name, texts and bounds from fixtures/protocol/worker-limits.json, as their defaults are.
  ...WORKER_LIMIT_SETTINGS.map((limit) =>
    define(limit.key, limit.env.slice(ENV_PREFIX.length), 'count', DEFAULT_WORKER_LIMITS[limit.key], limit),
  ),
  define('operationTimeoutSeconds', 'OPERATION_TIMEOUT_SECONDS', 'seconds', RUNTIME_DEFAULTS.operationTimeoutMs / 1000, {
    description: 'Deadline from dispatch to result.',
    summary: 'deadline, from dispatch to result',
  }),
  define('maxOperationTimeoutSeconds', 'MAX_OPERATION_TIMEOUT_SECONDS', 'seconds', 3600, {
    description: 'Largest timeout_seconds one call may set.',
    summary: 'largest `timeout_seconds` one call may ask for (see [Long work](#long-work))',
  }),
  define('interruptionGraceSeconds', 'INTERRUPTION_GRACE_SECONDS', 'seconds', RUNTIME_DEFAULTS.interruptionGraceMs / 1000, {
    description: 'Time a cooperative interruption gets before the worker is replaced.',
    summary: 'time an interrupted cell gets before the worker is replaced',
  }),
  define('workerStartupTimeoutSeconds', 'WORKER_STARTUP_TIMEOUT_SECONDS', 'seconds', RUNTIME_DEFAULTS.startupTimeoutMs / 1000, {
    description: 'Bound on initial and replacement worker start-up.',
    summary: 'bound on worker start and replacement',
  }),
  define('maxPendingOperations', 'MAX_PENDING_OPERATIONS', 'count', RUNTIME_DEFAULTS.maxPendingOperations, {
    description: 'Pending FIFO capacity, not counting the active operation.',
    summary: 'waiting requests, not counting the running one',
  }),
  define('queueWaitTimeoutSeconds', 'QUEUE_WAIT_TIMEOUT_SECONDS', 'seconds', RUNTIME_DEFAULTS.queueWaitTimeoutMs / 1000, {
    description: 'Longest time a request may wait for dispatch.',
    summary: 'longest wait for dispatch',
  }),
  define('memoryLimitMb', 'MEMORY_LIMIT_MB', 'megabytes', defaultMemoryLimitMb(), {
    description:
      'Memory (MiB, resident) the worker and its processes may use while an operation runs; past it the operation is stopped as memory_limit. 0 or off turns the guard off. The default is half of physical memory.',
    summary: 'memory guard, MiB for the worker and the processes it started; `0` or `off` turns it off (see below)',
    defaultLabel: 'half of physical memory',
  }),
  define('outputSpillMb', 'OUTPUT_SPILL_MB', 'megabytes', 256, {
    description: 'MiB of files holding the whole text of truncated stdout/stderr (oldest dropped first; removed when the server exits). 0 or off turns it off.',
    summary: 'MiB of spill files holding the whole text of truncated stdout/stderr, oldest dropped first; `0` or `off` turns it off (see [Long work](#long-work))',
  }),
  define('maxResultTokens', 'MAX_RESULT_TOKENS', 'tokens', CLIENT_TOKEN_CAP, {
    description:
      "A client's cap on one tool result in tokens (Claude Code's default); a larger result sends its later images as links and cuts its longest text, the whole kept as a resource. 0 or off turns it off.",
    summary:
      "a client's cap on one tool result in tokens (Claude Code's default); past it, later images go as resource links and the longest text is cut, the whole result kept as a resource; `0` or `off` turns it off (see [Long work](#long-work))",
    minimum: 1000,
  }),
  define('journal', 'JOURNAL', 'path', null, {
    description: 'Jupyter notebook to record every cell the agent runs in (holds code and values; mode 0600).',
    summary: 'notebook file to record the session in (see [Session journal](#session-journal))',
  }),
  define('journalMaxBytes', 'JOURNAL_MAX_BYTES', 'count', 16_777_216, {
    description: 'Size at which a journal file is closed and the next numbered file begins.',
    summary: 'size at which a journal file ends and the next numbered one begins',
  }),
  define('stateFile', 'STATE_FILE', 'path', null, {
    description: 'Namespace snapshot: saved (dill) at a graceful end, restored at start (loading runs pickle: trust the file; mode 0600).',
    summary: 'namespace snapshot saved at a graceful end and restored at start (see [Namespace snapshots](#namespace-snapshots))',
    flag: '--state',
  }),
  define('stateMaxMb', 'STATE_MAX_MB', 'count', 2048, {
    description: 'Size cap of one snapshot in MiB; names are saved smallest first, the rest reported.',
    summary: 'size cap of one snapshot; names are saved smallest first, the rest reported',
  }),
  define('stateSaveSeconds', 'STATE_SAVE_SECONDS', 'seconds', 20, {
    description: 'Time cap of one save or restore of the snapshot; the shutdown grace grows by it.',
    summary: "time cap of one save or restore; the shutdown grace and the first worker's start-up bound grow by it",
  }),
  define('httpMaxSessions', 'HTTP_MAX_SESSIONS', 'count', 32, {
    description: 'Over HTTP (--http): open MCP sessions at once, across all namespaces.',
    summary: 'with `--http`: open MCP sessions at once, across namespaces',
  }),
  define('maxNamespaces', 'MAX_NAMESPACES', 'count', 8, {
    description: 'Over HTTP (--http): namespaces (/mcp and /mcp/NAME), each with its own worker, held at once.',
    summary: 'with `--http`: namespaces (`/mcp`, `/mcp/NAME`), each with its own worker and standby',
  }),
];

/** A setting with a value that is not allowed; the message names the setting. */
export class SettingsError extends Error {
  /** The env var of the bad setting. */
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(message);
    this.name = 'SettingsError';
    this.setting = setting;
  }
}

/** The defaults of every setting. */
export function defaultSettings(): Settings {
  const settings: Record<string, unknown> = {};
  for (const definition of SETTING_DEFINITIONS) {
    const value = definition.defaultValue;
    settings[definition.key] = Array.isArray(value) ? [...value] : value !== null && typeof value === 'object' ? { ...value } : value;
  }
  return settings as unknown as Settings;
}

/** Longest timeout a Node timer can hold (2^31 - 1 ms): larger delays would fire at once. */
export const MAX_TIMEOUT_SECONDS = 2_147_483;

/** IPython's own bindings, which no configured alias may take (one list for both languages: the fixture). */
const RUNTIME_BINDINGS: ReadonlySet<string> = new Set(IPYTHON_RUNTIME_NAMES);
const IDENTIFIER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u;
const DECIMAL_INTEGER = /^\+?\d+$/;
const DECIMAL_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function isModuleName(name: string): boolean {
  return name.split('.').every((part) => IDENTIFIER.test(part));
}

function quoted(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
}

function parseValue(definition: SettingDefinition, raw: string, source: string): Settings[keyof Settings] {
  const where = source === definition.env ? definition.env : `${source} (${definition.env})`;
  const bad = (message: string): never => {
    throw new SettingsError(definition.env, `${where}${message.startsWith(':') ? '' : ' '}${message}`);
  };
  switch (definition.kind) {
    case 'path':
      if (raw.trim() === '') bad('must be a file path, got an empty value');
      return raw;
    case 'paths':
      return raw.split(delimiter).filter((part) => part.length > 0);
    case 'list': {
      const modules = raw
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part.length > 0);
      for (const module of modules) {
        if (!isModuleName(module)) bad(`must be comma-separated module names; ${quoted(module)} is not one`);
      }
      return modules;
    }
    case 'aliases': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        return bad('must be a JSON object mapping module names to aliases, e.g. {"numpy": "np"}; it is not valid JSON');
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return bad('must be a JSON object mapping module names to aliases, e.g. {"numpy": "np"}');
      }
      const aliases: Record<string, string> = {};
      for (const [module, alias] of Object.entries(parsed)) {
        if (!isModuleName(module)) bad(`: ${quoted(module)} is not a module name`);
        if (typeof alias !== 'string' || !IDENTIFIER.test(alias)) bad(`: the alias for ${quoted(module)} must be a Python identifier`);
        if (RUNTIME_BINDINGS.has(alias as string)) bad(`: the alias ${quoted(alias as string)} would replace an IPython binding`);
        aliases[module] = alias as string;
      }
      return aliases;
    }
    case 'count': {
      const text = raw.trim();
      const value = Number(text);
      if (!DECIMAL_INTEGER.test(text) || !Number.isSafeInteger(value) || value <= 0) {
        bad(`must be a positive integer, got ${quoted(raw)}`);
      }
      if (value < (definition.minimum ?? 1)) bad(`must be at least ${definition.minimum}, got ${quoted(raw)}`);
      if (value > (definition.maximum ?? Number.MAX_SAFE_INTEGER)) bad(`must be at most ${definition.maximum}, got ${quoted(raw)}`);
      return value;
    }
    case 'seconds': {
      const text = raw.trim();
      const value = Number(text);
      if (!DECIMAL_NUMBER.test(text) || !Number.isFinite(value) || value <= 0) {
        bad(`must be a positive, finite number of seconds, got ${quoted(raw)}`);
      }
      if (value > MAX_TIMEOUT_SECONDS) bad(`must be at most ${MAX_TIMEOUT_SECONDS} seconds, got ${quoted(raw)}`);
      return value;
    }
    case 'tokens': {
      const text = raw.trim();
      if (text.toLowerCase() === 'off') return null;
      const value = Number(text);
      if (!DECIMAL_INTEGER.test(text) || !Number.isSafeInteger(value)) bad(`must be a whole number of tokens, or 0 or off to turn it off, got ${quoted(raw)}`);
      if (value === 0) return null;
      if (value < (definition.minimum ?? 1)) bad(`must be at least ${definition.minimum}, got ${quoted(raw)}`);
      return value;
    }
    case 'megabytes': {
      const text = raw.trim();
      if (text.toLowerCase() === 'off') return null;
      const value = Number(text);
      if (!DECIMAL_INTEGER.test(text) || !Number.isSafeInteger(value)) {
        bad(`must be a whole number of MiB, or 0 or off to turn it off, got ${quoted(raw)}`);
      }
      if (value > MAX_MEMORY_LIMIT_MB) bad(`must be at most ${MAX_MEMORY_LIMIT_MB} MiB, got ${quoted(raw)}`);
      return value === 0 ? null : value;
    }
  }
}

/**
 * Resolves settings from the environment and from CLI flag values (flags win). Throws {@link SettingsError}
 * naming the first bad setting.
 */
export function resolveSettings(
  env: Readonly<Record<string, string | undefined>>,
  flags: Readonly<Record<string, string | undefined>> = {},
): Settings {
  const settings = defaultSettings() as unknown as Record<string, unknown>;
  for (const definition of SETTING_DEFINITIONS) {
    const flagValue = flags[definition.flag];
    const envValue = env[definition.env];
    if (flagValue !== undefined) {
      settings[definition.key] = parseValue(definition, flagValue, definition.flag);
    } else if (envValue !== undefined) {
      settings[definition.key] = parseValue(definition, envValue, definition.env);
    }
  }
  return settings as unknown as Settings;
}

/** The worker limits among the settings (every key of `WorkerLimits`, from the generated defaults). */
function workerLimitsOf(settings: WorkerLimits): WorkerLimits {
  const limits = { ...DEFAULT_WORKER_LIMITS };
  for (const key of Object.keys(DEFAULT_WORKER_LIMITS) as (keyof WorkerLimits)[]) limits[key] = settings[key];
  return limits;
}

/**
 * The runtime's options from the server's settings: the one place seconds become milliseconds. The rest of
 * {@link RuntimeOptions} (interpreter, logger, hooks) is the caller's.
 */
export function runtimeOptionsFromSettings(settings: Omit<Settings, 'httpMaxSessions' | 'maxNamespaces'>): Omit<RuntimeOptions, 'python'> {
  return {
    worker: {
      limits: workerLimitsOf(settings),
      libraryPaths: settings.libraryPaths,
      preloadModules: settings.preloadModules,
      moduleAliases: settings.moduleAliases,
    },
    operationTimeoutMs: settings.operationTimeoutSeconds * 1000,
    interruptionGraceMs: settings.interruptionGraceSeconds * 1000,
    startupTimeoutMs: settings.workerStartupTimeoutSeconds * 1000,
    maxPendingOperations: settings.maxPendingOperations,
    queueWaitTimeoutMs: settings.queueWaitTimeoutSeconds * 1000,
    memoryLimitMb: settings.memoryLimitMb,
    ...(settings.stateFile === null
      ? {}
      : { state: { path: resolve(settings.stateFile), maxBytes: settings.stateMaxMb * 1024 * 1024, saveTimeoutMs: settings.stateSaveSeconds * 1000 } }),
    outputSpillBytes: settings.outputSpillMb === null ? null : settings.outputSpillMb * 1024 * 1024,
  };
}
