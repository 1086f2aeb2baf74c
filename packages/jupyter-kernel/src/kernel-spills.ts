/**
 * Spill files of a kernel's cells: the kernel side writes output past a cell's head and tail on its own machine and
 * ships it in `spill` messages; here the pieces are appended to the runtime's spill directory and the result's
 * `stdout_spill`/`stderr_spill` names become local paths.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@ipython-mcp/worker-supervisor';

/** The names the kernel side gives spill files: nothing else is written. */
const SPILL_NAME = /^\d{20}-cell\d+-(stdout|stderr)\.txt$/;

/** Appends a `spill` message's piece to the file of its name in `directory` (the runtime's spill directory). */
export function appendSpill(directory: string | undefined, message: Record<string, unknown>, logger: Logger): void {
  const name = message.name;
  if (directory === undefined || typeof name !== 'string' || !SPILL_NAME.test(name) || typeof message.text !== 'string') {
    logger.warn('kernel.invalid_spill', {});
    return;
  }
  try {
    appendFileSync(join(directory, name), message.text, { encoding: 'utf8', mode: 0o600 });
  } catch (error) {
    logger.warn('kernel.spill_failed', { reason: (error as Error).message.slice(0, 200) });
  }
}

/** A result's `stdout_spill`/`stderr_spill` name the kernel side's file by name: here it is a path in `directory`. */
export function localSpills(directory: string | undefined, result: Record<string, unknown>): Record<string, unknown> {
  if (directory === undefined) return result;
  let rewritten = result;
  for (const field of ['stdout_spill', 'stderr_spill']) {
    const name = result[field];
    if (typeof name === 'string' && SPILL_NAME.test(name)) rewritten = { ...rewritten, [field]: join(directory, name) };
  }
  return rewritten;
}
