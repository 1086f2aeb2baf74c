import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SETTING_DEFINITIONS, type SettingKind } from '@ipython-mcp/mcp-server';
import { HTTP_SETTINGS, HttpSettingError, httpRequest, type HttpRequest } from './http-request.js';
import { JUPYTER_FLAGS, JUPYTER_HELP, JupyterSettingError, jupyterRequest, type JupyterRequest } from './jupyter-request.js';
import { SANDBOX_SETTINGS, SandboxSettingError, sandboxRequest, type SandboxRequest } from './sandbox-request.js';

/** What the command line asked for. */
export interface CommandLine {
  command: 'serve' | 'setup' | 'doctor' | 'config' | 'help' | 'version' | 'code-mode';
  python: string | undefined;
  logLevel: string;
  settingFlags: Record<string, string>;
  upgrade: boolean;
  /** Packages `setup --with` adds to the managed environment (each a pip requirement or a path to a wheel). */
  withPackages: string[];
  /** `code-mode --servers FILE`: the upstream servers file. */
  servers: string | undefined;
  /** `code-mode --consent [SERVER[.TOOL]=]POLICY` (repeatable): consent policies before the servers file's. */
  consent: string[];
  /** `--sandbox` and its flags (or IPYTHON_MCP_SANDBOX*): the opt-in sandbox around the worker. */
  sandbox: SandboxRequest;
  /** `--http [HOST:]PORT` (env IPYTHON_MCP_HTTP): serve Streamable HTTP instead of stdio. */
  http: string | undefined;
  /** `--http-allow-remote`: allow a non-loopback `--http` HOST. */
  httpAllowRemote: boolean;
  /** `--http-allow-host` and `--http-tls-*` (or their env vars). */
  httpOptions: HttpRequest;
  /** `doctor --url URL`: check a running `--http` server instead of the local set-up. */
  url: string | undefined;
  /** `--jupyter URL` and its kernel (or IPYTHON_MCP_JUPYTER_URL): the namespace lives in a Jupyter kernel. */
  jupyter: JupyterRequest | undefined;
}

/** A command line that cannot be understood; exit code 2. */
export class UsageError extends Error {}

/** Parses argv (without node and the script). */
export function parseCommandLine(argv: string[]): CommandLine {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
    python: { type: 'string' },
    'log-level': { type: 'string' },
    upgrade: { type: 'boolean' },
    with: { type: 'string', multiple: true },
    servers: { type: 'string' },
    consent: { type: 'string', multiple: true },
    http: { type: 'string' },
    'http-allow-remote': { type: 'boolean' },
    url: { type: 'string' },
    ...JUPYTER_FLAGS,
  };
  for (const definition of SETTING_DEFINITIONS) options[definition.flag.slice(2)] = { type: 'string' };
  for (const definition of [...SANDBOX_SETTINGS, ...HTTP_SETTINGS]) {
    options[definition.flag.slice(2)] = definition.placeholder === undefined ? { type: 'boolean' } : { type: 'string', multiple: definition.single !== true };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const [first, ...rest] = parsed.positionals;
  if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`);
  let command: CommandLine['command'] = 'serve';
  if (values.help) command = 'help';
  else if (values.version) command = 'version';
  else if (first === 'setup' || first === 'doctor' || first === 'config' || first === 'serve' || first === 'code-mode') command = first;
  else if (first === 'help') command = 'help';
  else if (first !== undefined) throw new UsageError(`unknown command: ${first} (expected serve, code-mode, setup, doctor or config)`);
  const withPackages = parseWithPackages(values.with as string[] | undefined, command);
  const servers = typeof values.servers === 'string' ? values.servers : undefined;
  if (servers !== undefined && command !== 'code-mode') throw new UsageError('--servers only applies to `ipython-mcp code-mode`');
  if (command === 'code-mode' && servers === undefined) throw new UsageError('code-mode needs --servers FILE (an {"mcpServers": {...}} JSON file)');
  const consent = (values.consent as string[] | undefined) ?? [];
  if (consent.length > 0 && command !== 'code-mode') throw new UsageError('--consent only applies to `ipython-mcp code-mode`');
  const http = typeof values.http === 'string' ? values.http : undefined;
  const httpFlagGiven = values['http-allow-remote'] === true || HTTP_SETTINGS.some((definition) => values[definition.flag.slice(2)] !== undefined);
  if ((http !== undefined || httpFlagGiven) && command !== 'serve') throw new UsageError('--http and its --http-* flags only apply to serving');
  let httpOptions: HttpRequest;
  try {
    httpOptions = httpRequest(values, process.env);
  } catch (error) {
    if (error instanceof HttpSettingError) throw new UsageError(error.message);
    throw error;
  }
  const url = typeof values.url === 'string' ? values.url : undefined;
  if (url !== undefined && command !== 'doctor') throw new UsageError('--url only applies to `ipython-mcp doctor`');
  let jupyter: JupyterRequest | undefined;
  try {
    jupyter = jupyterRequest(values, command === 'serve' || command === 'doctor' || command === 'code-mode' ? process.env : {});
  } catch (error) {
    if (error instanceof JupyterSettingError) throw new UsageError(error.message);
    throw error;
  }
  if (jupyter !== undefined && command !== 'serve' && command !== 'doctor' && command !== 'code-mode') {
    throw new UsageError('--jupyter and its kernel flags only apply to serving, code-mode and doctor');
  }
  const settingFlags: Record<string, string> = {};
  for (const definition of SETTING_DEFINITIONS) {
    const value = values[definition.flag.slice(2)];
    if (typeof value === 'string') settingFlags[definition.flag] = value;
  }
  const logLevel = typeof values['log-level'] === 'string' ? values['log-level'] : (process.env.IPYTHON_MCP_LOG_LEVEL ?? 'warn');
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) {
    throw new UsageError(`--log-level must be one of debug, info, warn, error, silent`);
  }
  let sandbox: SandboxRequest;
  try {
    sandbox = sandboxRequest(values, process.env);
  } catch (error) {
    if (error instanceof SandboxSettingError) throw new UsageError(error.message);
    throw error;
  }
  if (jupyter !== undefined && sandbox.enabled) {
    throw new UsageError('--sandbox cannot be combined with --jupyter: the code runs in the Jupyter kernel, not in a local worker ipython-mcp could sandbox (docs/jupyter.md)');
  }
  return {
    command,
    sandbox,
    python: typeof values.python === 'string' ? values.python : undefined,
    logLevel,
    settingFlags,
    upgrade: values.upgrade === true,
    withPackages,
    servers,
    consent,
    // An empty IPYTHON_MCP_HTTP counts as unset (stdio), as other empty settings do.
    http: http ?? (command === 'serve' && process.env.IPYTHON_MCP_HTTP ? process.env.IPYTHON_MCP_HTTP : undefined),
    httpAllowRemote: values['http-allow-remote'] === true,
    httpOptions,
    url,
    jupyter,
  };
}

/** `--with a,b --with c` → `['a', 'b', 'c']`; only `setup` takes it. */
function parseWithPackages(values: string[] | undefined, command: CommandLine['command']): string[] {
  if (values === undefined) return [];
  if (command !== 'setup') throw new UsageError('--with only applies to `ipython-mcp setup`');
  const packages = values.flatMap((value) => value.split(',')).map((item) => item.trim()).filter((item) => item.length > 0);
  if (packages.length === 0) throw new UsageError('--with needs package names, e.g. --with pandas,matplotlib');
  return packages;
}

/** The value placeholder a setting's flag takes in --help. */
const PLACEHOLDERS: Record<SettingKind, string> = {
  path: 'FILE',
  paths: 'DIR[:DIR...]',
  list: 'MOD[,MOD...]',
  aliases: 'JSON',
  count: 'N',
  seconds: 'SECONDS',
  megabytes: 'MB',
  tokens: 'N',
};

/** A sandbox or HTTP setting's lines in --help: the flag (and placeholder), its text, and its env var. */
function flagHelpLines(definition: (typeof SANDBOX_SETTINGS)[number]): string[] {
  const label = definition.placeholder === undefined ? definition.flag : `${definition.flag} ${definition.placeholder}`;
  const text = [...definition.help];
  text[text.length - 1] = `${text.at(-1)} (env ${definition.env}${definition.envForm})`;
  return text.map((line, index) => `  ${(index === 0 ? label : '').padEnd(20)} ${line}`);
}

/** The README shipped beside dist/ (in a checkout and in the installed package alike). */
function readmePath(): string {
  return fileURLToPath(new URL('../README.md', import.meta.url));
}

/** The --help text: every setting with its flag (and value placeholder), env var and default; examples; docs. */
export function helpText(version: string): string {
  const lines = [
    `ipython-mcp ${version}: one persistent IPython namespace for agents, as an MCP server (stdio; Streamable HTTP with --http).`,
    '',
    'Usage:',
    '  ipython-mcp [serve] [options]   serve MCP on stdin/stdout (the default; a client starts it)',
    '  ipython-mcp --http [HOST:]PORT  serve MCP over Streamable HTTP at /mcp (and /mcp/NAME, a namespace of its own),',
    '                                  for clients that come and go; needs Authorization: Bearer <token> (docs/clients.md)',
    '  ipython-mcp setup [--upgrade] [--with PKG[,PKG...]]',
    '                                  create or refresh the managed Python environment (IPython, msgpack), adding',
    '                                  the --with packages (repeatable; a requirement such as pandas>=2 or a wheel path)',
    '  ipython-mcp doctor [options]    check the interpreter, IPython, msgpack, package installs, library paths, preloads',
    '  ipython-mcp doctor --url URL    check a running --http server (token from IPYTHON_MCP_HTTP_TOKEN or the token file)',
    '  ipython-mcp config [options]    print the effective settings (value and source of each) as JSON',
    '  ipython-mcp code-mode --servers FILE',
    '                                  serve one run_code tool in whose kernel the tools of the MCP servers in FILE',
    '                                  ({"mcpServers": {name: {command, args, env, tools?}}}) are Python functions',
    '  ipython-mcp code-mode --servers FILE --consent [SERVER[.TOOL]=]run|ask|refuse',
    '                                  (repeatable) the consent policy of upstream tools called from code, before the',
    '                                  file\'s: a tool that may change things or reach outside asks the person by default',
    '',
    'Examples:',
    '  ipython-mcp setup && ipython-mcp doctor',
    '  claude mcp add ipython --env IPYTHON_MCP_PRELOAD_MODULES=math,json -- ipython-mcp',
    '',
    'Options:',
    '  --python PATH        worker interpreter (env IPYTHON_MCP_PYTHON; default: the managed environment, else python3)',
    '  --log-level LEVEL    debug, info, warn, error or silent; logs go to stderr, metadata only (env IPYTHON_MCP_LOG_LEVEL; default warn)',
    '  --http [HOST:]PORT   serve over HTTP (env IPYTHON_MCP_HTTP); HOST defaults to 127.0.0.1',
    '  --http-allow-remote  allow a non-loopback --http HOST (code runs as you for anyone with the token)',
    ...HTTP_SETTINGS.flatMap(flagHelpLines),
    '  --upgrade            (setup) refresh the managed environment\'s packages',
    '  --with PKG[,PKG...]  (setup) add packages to the managed environment',
    ...SANDBOX_SETTINGS.flatMap(flagHelpLines),
    ...JUPYTER_HELP,
    '  -h, --help           this text',
    '  -v, --version        print the version',
    '',
    'Environment:',
    '  IPYTHON_MCP_HOME     ipython-mcp\'s own directory: the managed environment (venv/) and IPython\'s directory',
    '                       (ipython/); default ~/.local/share/ipython-mcp ($XDG_DATA_HOME/ipython-mcp). Remove it to',
    '                       remove everything ipython-mcp made.',
    '  IPYTHON_MCP_HTTP_TOKEN  the bearer token --http requires; unset: one generated once (256 bits) and kept in',
    '                       $IPYTHON_MCP_HOME/http-token (mode 0600)',
    '',
    'Settings (a flag wins over its environment variable; a bad value exits with code 2 before any worker starts):',
  ];
  for (const definition of SETTING_DEFINITIONS) {
    const fallback = JSON.stringify(definition.defaultValue);
    lines.push(`  ${`${definition.flag} ${PLACEHOLDERS[definition.kind]}`.padEnd(44)} ${definition.env}`);
    lines.push(`  ${''.padEnd(44)} ${definition.description} Default: ${fallback}.`);
  }
  lines.push(
    '',
    `Docs: ${readmePath()}; client set-up, headless runs (claude -p, codex exec) and troubleshooting: docs/clients.md in the repository.`,
    'Not a sandbox unless --sandbox: code runs with your user\'s permissions.',
  );
  return `${lines.join('\n')}\n`;
}
