/**
 * What one execute request produced, in plain objects: the IOPub messages whose parent is the request, and the
 * `execute_reply`.
 */
import type { KernelMessage } from '@jupyterlab/services';

/** A MIME bundle as Jupyter sends it (`text/plain`, `image/png`, ...). */
export type MimeBundle = Readonly<Record<string, unknown>>;

/** One IOPub output of an execute request, in arrival order. */
export type JupyterOutput =
  | { readonly type: 'stream'; readonly name: 'stdout' | 'stderr'; readonly text: string }
  | { readonly type: 'execute_result'; readonly executionCount: number | null; readonly data: MimeBundle; readonly metadata: MimeBundle }
  | { readonly type: 'display_data'; readonly data: MimeBundle; readonly metadata: MimeBundle; readonly displayId: string | undefined }
  | { readonly type: 'update_display_data'; readonly data: MimeBundle; readonly metadata: MimeBundle; readonly displayId: string | undefined }
  | { readonly type: 'error'; readonly ename: string; readonly evalue: string; readonly traceback: readonly string[] }
  | { readonly type: 'clear_output'; readonly wait: boolean };

/** The exception of a failed execute request, as the kernel reported it. */
export interface JupyterExecuteError {
  readonly ename: string;
  readonly evalue: string;
  readonly traceback: readonly string[];
}

/** The outcome of one execute request. */
export interface JupyterExecuteResult {
  /** `ok`, `error` (the code raised), or `aborted` (an earlier request failed with `stop_on_error`). */
  readonly status: 'ok' | 'error' | 'aborted';
  /** The kernel's execution counter for this request (`In[n]`), `null` when the reply carried none. */
  readonly executionCount: number | null;
  /** IOPub outputs whose parent is this request, in arrival order. */
  readonly outputs: readonly JupyterOutput[];
  /** Set when `status` is `error`. */
  readonly error: JupyterExecuteError | undefined;
}

/**
 * Converts one IOPub message to an output, or `undefined` for messages that are not outputs (status, execute_input).
 *
 * @param message - an IOPub message whose parent is the request
 * @returns the output, or `undefined`
 */
export function toOutput(message: KernelMessage.IIOPubMessage): JupyterOutput | undefined {
  const content = message.content as Record<string, unknown>;
  const displayId = (): string | undefined => {
    const transient = content.transient as { display_id?: unknown } | undefined;
    return typeof transient?.display_id === 'string' ? transient.display_id : undefined;
  };
  switch (message.header.msg_type) {
    case 'stream':
      return { type: 'stream', name: content.name === 'stderr' ? 'stderr' : 'stdout', text: String(content.text ?? '') };
    case 'execute_result':
      return {
        type: 'execute_result',
        executionCount: typeof content.execution_count === 'number' ? content.execution_count : null,
        data: (content.data ?? {}) as MimeBundle,
        metadata: (content.metadata ?? {}) as MimeBundle,
      };
    case 'display_data':
    case 'update_display_data':
      return {
        type: message.header.msg_type,
        data: (content.data ?? {}) as MimeBundle,
        metadata: (content.metadata ?? {}) as MimeBundle,
        displayId: displayId(),
      };
    case 'error':
      return {
        type: 'error',
        ename: String(content.ename ?? ''),
        evalue: String(content.evalue ?? ''),
        traceback: Array.isArray(content.traceback) ? content.traceback.map(String) : [],
      };
    case 'clear_output':
      return { type: 'clear_output', wait: content.wait === true };
    default:
      return undefined;
  }
}
