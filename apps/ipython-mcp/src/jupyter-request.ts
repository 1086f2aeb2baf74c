// What the command line asked of a Jupyter kernel: --jupyter URL (or IPYTHON_MCP_JUPYTER_URL) and at most one of
// --kernel, --notebook, --kernel-name (none: a kernel of the server's default kernelspec, and the notebook is chosen
// from the conversation); the token from JUPYTER_TOKEN or IPYTHON_MCP_JUPYTER_TOKEN, never a flag.
// Parsing only: cli.ts builds the backend (docs/jupyter.md).
import type { SandboxSettingDefinition } from './sandbox-request.js';

/** Which kernel, as the flags named it. */
export type JupyterTargetRequest = { kernelId: string } | { notebookPath: string } | { kernelName: string };

/** A namespace served from a Jupyter kernel. */
export interface JupyterRequest {
  /** The server's base URL, without query or credentials. */
  url: string;
  /** The token; may be empty (a server with auth off). Never printed. */
  token: string;
  target: JupyterTargetRequest;
  /** Mirror the agent's cells into the `--notebook`'s shared document (`--notebook-cells on|off`; default on). */
  notebookCells: boolean;
  /**
   * `--jupyter URL` alone: the namespace starts in a kernel of the server's default kernelspec (target
   * `{ kernelName: '' }`), and the notebook tool's `list` and `open` choose a notebook from the conversation.
   */
  choose: boolean;
}

/** A Jupyter flag that cannot be honoured; exit code 2. */
export class JupyterSettingError extends Error {}

/** The flags, as parseArgs options. */
export const JUPYTER_FLAGS = Object.freeze({
  jupyter: { type: 'string' },
  kernel: { type: 'string' },
  notebook: { type: 'string' },
  'kernel-name': { type: 'string' },
  'notebook-cells': { type: 'string' },
} as const);

/** The env var of `--notebook-cells`. */
export const NOTEBOOK_CELLS_ENV = 'IPYTHON_MCP_NOTEBOOK_CELLS';

/** The Jupyter settings the README's table lists (the kernel flags are in docs/jupyter.md). */
export const JUPYTER_SETTINGS: readonly SandboxSettingDefinition[] = [
  {
    env: NOTEBOOK_CELLS_ENV,
    flag: '--notebook-cells',
    placeholder: 'on|off',
    envForm: '=on|off',
    single: true,
    defaultLabel: 'on',
    help: ["with --notebook: write the agent's cells into the notebook's shared document (needs jupyter-collaboration)"],
    summary: "with `--notebook`: each agent `execute` appears as a cell in the notebook JupyterLab shows (needs jupyter-collaboration on the server); `off` leaves the notebook alone",
  },
];

/** --help lines. */
export const JUPYTER_HELP: readonly string[] = [
  '  --jupyter URL        serve the namespace from a kernel on this Jupyter server or Kernel Gateway (env',
  '                       IPYTHON_MCP_JUPYTER_URL; token from JUPYTER_TOKEN or IPYTHON_MCP_JUPYTER_TOKEN). Alone: a new',
  '                       kernel of the server\'s default kernelspec, and the notebook tool lists and opens notebooks;',
  '                       or one of:',
  '  --kernel ID          an existing kernel (never restarted by ipython-mcp)',
  '  --notebook PATH      the kernel of the open notebook at PATH (what JupyterLab has; never restarted)',
  '  --kernel-name NAME   a new kernel of that kernelspec, started by ipython-mcp and shut down when it exits. docs/jupyter.md',
  '  --notebook-cells on|off  with --notebook: the agent\'s cells appear in the notebook (jupyter-collaboration); default on',
  `                       (env ${NOTEBOOK_CELLS_ENV})`,
];

/**
 * Reads the Jupyter flags and environment.
 *
 * @returns the request, or undefined when no Jupyter flag or URL is set (the local worker)
 * @throws JupyterSettingError naming the flag, for a target without a URL, two targets,
 *   an empty value, a URL that is not http(s) or that carries a token
 */
export function jupyterRequest(values: Record<string, unknown>, env: NodeJS.ProcessEnv): JupyterRequest | undefined {
  const flagUrl = typeof values.jupyter === 'string' ? values.jupyter : undefined;
  const url = flagUrl ?? (env.IPYTHON_MCP_JUPYTER_URL ? env.IPYTHON_MCP_JUPYTER_URL : undefined);
  const given: Array<[string, JupyterTargetRequest]> = [];
  const take = (flag: string, make: (value: string) => JupyterTargetRequest): void => {
    const value = values[flag];
    if (value === undefined) return;
    if (typeof value !== 'string' || value.trim() === '') throw new JupyterSettingError(`--${flag} needs a value`);
    given.push([`--${flag}`, make(value.trim())]);
  };
  take('kernel', (value) => ({ kernelId: value }));
  take('notebook', (value) => ({ notebookPath: value }));
  take('kernel-name', (value) => ({ kernelName: value }));
  const cellsFlag = values['notebook-cells'];
  const cellsValue = typeof cellsFlag === 'string' ? cellsFlag : env[NOTEBOOK_CELLS_ENV] || 'on';
  const cellsSource = typeof cellsFlag === 'string' ? '--notebook-cells' : NOTEBOOK_CELLS_ENV;
  if (cellsValue !== 'on' && cellsValue !== 'off') throw new JupyterSettingError(`${cellsSource} must be on or off`);
  if (url === undefined) {
    if (typeof cellsFlag === 'string') throw new JupyterSettingError('--notebook-cells needs --jupyter URL and --notebook PATH');
    if (given.length > 0) throw new JupyterSettingError(`${given[0]![0]} needs --jupyter URL (or IPYTHON_MCP_JUPYTER_URL): the Jupyter server that has the kernel`);
    return undefined;
  }
  const source = flagUrl !== undefined ? '--jupyter' : 'IPYTHON_MCP_JUPYTER_URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new JupyterSettingError(`${source} is not a URL (expected e.g. http://127.0.0.1:8888/)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new JupyterSettingError(`${source} must be an http:// or https:// URL`);
  if (parsed.search !== '' || parsed.username !== '' || parsed.password !== '') {
    throw new JupyterSettingError(`${source} must not carry a token or credentials: put the token in JUPYTER_TOKEN (or IPYTHON_MCP_JUPYTER_TOKEN)`);
  }
  if (given.length > 1) throw new JupyterSettingError(`${given.map(([flag]) => flag).join(' and ')} cannot be combined: name the kernel one way`);
  const token = env.IPYTHON_MCP_JUPYTER_TOKEN || env.JUPYTER_TOKEN || '';
  const choose = given.length === 0;
  const target: JupyterTargetRequest = choose ? { kernelName: '' } : given[0]![1];
  return { url: `${parsed.origin}${parsed.pathname}`, token, target, notebookCells: cellsValue === 'on', choose };
}

/** The flag a target came from, for messages. */
export function targetFlag(target: JupyterTargetRequest): string {
  if ('kernelId' in target) return `--kernel ${target.kernelId}`;
  if ('notebookPath' in target) return `--notebook ${target.notebookPath}`;
  return target.kernelName === '' ? "--jupyter alone (a kernel of the server's default kernelspec)" : `--kernel-name ${target.kernelName}`;
}
