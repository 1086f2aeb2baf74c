import {
  SessionJournal,
  codeCell,
  markdownCell,
  outputsOfExecuteResult,
  pythonCall,
  pythonLiteral,
  stoppedCells,
  type JournalStatus,
} from '@ipython-mcp/session-journal';
import type { OperationOutcome } from '@ipython-mcp/worker-supervisor';
import type { NestedToolCall, NestedToolReturn } from './nested-call.js';

/** The `journal` option of a kernel: a notebook path, or the path with a size cap per file. */
export type KernelJournalOption = string | { path: string; maxBytes?: number | undefined };

const MAX_COMMENT_CHARS = 300;
const CALLS_SEPARATOR = '\n\n';

/**
 * A kernel's journal: each run_code cell as a code cell with its outputs, the nested tool calls it made as
 * comments under the code (comments keep line numbers and re-run as written), and notes for timeouts, crashes
 * and restarts.
 */
export class RunCodeJournal {
  private readonly journal: SessionJournal;

  constructor(option: KernelJournalOption) {
    const { path, maxBytes } = typeof option === 'string' ? { path: option, maxBytes: undefined } : option;
    this.journal = new SessionJournal({ path, maxBytes, title: 'IPython Code Mode' });
  }

  /** One finished run_code call. */
  runCode(code: string, outcome: OperationOutcome, calls: readonly NestedToolCall[], returns: readonly NestedToolReturn[]): void {
    const source = code + callComments(calls, returns);
    if (outcome.ok) {
      const { outputs, executionCount } = outputsOfExecuteResult(outcome.result);
      this.journal.append(codeCell(source, outputs, executionCount));
      return;
    }
    for (const cell of stoppedCells(source, outcome)) this.journal.append(cell);
  }

  /** The kernel was restarted on request: its state is gone. */
  restarted(): void {
    this.journal.append(markdownCell('**Kernel restarted** (run_code with `restart`): the state defined above is gone.'));
  }

  /** For diagnostics. */
  status(): JournalStatus {
    return this.journal.status();
  }

  /** Resolves once every cell so far is on disk. */
  flushed(): Promise<void> {
    return this.journal.flushed();
  }
}

function callComments(calls: readonly NestedToolCall[], returns: readonly NestedToolReturn[]): string {
  if (calls.length === 0) return '';
  const byId = new Map(returns.map((item) => [item.toolCallId, item]));
  const lines = calls.map((call) => {
    const answer = byId.get(call.toolCallId);
    const outcome = answer === undefined ? 'no answer' : 'error' in answer ? `raised ToolCallError: ${answer.error}` : pythonLiteral(answer.output);
    // The consent decision first, so a cut line still says whether the call ran in the person's name.
    const decision = call.decision === undefined ? '' : `[${call.decision}] `;
    const line = `${decision}${pythonCall(call.functionName, call.input)} -> ${outcome}`.replace(/\s*\n\s*/g, ' ');
    return `#   ${line.length > MAX_COMMENT_CHARS ? `${line.slice(0, MAX_COMMENT_CHARS)}…` : line}`;
  });
  return `${CALLS_SEPARATOR}# tool calls made by this cell:\n${lines.join('\n')}`;
}
