// The notebook tool's actions on the attached notebook (--notebook PATH): through its live shared document when the
// server has real-time collaboration (the person sees each change at once, marked as the agent's), through the
// contents API when it has not (the saved file, written only if unchanged since read).
import { NotebookToolError, type CellToRun, type NotebookActions, type NotebookToolEdit, type RunSelection } from '@ipython-mcp/mcp-server';
import type { CellJson, NotebookMirror } from '@ipython-mcp/notebook-document';

type NotebookDocument = typeof import('@ipython-mcp/notebook-document');

/** The text budget of a read: the default result budget's 22,000 tokens at 3 characters a token. */
export const NOTEBOOK_READ_CHARS = 66_000;

interface Access {
  url: string;
  token: string;
  path: string;
}

/** Where the cells are now: the live document, or the saved file (and when it was saved). */
type Source = { kind: 'live'; cells: CellJson[] } | { kind: 'saved'; cells: CellJson[]; lastModified: string; content: Record<string, unknown> & { cells: CellJson[] } };

/** The actions over `mirror`'s notebook. */
export function notebookActions(library: NotebookDocument, mirror: NotebookMirror, access: Access): NotebookActions {
  const { NotebookEditError, NotebookFileError, SharedNotebookError } = library;
  const refusal = (error: unknown): unknown => {
    if (error instanceof NotebookEditError) return new NotebookToolError('invalid_arguments', error.message, error.details);
    if (error instanceof NotebookFileError) {
      const code = error.reason === 'refused' ? 'runtime_unavailable' : 'invalid_arguments';
      return new NotebookToolError(code, error.message, { reason: error.reason === 'changed' ? 'notebook_changed' : error.reason });
    }
    return error;
  };
  const source = async (): Promise<Source> => {
    const shared = await mirror.open();
    if (shared !== undefined) return { kind: 'live', cells: shared.notebook.toJSON().cells as unknown as CellJson[] };
    const failure = mirror.failure;
    if (failure !== undefined && failure.reason !== 'no_collaboration') {
      const reason = failure instanceof SharedNotebookError ? failure.reason : 'refused';
      throw new NotebookToolError(reason === 'not_found' ? 'invalid_arguments' : 'runtime_unavailable', `the notebook ${access.path} cannot be opened: ${failure.message}`, { reason });
    }
    const file = await library.readNotebookFile(access).catch((error: unknown) => {
      throw refusal(error);
    });
    return { kind: 'saved', cells: file.content.cells, lastModified: file.lastModified, content: file.content };
  };
  let savedRuns = false;
  return {
    async read(page) {
      const now = await source();
      return library.readCells(now.cells, { path: access.path, origin: now.kind, start: page.start, count: page.count, maxChars: NOTEBOOK_READ_CHARS }).text;
    },
    async edit(edits: NotebookToolEdit[]) {
      const now = await source();
      const client = mirror.client;
      try {
        const plan = library.planEdits(now.cells, edits, { client, typing: (id) => mirror.typing(id) });
        if (now.kind === 'live') {
          const shared = await mirror.open();
          // The plan was checked against the document as it was a moment ago: check it again in this very turn.
          const cells = shared === undefined ? undefined : (shared.notebook.toJSON().cells as unknown as CellJson[]);
          if (shared === undefined || cells === undefined) throw new NotebookToolError('runtime_unavailable', 'the notebook\'s shared document closed before the edit', { reason: 'refused' });
          const fresh = library.planEdits(cells, edits, { client, typing: (id) => mirror.typing(id) });
          library.applyEditsToShared(shared.notebook, fresh, client);
          return `${fresh.lines.join('\n')}\n(the live notebook: the person sees it now; saved by the server)`;
        }
        const cells = library.applyEditsToCells(now.cells, plan, client);
        await library.writeNotebookFile(access, { ...now.content, cells }, now.lastModified);
        return `${plan.lines.join('\n')}\n(written to the saved file: this server has no real-time collaboration)`;
      } catch (error) {
        throw refusal(error);
      }
    },
    async cellsToRun(selection: RunSelection): Promise<CellToRun[]> {
      const now = await source();
      savedRuns = now.kind === 'saved';
      const all = now.cells.map((cell, index) => ({ id: cell.id ?? `#${index + 1}`, position: index + 1, type: cell.cell_type, source: library.textOf(cell.source) }));
      const positionOf = (id: string): number => {
        const found = all.find((cell) => cell.id === id);
        if (found === undefined) throw new NotebookToolError('invalid_arguments', `no cell with id ${JSON.stringify(id)} in the notebook (read it again for the current ids)`, { reason: 'cell_not_found', cell: id });
        return found.position;
      };
      let chosen: typeof all;
      if ('cells' in selection) {
        chosen = selection.cells.map((id) => all[positionOf(id) - 1]!);
        const markdown = chosen.find((cell) => cell.type !== 'code');
        if (markdown !== undefined) throw new NotebookToolError('invalid_arguments', `cell ${markdown.id} is a ${markdown.type} cell: only code cells run`, { reason: 'not_code', cell: markdown.id });
      } else {
        const first = selection.from === undefined ? 1 : positionOf(selection.from);
        const last = selection.to === undefined ? all.length : positionOf(selection.to);
        chosen = all.slice(first - 1, last).filter((cell) => cell.type === 'code');
      }
      return chosen.map(({ id, position, source: code }) => ({ id, position, source: code }));
    },
    claim: (id, code) => mirror.runs.claim(id, code),
    runNote: () => (savedRuns ? '(this server has no real-time collaboration: the outputs are in this answer only; the saved file is not changed)' : undefined),
  };
}
