import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_DESCRIPTION_BUDGET, TOOL_POLICIES, toPythonIdentifier, type PolicySettings, type ServerPolicySettings, type ToolPolicy } from '@ipython-mcp/code-mode';
import { z } from 'zod';

/** One upstream MCP server as the servers file describes it. */
export interface UpstreamServerConfig {
  /** The key in `mcpServers`. */
  name: string;
  command: string;
  args: string[];
  /** Added to (and overriding) this process's environment. */
  env: Record<string, string>;
  cwd: string | undefined;
  /** Tool names or glob patterns (`*`, `?`) to keep; undefined keeps every tool. */
  tools: string[] | undefined;
  /** A prefix for every function of this server (`<prefix>_<tool>`); undefined: only on collisions. */
  prefix: string | undefined;
  /** How long the server may take to start and list its tools. */
  startupTimeoutMs: number;
  /** How long one tool call may take. */
  callTimeoutMs: number;
}

/** The whole servers file. */
export interface CodeModeServersConfig {
  servers: UpstreamServerConfig[];
  /** Upstream calls one run_code call may make. */
  maxToolCalls: number;
  /** Milliseconds one run_code call may run, not counting tool calls; null for none. */
  timeoutMs: number | null;
  /** Characters run_code's description may take with every stub before it lists names only; null: no limit. */
  descriptionBudget: number | null;
  /** The consent policies the file sets (`codeMode.consent`, `mcpServers.NAME.consent`); the rest follow annotations. */
  consent: PolicySettings;
}

/** A servers file that cannot be used; the command exits with code 2. */
export class ServersFileError extends Error {}

const policySchema = z.enum(TOOL_POLICIES as [ToolPolicy, ...ToolPolicy[]]);

/** A server's `consent`: one policy for all its tools, or a default and policies per tool (by name or Python name). */
const serverConsentSchema = z.union([
  policySchema,
  z.object({ default: policySchema.optional(), tools: z.record(z.string().min(1), policySchema).optional() }).strict(),
]);

const serverSchema = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    tools: z.array(z.string().min(1)).optional(),
    prefix: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a Python identifier').optional(),
    startupTimeoutSeconds: z.number().positive().default(30),
    callTimeoutSeconds: z.number().positive().default(300),
    consent: serverConsentSchema.optional(),
  })
  // Other clients' keys (type, url, disabled, ...) are tolerated: the same file may serve several clients.
  .loose();

const fileSchema = z
  .object({
    mcpServers: z.record(z.string().min(1), serverSchema),
    codeMode: z
      .object({
        maxToolCalls: z.number().int().nonnegative().default(100),
        timeoutSeconds: z.number().positive().nullable().default(60),
        descriptionBudget: z.number().int().nonnegative().nullable().default(DEFAULT_DESCRIPTION_BUDGET),
        consent: policySchema.optional(),
      })
      .strict()
      .default({ maxToolCalls: 100, timeoutSeconds: 60, descriptionBudget: DEFAULT_DESCRIPTION_BUDGET }),
  })
  .loose();

/**
 * Reads a servers file in the common `{"mcpServers": {name: {command, args, env}}}` shape, with the Code Mode
 * additions (`tools`, `prefix`, timeouts and `consent` per server; `codeMode.maxToolCalls`, `codeMode.timeoutSeconds`,
 * `codeMode.descriptionBudget` and `codeMode.consent`).
 * Throws {@link ServersFileError} with the path and the first problem.
 */
export function readServersFile(path: string): CodeModeServersConfig {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new ServersFileError(`cannot read the servers file ${absolute}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ServersFileError(`the servers file ${absolute} is not JSON: ${(error as Error).message}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? '' : issue.path.join('.');
    throw new ServersFileError(`the servers file ${absolute} is invalid at ${where || '(top level)'}: ${issue?.message ?? 'unknown problem'}`);
  }
  const base = resolve(absolute, '..');
  const servers = Object.entries(parsed.data.mcpServers).map(([name, server]): UpstreamServerConfig => ({
    name,
    command: server.command,
    args: server.args,
    env: server.env,
    cwd: server.cwd === undefined ? undefined : isAbsolute(server.cwd) ? server.cwd : resolve(base, server.cwd),
    tools: server.tools,
    prefix: server.prefix,
    startupTimeoutMs: server.startupTimeoutSeconds * 1000,
    callTimeoutMs: server.callTimeoutSeconds * 1000,
  }));
  const { maxToolCalls, timeoutSeconds, descriptionBudget, consent } = parsed.data.codeMode;
  const perServer: Record<string, ServerPolicySettings> = {};
  for (const [name, server] of Object.entries(parsed.data.mcpServers)) {
    if (server.consent === undefined) continue;
    perServer[name] = typeof server.consent === 'string' ? { default: server.consent } : { default: server.consent.default, tools: server.consent.tools };
  }
  return {
    servers,
    maxToolCalls,
    timeoutMs: timeoutSeconds === null ? null : timeoutSeconds * 1000,
    descriptionBudget,
    consent: { default: consent, servers: perServer },
  };
}

/**
 * Whether a tool passes a server's `tools` selection: exact names or globs with `*` and `?`, matched against the
 * tool's own name and its Python form (so `get_*` selects `get-weather` too).
 */
export function selectsTool(patterns: readonly string[] | undefined, toolName: string): boolean {
  if (patterns === undefined) return true;
  const pythonName = toPythonIdentifier(toolName);
  return patterns.some((pattern) => {
    const glob = globToRegExp(pattern);
    return glob.test(toolName) || glob.test(pythonName);
  });
}

function globToRegExp(pattern: string): RegExp {
  const body = [...pattern].map((character) => (character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 's');
}
