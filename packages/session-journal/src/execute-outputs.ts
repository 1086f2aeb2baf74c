import { codePointIndex } from './code-points.js';
import { toMimeBundle, type JournalOutput } from './notebook-format.js';
import { pythonLiteral } from './python-source.js';

/** What the journal takes from one worker execute (or run_code) result. */
export interface CellOutputs {
  outputs: JournalOutput[];
  executionCount: number | null;
}

/**
 * The one place that reads the worker's execute result (docs/protocol.md, `execute`): `stdout`, `stderr` (or
 * run_code's ordered `output`), `displays`, `result`, `error` and `execution_count`, with their omitted counts.
 * Everything else in the journal works on the nbformat outputs this returns, so a change of the result shape is
 * one edit here. Unknown or malformed fields are skipped, never thrown on.
 */
export function outputsOfExecuteResult(result: Readonly<Record<string, unknown>>): CellOutputs {
  const outputs: JournalOutput[] = [];
  const executionCount = count(result.execution_count);
  // `at`: where the omitted characters were (a head-and-tail stream, `<stream>_omitted_at`); absent: at the end.
  const stream = (name: 'stdout' | 'stderr', text: unknown, omitted: unknown, at?: unknown): void => {
    if (typeof text !== 'string') return;
    const dropped = count(omitted) ?? 0;
    const points = count(at);
    const cut = points === null ? text.length : codePointIndex(text, points);
    const head = text.slice(0, cut);
    const note = dropped > 0 ? `${head.endsWith('\n') || head === '' ? '' : '\n'}[… ${dropped} ${cut < text.length ? 'characters were not kept here' : 'more characters were not kept'}]\n` : '';
    if (text !== '' || note !== '') outputs.push({ output_type: 'stream', name, text: head + note + text.slice(cut) });
  };
  if (typeof result.output === 'string') stream('stdout', result.output, result.output_omitted_chars);
  stream('stdout', result.stdout, result.stdout_omitted_chars, result.stdout_omitted_at);
  stream('stderr', result.stderr, result.stderr_omitted_chars, result.stderr_omitted_at);
  if (Array.isArray(result.displays)) {
    for (const display of result.displays) {
      if (!isRecord(display)) continue;
      outputs.push({ output_type: 'display_data', data: toMimeBundle(display.data), metadata: isRecord(display.metadata) ? display.metadata : {} });
    }
  }
  const displaysOmitted = count(result.displays_omitted) ?? 0;
  if (displaysOmitted > 0) outputs.push({ output_type: 'stream', name: 'stderr', text: `[${displaysOmitted} display item(s) were not kept]\n` });
  const value = resultBundle(result.result);
  if (value !== undefined) outputs.push({ output_type: 'execute_result', execution_count: executionCount, data: value, metadata: {} });
  if (isRecord(result.error)) {
    const error = result.error;
    const ename = typeof error.type === 'string' && error.type !== '' ? error.type : 'Error';
    const evalue = typeof error.message === 'string' ? error.message : '';
    // The notebook keeps the unfolded traceback when the worker folded library frames for the model.
    const text = typeof error.full_traceback === 'string' && error.full_traceback !== '' ? error.full_traceback : error.traceback;
    const traceback = typeof text === 'string' && text !== '' ? text.replace(/\n$/, '').split('\n') : [`${ename}: ${evalue}`];
    outputs.push({ output_type: 'error', ename, evalue, traceback });
  }
  return { outputs, executionCount };
}

/** The final value as Jupyter shows it: text/plain (a JSON value rendered as its Python literal), and any images. */
function resultBundle(raw: unknown): Record<string, unknown> | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw.kind === 'json') return { 'text/plain': pythonLiteral(raw.value) };
  if (raw.kind !== 'repr' || typeof raw.repr !== 'string') return undefined;
  const images = isRecord(raw.images) ? toMimeBundle(raw.images) : {};
  return { ...images, 'text/plain': raw.repr };
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
