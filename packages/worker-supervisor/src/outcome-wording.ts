import type { AdmissionError } from '@ipython-mcp/admission-queue';
import type { ErrorCode } from '@ipython-mcp/protocol';
import type { InterruptionKind, NamespaceOutcome, OperationMeta } from './runtime-types.js';
import type { WorkerExitedError } from './worker-process.js';

/**
 * The human text of operation outcomes, in one place: what the model reads when an operation fails. Codes and
 * details are decided by dispatch; this file only words them.
 */

/** Longest error text the runtime passes on. */
export const MAX_ERROR_CHARS = 1000;

/** An error's message, bounded (it may come from anywhere). */
export function boundedMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.slice(0, MAX_ERROR_CHARS);
}

/** Why an operation never ran: the admission queue refused or dropped it. */
export function admissionMessage(error: AdmissionError): string {
  switch (error.code) {
    case 'runtime_busy':
      return 'the pending queue is full; retry after the reported interval';
    case 'queue_timeout':
      return 'the request waited too long for dispatch and never ran; it is safe to retry';
    case 'operation_cancelled':
      return 'the request was cancelled before it was dispatched';
    case 'runtime_closed':
      return 'the runtime is closed';
  }
}

/** Parameters that hold a lone surrogate at `path` cannot cross to Python exactly. */
export function loneSurrogateMessage(path: string): string {
  return `the text at ${path} holds a lone surrogate (U+D800–U+DFFF), which cannot be sent to Python exactly; write it as an escape (\\udcff) in the code, or pass it escaped`;
}

/** The runtime gave up after a start-up failure. */
export function unavailableMessage(error: string | null): string {
  return `the runtime is unavailable until the server restarts: ${error ?? 'start-up failed'}`;
}

/** The worker died under an operation. */
export function workerCrashedMessage(exited: WorkerExitedError | undefined, namespace: NamespaceOutcome): string {
  const outcome = namespace === 'reset' ? 'the namespace was reset' : 'no replacement worker could be started';
  // A worker with no local process (one in a Jupyter kernel) has no exit code or signal: its own words say what
  // ended it (the kernel died, restarted, or its server went away).
  if (exited !== undefined && exited.signal === null && exited.exitCode === null && exited.message !== '') {
    return `the worker ended during the operation: ${exited.message.slice(0, 600)}; ${outcome}`;
  }
  const how = exited?.signal ?? `exit code ${String(exited?.exitCode ?? 'unknown')}`;
  return `the worker process ended during the operation (${how}); ${outcome}`;
}

/** What became of the namespace, as the tail of an interruption's message. */
export function namespaceWording(namespace: NamespaceOutcome): string {
  return namespace === 'preserved' ? 'state was preserved' : namespace === 'reset' ? 'the worker was replaced and the namespace reset' : 'the namespace state is unknown';
}

/**
 * The code and message of an interruption other than a memory stop (which memory-watch words). On a shared kernel
 * the message also says whether the operation ran, and what it waited behind.
 */
export function interruptionFailure(
  kind: Exclude<InterruptionKind, 'memory_limit'>,
  namespace: NamespaceOutcome,
  shared?: OperationMeta['shared'],
): { code: ErrorCode; message: string } {
  const { code, message } = interruptionHead(kind, shared);
  return { code, message: `${message}; ${namespaceWording(namespace)}` };
}

/** The code and the first clause of an interruption's message (what stopped it), before what became of the namespace. */
export function interruptionHead(kind: Exclude<InterruptionKind, 'memory_limit'>, shared?: OperationMeta['shared']): { code: ErrorCode; message: string } {
  const code: ErrorCode = kind === 'timeout' ? 'operation_timeout' : kind === 'shutdown' ? 'runtime_closed' : 'operation_cancelled';
  const what = kind === 'timeout' ? 'passed its deadline' : kind === 'shutdown' ? 'was stopped by shutdown' : 'was cancelled';
  return { code, message: `the operation ${what}${sharedWording(shared)}` };
}

/** Whether an operation on a shared kernel ran, and whose request it waited behind (empty on a local worker). */
function sharedWording(shared: OperationMeta['shared']): string {
  if (shared === undefined) return '';
  const waited = `${(shared.waitedMs / 1000).toFixed(1)} s`;
  const whose =
    shared.behind === null
      ? ''
      : ` behind ${shared.behind === 'agent' ? "another agent's request (another ipython-mcp on the kernel)" : "the person's cell (another Jupyter client's request)"}`;
  if (!shared.ran) {
    // Behind nobody seen: it was sent, and the kernel had not taken it up from its queue yet.
    return shared.behind === null ? ` before the kernel began it, having waited ${waited} for the kernel` : ` before it ran: it never reached the kernel, having waited ${waited}${whose}`;
  }
  // A wait shorter than a tenth of a second (the kernel finishing the previous request) is not worth a clause.
  return shared.waitedMs >= 100 ? ` while it ran in the kernel (it first waited ${waited}${whose})` : ' while it ran in the kernel, which was interrupted';
}
