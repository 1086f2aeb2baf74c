import { describe, expect, it } from 'vitest';
import { ranCode, replacedNote, stoppedCells, stoppedNote } from './operation-notes.js';

const base = { code: 'operation_timeout', interruption: 'timeout', namespace: 'preserved', epoch: 1, durationMs: 30_000 };

describe('operation notes', () => {
  it('say what stopped the cell and whether the state was kept', () => {
    expect(stoppedNote(base)).toBe('**Timed out.** The cell above passed its deadline after 30.0 s and was interrupted; the namespace state was kept (what ran before the stop is still defined).');
    expect(stoppedNote({ ...base, namespace: 'reset', epoch: 2 })).toContain('the worker was replaced and the namespace reset (epoch 2)');
    expect(stoppedNote({ ...base, code: 'operation_cancelled', interruption: 'cancelled' })).toMatch(/^\*\*Cancelled\.\*\*/);
    expect(stoppedNote({ ...base, code: 'worker_crashed', interruption: 'crash', namespace: 'reset' })).toMatch(/^\*\*Worker crashed\.\*\*/);
    expect(stoppedNote({ ...base, code: 'runtime_closed', interruption: 'shutdown', namespace: 'unknown' })).toMatch(/^\*\*Stopped by shutdown\.\*\*.*state is unknown/);
    expect(stoppedNote({ ...base, code: 'memory_limit', interruption: null, namespace: 'preserved' })).toMatch(/^\*\*Stopped: memory limit\.\*\*.*state was kept/);
    expect(stoppedNote({ ...base, code: 'message_too_large', interruption: null, namespace: null })).toBe(
      '**No result.** The cell above ran but its result could not be returned (`message_too_large`).',
    );
    expect(replacedNote('crash', 3)).toContain('namespace was reset (epoch 3)');
  });

  it('tell requests that never ran from ones that did', () => {
    for (const code of ['runtime_busy', 'queue_timeout', 'runtime_unavailable', 'operation_cancelled', 'runtime_closed']) {
      expect(ranCode({ code, interruption: null }), code).toBe(false);
    }
    expect(ranCode({ code: 'operation_cancelled', interruption: 'cancelled' })).toBe(true);
    expect(ranCode({ code: 'memory_limit', interruption: null })).toBe(true);
    expect(ranCode({ code: 'message_too_large', interruption: null })).toBe(true);
  });

  it('stoppedCells: the code cell and the note for a stop, with the outcome\'s own epoch; nothing for a call that never ran', () => {
    const failed = { error: { code: 'worker_crashed' }, meta: { interruption: 'crash', namespace: 'reset', epoch: 4, durationMs: 1200 } };
    const cells = stoppedCells('x = 1', failed);
    expect(cells.map((cell) => cell.cell_type)).toEqual(['code', 'markdown']);
    expect(cells[0]).toMatchObject({ source: 'x = 1', outputs: [], execution_count: null });
    expect(cells[1]).toMatchObject({ source: expect.stringContaining('namespace reset (epoch 4)') });
    expect(stoppedCells('x = 1', { ...failed, error: { code: 'runtime_busy' }, meta: { ...failed.meta, interruption: null } })).toEqual([]);
  });
});
