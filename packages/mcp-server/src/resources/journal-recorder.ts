import type { Settings } from '../settings/index.js';
import {
  SessionJournal,
  codeCell,
  markdownCell,
  outputsOfExecuteResult,
  pythonCall,
  replacedNote,
  stoppedCells,
  type JournalStatus,
} from '@ipython-mcp/session-journal';
import type { Logger, OperationOutcome, Runtime } from '@ipython-mcp/worker-supervisor';

/**
 * What the journal records of a call ({@link JournalRecorder.stableTool}): `cell` records `arguments.code` as a code cell with
 * its outputs; `call` records `arguments.name(**arguments.arguments)` as the Python call it stands for; `none`
 * records nothing (the tool runs no user code of its own).
 */
export type JournalPolicy = 'cell' | 'call' | 'none';

/** Call failures after which the callable did run (the others were refused before calling it). */
const CALL_RAN = new Set(['call_raised', 'result_not_json']);

/**
 * Turns the server's code-running operations into journal cells: `execute` cells as they were sent,
 * `call_function` and dynamic tool calls as the Python call they stand for, and notes for interruptions and worker
 * replacements. Recording only queues a cell; the journal writes after the result has gone out.
 */
export class JournalRecorder {
  private readonly journal: SessionJournal;

  constructor(journal: SessionJournal, runtime: Runtime) {
    this.journal = journal;
    runtime.onEpochChange((change) => {
      // A replacement during an operation is reported with that operation's cell; only idle deaths get a note here.
      if (!runtime.status().active) journal.append(markdownCell(replacedNote(change.reason, change.epoch)));
    });
  }

  /** One finished stable tool call, recorded as its definition's journal policy says. */
  stableTool(tool: { readonly journal: JournalPolicy }, args: Record<string, unknown>, outcome: OperationOutcome): void {
    if (tool.journal === 'cell') this.execute(String(args.code), outcome);
    else if (tool.journal === 'call') this.call(String(args.name), (args.arguments ?? {}) as Record<string, unknown>, outcome);
  }

  /** One finished `execute`. */
  execute(code: string, outcome: OperationOutcome): void {
    if (outcome.ok) {
      const { outputs, executionCount } = outputsOfExecuteResult(outcome.result);
      this.journal.append(codeCell(code, outputs, executionCount));
    } else {
      this.stopped(code, outcome);
    }
  }

  /** One finished call of a live callable: `call_function` (by name or dotted path) or a dynamic tool. */
  call(callee: string, args: Record<string, unknown>, outcome: OperationOutcome, tool?: string): void {
    const source = (tool === undefined ? '' : `# tool ${tool}\n`) + pythonCall(callee, args);
    if (outcome.ok) {
      this.journal.append(codeCell(source, outputsOfExecuteResult({ result: { kind: 'json', value: outcome.result.value } }).outputs, null));
    } else if (CALL_RAN.has(String(outcome.error.code)) && outcome.meta.interruption === null) {
      const details = outcome.error.details ?? {};
      const error = { type: details.type ?? outcome.error.code, message: details.message ?? outcome.error.message, traceback: details.traceback };
      this.journal.append(codeCell(source, outputsOfExecuteResult({ error }).outputs, null));
    } else if (outcome.meta.interruption !== null || outcome.error.code === 'memory_limit') {
      this.stopped(source, outcome);
    }
    // Any other failure (name_not_found, binding_failed, …) was refused before the callable ran: nothing to record.
  }

  /** For runtime_status. */
  status(): JournalStatus {
    return this.journal.status();
  }

  /** Resolves once every cell recorded so far is on disk. */
  flushed(): Promise<void> {
    return this.journal.flushed();
  }

  /** Writes what is queued. */
  close(): Promise<void> {
    return this.journal.close();
  }

  private stopped(source: string, outcome: Extract<OperationOutcome, { ok: false }>): void {
    for (const cell of stoppedCells(source, outcome)) this.journal.append(cell);
  }
}

/** The recorder for `settings.journal`, or undefined when the journal is off. */
export function openJournal(settings: Pick<Settings, 'journal' | 'journalMaxBytes'>, runtime: Runtime, logger: Logger, version: string): JournalRecorder | undefined {
  if (settings.journal === null) return undefined;
  const journal = new SessionJournal({ path: settings.journal, maxBytes: settings.journalMaxBytes, logger, title: `ipython-mcp ${version}` });
  return new JournalRecorder(journal, runtime);
}
