/**
 * Typed failures of a Jupyter kernel connection.
 *
 * One class with one stable code per failure, so a caller (a worker backend, `doctor`) can map each onto its own
 * wire error or message without parsing text. Messages are fixed per code plus the names the caller gave (a URL
 * without its query, a kernel id, a notebook path, a kernelspec name); the token never appears in one.
 */

/**
 * Stable codes for why a Jupyter operation failed.
 *
 * - `jupyter_invalid_options`: the URL or another option is malformed; nothing was sent.
 * - `jupyter_unauthorized`: the server refused the token (HTTP 401 or 403).
 * - `jupyter_unreachable`: nothing answered at the URL (refused, DNS, TLS) or it answered too slowly.
 * - `jupyter_bad_response`: something answered, but not as a Jupyter server does (unexpected status or body).
 * - `jupyter_kernel_not_found`: no running kernel has the given id.
 * - `jupyter_no_session`: no open session (notebook) has the given path, and there is no notebook there to start one.
 * - `jupyter_sessions_unsupported`: the server has no sessions API or forbids listing it (a Kernel Gateway), so a
 *   notebook cannot be named.
 * - `jupyter_unknown_kernelspec`: the server has no kernelspec of the given name.
 * - `jupyter_kernel_died`: the kernel died, was restarted or shut down under us, or its channel closed for good.
 * - `jupyter_closed`: this connection was closed by its owner.
 */
export type JupyterKernelErrorCode =
  | 'jupyter_invalid_options'
  | 'jupyter_unauthorized'
  | 'jupyter_unreachable'
  | 'jupyter_bad_response'
  | 'jupyter_kernel_not_found'
  | 'jupyter_no_session'
  | 'jupyter_sessions_unsupported'
  | 'jupyter_unknown_kernelspec'
  | 'jupyter_kernel_died'
  | 'jupyter_closed';

/** Structured details carried by a {@link JupyterKernelError}; every field is safe to log. */
export interface JupyterKernelErrorDetails {
  /** The server's URL without query or fragment (never the token). */
  readonly url?: string | undefined;
  /** HTTP status, when the server answered with one. */
  readonly status?: number | undefined;
  /** The kernel id the failure is about. */
  readonly kernelId?: string | undefined;
  /** The notebook path the failure is about. */
  readonly notebookPath?: string | undefined;
  /** The kernelspec name the failure is about. */
  readonly kernelName?: string | undefined;
  /** More words for the message, e.g. which option or what the server said. Must not contain the token. */
  readonly reason?: string | undefined;
  /** The underlying error. */
  readonly cause?: unknown;
}

const MESSAGES: Readonly<Record<JupyterKernelErrorCode, string>> = {
  jupyter_invalid_options: 'Invalid Jupyter connection options',
  jupyter_unauthorized: "The Jupyter server refused the token: fix the token (ipython-mcp's JUPYTER_TOKEN or IPYTHON_MCP_JUPYTER_TOKEN must be one the server accepts)",
  jupyter_unreachable: 'No Jupyter server answered at this URL',
  jupyter_bad_response: 'The server at this URL did not answer as a Jupyter server',
  jupyter_kernel_not_found: 'No running kernel has this id',
  jupyter_no_session: 'No open notebook session has this path, and the server has no notebook there to start one for',
  jupyter_sessions_unsupported: 'This server has no sessions API or does not let us list sessions (a Kernel Gateway?): name a kernel id or a kernelspec instead',
  jupyter_unknown_kernelspec: 'The Jupyter server has no kernelspec of this name',
  jupyter_kernel_died: 'The kernel died or was restarted or shut down',
  jupyter_closed: 'The kernel connection is closed',
};

function describe(code: JupyterKernelErrorCode, details: JupyterKernelErrorDetails): string {
  const parts: string[] = [];
  if (details.url !== undefined) parts.push(`url ${details.url}`);
  if (details.status !== undefined) parts.push(`HTTP ${details.status}`);
  if (details.kernelId !== undefined) parts.push(`kernel ${details.kernelId}`);
  if (details.notebookPath !== undefined) parts.push(`notebook ${details.notebookPath}`);
  if (details.kernelName !== undefined) parts.push(`kernelspec ${details.kernelName}`);
  const suffix = parts.length > 0 ? ` (${parts.join(', ')})` : '';
  const reason = details.reason !== undefined ? `: ${details.reason}` : '';
  return `${MESSAGES[code]}${suffix}${reason}`;
}

/**
 * One failed Jupyter operation, with a stable {@link JupyterKernelError.code}.
 *
 * Safe to log: it never carries the token (URLs are stripped of their query before they reach it).
 */
export class JupyterKernelError extends Error {
  override readonly name = 'JupyterKernelError';
  /** Stable machine-readable code. */
  readonly code: JupyterKernelErrorCode;
  /** The server URL without query, when known. */
  readonly url: string | undefined;
  /** HTTP status, when the server answered with one. */
  readonly status: number | undefined;
  /** The kernel id the failure is about, when known. */
  readonly kernelId: string | undefined;

  /**
   * @param code - what failed
   * @param details - names and the cause, all safe to log
   */
  constructor(code: JupyterKernelErrorCode, details: JupyterKernelErrorDetails = {}) {
    super(describe(code, details), details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.url = details.url;
    this.status = details.status;
    this.kernelId = details.kernelId;
  }
}

/**
 * A URL as it may appear in a message: origin and path only, so a `?token=` never reaches a log.
 *
 * @param url - any URL string
 * @returns the URL without credentials, query or fragment, or `<invalid url>`
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '<invalid url>';
  }
}
