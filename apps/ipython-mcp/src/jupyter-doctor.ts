// `ipython-mcp doctor --jupyter URL --kernel ID` (or --notebook, --kernel-name): one line per check, each failing
// line with a Fix. REST calls, then the kernel's channel opened as the agent will open it (its WebSocket, the token
// in the upgrade's header) and its kernel_info answered: nothing runs in the kernel, and the token never appears in
// a line. With --kernel-name (or a notebook nobody has open) a kernel is started for that check and shut down.
import { targetFlag, type JupyterRequest } from './jupyter-request.js';

const REQUEST_TIMEOUT_MS = 10_000;

interface Answer {
  status: number;
  body: unknown;
}

type Check = { ok: boolean; line: string };

async function get(request: JupyterRequest, path: string, withToken = true): Promise<Answer> {
  const response = await fetch(new URL(path, request.url.endsWith('/') ? request.url : `${request.url}/`), {
    headers: withToken && request.token !== '' ? { Authorization: `token ${request.token}` } : {},
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body };
}

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  return error instanceof Error ? error.message : String(error);
}

/** Runs the checks, prints them, and returns the exit code (0: all passed). */
export async function doctorJupyter(request: JupyterRequest): Promise<number> {
  const checks = await jupyterChecks(request);
  for (const check of checks) process.stdout.write(`${check.ok ? 'ok  ' : 'FAIL'} ${check.line}\n`);
  const failed = checks.filter((check) => !check.ok).length;
  process.stdout.write(failed === 0 ? 'doctor: all required checks passed\n' : `doctor: ${failed} check(s) failed\n`);
  return failed === 0 ? 0 : 1;
}

/**
 * Whether the agent's cells will appear in the notebook: off by the setting, or the server's collaboration endpoint
 * (jupyter-collaboration) answers for the notebook. Not a failure either way: the agent works without it.
 */
async function notebookCellsCheck(request: JupyterRequest, path: string): Promise<Check> {
  if (!request.notebookCells) return { ok: true, line: 'notebook cells: off (--notebook-cells off); the agent\'s cells are not written into the notebook' };
  try {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (request.token !== '') headers.Authorization = `token ${request.token}`;
    const response = await fetch(`${request.url.replace(/\/+$/, '')}/api/collaboration/session/${path.split('/').map(encodeURIComponent).join('/')}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ format: 'json', type: 'notebook' }),
      signal: AbortSignal.timeout(10_000),
    });
    await response.text().catch(() => '');
    if (response.ok) return { ok: true, line: 'notebook cells: mirrored (the server has real-time collaboration): the agent\'s cells appear in the notebook' };
    return {
      ok: true,
      line: `notebook cells: not mirrored: the server has no real-time collaboration (HTTP ${response.status}). To see the agent's cells in the notebook: pip install jupyter-collaboration in the server's environment and restart it`,
    };
  } catch (error) {
    return { ok: true, line: `notebook cells: not mirrored: the collaboration endpoint did not answer (${reasonOf(error)})` };
  }
}

/** The checks in order; a failure stops the ones that depend on it. */
export async function jupyterChecks(request: JupyterRequest): Promise<Check[]> {
  const checks: Check[] = [];
  const url = request.url;
  let specs: Answer;
  try {
    specs = await get(request, 'api/kernelspecs');
  } catch (error) {
    checks.push({ ok: false, line: `jupyter server: nothing answered at ${url} (${reasonOf(error)}). Fix: start the server, or correct --jupyter / IPYTHON_MCP_JUPYTER_URL.` });
    return checks;
  }
  checks.push({ ok: true, line: `jupyter server: reachable at ${url}` });
  if (specs.status === 401 || specs.status === 403) {
    checks.push({ ok: false, line: `jupyter token: refused (HTTP ${specs.status}). Fix: set JUPYTER_TOKEN (or IPYTHON_MCP_JUPYTER_TOKEN) to the server's token.` });
    return checks;
  }
  const kernelspecs = (specs.body as { kernelspecs?: Record<string, { spec?: { argv?: unknown; language?: unknown } }> } | undefined)?.kernelspecs;
  if (specs.status !== 200 || kernelspecs === undefined) {
    checks.push({ ok: false, line: `jupyter server: ${url} answered HTTP ${specs.status}, not as a Jupyter server does. Fix: point --jupyter at the server's base URL.` });
    return checks;
  }
  checks.push({ ok: true, line: 'jupyter token: accepted' });
  const target = request.target;
  let kernelName: string | undefined;
  /** The running kernel the agent would attach to; unset when it would start one (then the check starts one). */
  let kernelToOpen: { kernelId: string } | undefined;
  try {
    if ('kernelName' in target) {
      // --jupyter alone: the server's default kernelspec.
      kernelName = target.kernelName === '' ? ((specs.body as { default?: string } | undefined)?.default ?? '') : target.kernelName;
      const found = kernelspecs[kernelName] !== undefined;
      checks.push({
        ok: found,
        line: found
          ? `kernel: kernelspec ${kernelName} exists (a new kernel is started per namespace and shut down on exit)`
          : `kernel: no kernelspec ${kernelName} on the server (it has ${Object.keys(kernelspecs).sort().join(', ') || 'none'}). Fix: correct --kernel-name.`,
      });
      if (!found) return checks;
    } else if ('kernelId' in target) {
      const kernel = await get(request, `api/kernels/${encodeURIComponent(target.kernelId)}`);
      if (kernel.status !== 200) {
        checks.push({ ok: false, line: `kernel: no running kernel has id ${target.kernelId} (HTTP ${kernel.status}). Fix: copy the id from Jupyter (or use --notebook PATH).` });
        return checks;
      }
      kernelName = (kernel.body as { name?: string }).name;
      kernelToOpen = { kernelId: target.kernelId };
      checks.push({ ok: true, line: `kernel: ${target.kernelId} is running (${kernelName ?? 'unknown kernelspec'}, ${(kernel.body as { execution_state?: string }).execution_state ?? 'unknown state'})` });
    } else {
      const sessions = await get(request, 'api/sessions');
      if (sessions.status !== 200 || !Array.isArray(sessions.body)) {
        checks.push({ ok: false, line: `kernel: this server does not list notebook sessions (HTTP ${sessions.status}; a Kernel Gateway?). Fix: use --kernel ID or --kernel-name NAME.` });
        return checks;
      }
      const wanted = target.notebookPath.replace(/^\/+/, '');
      const session = (sessions.body as Array<{ path?: string; kernel?: { id?: string; name?: string } | null }>).find(
        (each) => (each.path ?? '').replace(/^\/+/, '') === wanted && each.kernel,
      );
      const notebook = await get(request, `api/contents/${wanted.split('/').map(encodeURIComponent).join('/')}?content=1&type=notebook`);
      if (session?.kernel == null && notebook.status !== 200) {
        checks.push({ ok: false, line: `kernel: no open notebook session has path ${target.notebookPath}, and there is no notebook there (HTTP ${notebook.status}). Fix: the path is relative to the server's root; or use --kernel ID.` });
        return checks;
      }
      if (session?.kernel == null) {
        const named = (notebook.body as { content?: { metadata?: { kernelspec?: { name?: unknown } } } } | undefined)?.content?.metadata?.kernelspec?.name;
        kernelName = typeof named === 'string' && named !== '' ? named : (specs.body as { default?: string } | undefined)?.default;
        checks.push({ ok: true, line: `kernel: ${target.notebookPath} has no open session; ipython-mcp starts one (kernel ${kernelName ?? '?'}) on the first call and leaves it running (shut it down from JupyterLab)` });
      } else {
        kernelName = session.kernel.name;
        if (session.kernel.id !== undefined) kernelToOpen = { kernelId: session.kernel.id };
        checks.push({ ok: true, line: `kernel: ${targetFlag(target)} has kernel ${session.kernel.id ?? '?'} (${kernelName ?? 'unknown kernelspec'})` });
      }
      checks.push(await notebookCellsCheck(request, wanted));
    }
  } catch (error) {
    checks.push({ ok: false, line: `kernel: the server stopped answering (${reasonOf(error)})` });
    return checks;
  }
  const spec = kernelName === undefined ? undefined : kernelspecs[kernelName]?.spec;
  const argv = Array.isArray(spec?.argv) ? spec.argv.map(String).join(' ') : '';
  const ipython = /ipykernel/.test(argv);
  checks.push({
    ok: ipython,
    line: ipython
      ? `kernel: ${kernelName} is an IPython kernel (ipykernel)`
      : `kernel: ${kernelName ?? 'the kernel'} does not look like an IPython kernel (language ${String(spec?.language ?? 'unknown')}); ipython-mcp needs ipykernel. Fix: use a Python (ipykernel) kernelspec.`,
  });
  if (!ipython) return checks;
  checks.push(await kernelChannelCheck(request, kernelToOpen ?? { kernelName: kernelName ?? 'python3' }));
  return checks;
}

/** How long the channel check waits for the kernel's first answer over its WebSocket. */
const CHANNEL_TIMEOUT_MS = 20_000;

/**
 * Opens the kernel's channel the way the agent will (jupyter-kernel's client: its WebSocket, the token in the
 * upgrade request's header) and waits for its kernel_info_reply. A kernel it had to start is shut down after.
 */
async function kernelChannelCheck(request: JupyterRequest, target: { kernelId: string } | { kernelName: string }): Promise<Check> {
  const { openJupyterKernel, shutdownKernel } = await import('@ipython-mcp/jupyter-kernel');
  const server = { url: request.url, token: request.token };
  const started: string[] = [];
  const how = 'kernelId' in target ? `kernel ${target.kernelId}` : `a new ${target.kernelName} kernel (shut down after this check)`;
  try {
    const kernel = await openJupyterKernel({ server, target, connectTimeoutMs: CHANNEL_TIMEOUT_MS, start: { onStarting: (kernelId) => started.push(kernelId) } });
    await kernel.close();
    return { ok: true, line: `kernel channel: opened to ${how}; the kernel answered over its WebSocket` };
  } catch (error) {
    const upgrade = await upgradeStatus(request, 'kernelId' in target ? target.kernelId : started[0]);
    const why = upgrade === undefined ? reasonOf(error) : `the WebSocket upgrade was answered HTTP ${upgrade}`;
    return {
      ok: false,
      line: `kernel channel: could not open to ${how} (${why.slice(0, 300)}). Fix: the REST calls pass but the kernel's WebSocket does not: let WebSocket upgrades through every proxy in front of the server (ingress, nginx), and check that the token may access the server (JupyterHub: scope access:servers!user=NAME)`,
    };
  } finally {
    for (const kernelId of started) await shutdownKernel(server, kernelId).catch(() => undefined);
  }
}

/** The HTTP status a WebSocket upgrade to the kernel's channels gets, when it is refused; undefined otherwise. */
async function upgradeStatus(request: JupyterRequest, kernelId: string | undefined): Promise<number | undefined> {
  if (kernelId === undefined) return undefined;
  const { default: WebSocket } = await import('ws');
  const base = request.url.endsWith('/') ? request.url : `${request.url}/`;
  const url = `${base.replace(/^http/, 'ws')}api/kernels/${encodeURIComponent(kernelId)}/channels`;
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers: request.token === '' ? {} : { Authorization: `token ${request.token}` } });
    const timer = setTimeout(() => {
      socket.terminate();
      resolve(undefined);
    }, 10_000);
    socket.on('unexpected-response', (_request, response) => {
      clearTimeout(timer);
      resolve(response.statusCode);
      socket.terminate();
    });
    socket.on('open', () => {
      clearTimeout(timer);
      socket.close();
      resolve(undefined);
    });
    socket.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}
