import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { NotebookToolError, notebookTools, type NotebookActions } from './notebook-tool.js';

function fakeActions(log: string[]): NotebookActions {
  return {
    read: async (page) => `page ${page.start ?? 1}`,
    edit: async (edits) => edits.map((edit) => edit.op).join(','),
    cellsToRun: async (selection) => {
      if ('cells' in selection && selection.cells.includes('nope')) throw new NotebookToolError('invalid_arguments', 'no cell nope', { reason: 'cell_not_found' });
      return [
        { id: 'a', position: 1, source: 'ok' },
        { id: 'b', position: 2, source: 'boom' },
        { id: 'c', position: 3, source: 'never' },
      ];
    },
    claim: (id) => {
      log.push(`claim ${id}`);
      return () => log.push(`release ${id}`);
    },
  };
}

const execute = (log: string[]) => async (code: string, timeout: number | undefined): Promise<CallToolResult> => {
  log.push(`execute ${code} ${String(timeout)}`);
  return code === 'boom' ? { isError: true, content: [{ type: 'text', text: 'error ZeroDivisionError' }] } : { content: [{ type: 'text', text: `ran ${code}` }] };
};

describe('the notebook tool', () => {
  it('is one tool; its schema states timeout_seconds and no integer maximum', () => {
    const [tool, ...rest] = notebookTools(fakeActions([])).list(600);
    expect(rest).toEqual([]);
    expect(tool!.name).toBe('notebook');
    expect(tool!.inputSchema.properties).toMatchObject({ timeout_seconds: { maximum: 600 }, start: { minimum: 1 } });
    expect(JSON.stringify(tool!.inputSchema)).not.toContain('9007199254740991');
    expect(notebookTools(fakeActions([])).call('execute', {}, execute([]))).toBeUndefined();
  });

  it('runs cells in order through execute, one claim each, and stops at the first error', async () => {
    const log: string[] = [];
    const result = await notebookTools(fakeActions(log)).call('notebook', { action: 'run', timeout_seconds: 5 }, execute(log))!;
    expect(result.isError).toBe(true);
    expect(log).toEqual(['claim a', 'execute ok 5', 'release a', 'claim b', 'execute boom 5', 'release b']);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain('--- cell 1 · id a\nran ok');
    expect(text).toContain('--- cell 2 · id b\nerror ZeroDivisionError');
    expect(text).toContain('[stopped at the error: 1 cells not run: c]');
  });

  it('bad arguments and refusals are structured errors; nothing runs', async () => {
    const log: string[] = [];
    const tools = notebookTools(fakeActions(log));
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ action: 'paint' }, 'invalid_arguments'],
      [{ action: 'edit' }, 'invalid_arguments'],
      [{ action: 'edit', edits: [{ op: 'insert', source: 'x' }] }, 'invalid_arguments'],
      [{ action: 'run', cells: ['a'], from: 'a' }, 'invalid_arguments'],
      [{ action: 'run', cells: ['nope'] }, 'invalid_arguments'],
      [{ action: 'read', timeout_seconds: -1 }, 'invalid_arguments'],
      [{ action: 'read', extra: 1 }, 'invalid_arguments'],
    ];
    for (const [args, code] of cases) {
      const result = await tools.call('notebook', args, execute(log))!;
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code } });
    }
    expect(log).toEqual([]);
    const missing = await tools.call('notebook', { action: 'edit', edits: [{ op: 'replace', cell: 'a' }] }, execute(log))!;
    expect(missing.structuredContent).toMatchObject({ error: { details: { reason: 'missing_field' } } });
    expect((missing.content[0] as { text: string }).text).toContain('edit 1 (replace) needs source');
  });

  it('read and edit answer the actions\' text', async () => {
    const tools = notebookTools(fakeActions([]));
    expect(await tools.call('notebook', { action: 'read', start: 3 }, execute([]))).toEqual({ content: [{ type: 'text', text: 'page 3' }] });
    const edited = await tools.call('notebook', { action: 'edit', edits: [{ op: 'delete', cell: 'a' }, { op: 'move', cell: 'b', at: 'start' }] }, execute([]));
    expect(edited).toEqual({ content: [{ type: 'text', text: 'delete,move' }] });
  });
});
