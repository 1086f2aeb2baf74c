// The notebook tool, as a model uses it: JupyterLab with jupyter-collaboration (and a plain Jupyter server) started
// by the test, the built binary with --notebook and a real SDK client as the agent. The person is a second document
// client of the room (as a browser tab is); the saved file is read through the contents API.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openSharedNotebook, type SharedNotebook } from '@ipython-mcp/notebook-document';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import type { TestServer } from './harness.js';
import { retry } from './http-harness.js';
import { cellText, openNotebookSession, savedCells, savedEventually, writeNotebookCells } from './notebook-harness.js';

let lab: RunningJupyter;
let plain: RunningJupyter;

/** The person's notebook: a heading, a load, a cell with a typo, and a cell that uses it. */
const PERSON_CELLS = [
  { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Sales' },
  { cell_type: 'code', id: 'load', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
  { cell_type: 'code', id: 'total', metadata: {}, source: 'total = rows * 2\nprint(totl)', outputs: [], execution_count: null },
  { cell_type: 'code', id: 'after', metadata: {}, source: 'print(total + 1)', outputs: [], execution_count: null },
];

function writeNotebook(server: RunningJupyter, path: string): void {
  writeNotebookCells(server, path, PERSON_CELLS);
}

/** What the server's log says about saving rooms (its trust warnings left out: every contents GET makes one). */
function saveLog(server: RunningJupyter): string {
  return server
    .stderr()
    .split('\n')
    .filter((line) => !line.includes('is not trusted') && /sav|band|overwrit|rror|room/i.test(line))
    .slice(-30)
    .join('\n');
}

function answer(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

const notebook = (agent: TestServer, args: Record<string, unknown>) => agent.call('notebook', args);

/** The person's view: the live cells of their document client. */
function live(person: SharedNotebook): Array<Record<string, any>> {
  return person.notebook.toJSON().cells as unknown as Array<Record<string, any>>;
}

beforeAll(async () => {
  [lab, plain] = await Promise.all([startJupyter('jupyterlab'), startJupyter('server')]);
}, 120_000);

afterAll(async () => {
  await Promise.all([lab?.stop(), plain?.stop()]);
});

describe('the notebook tool on JupyterLab with collaboration', () => {
  it("the flow: read → insert a markdown cell after a cell → fix the person's cell → run it and the cells below → read again", async () => {
    writeNotebook(lab, 'flow.ipynb');
    await openNotebookSession(lab, 'flow.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'flow.ipynb']);
    const person = await openSharedNotebook({ url: lab.url, token: lab.token, path: 'flow.ipynb', displayName: 'person' });
    try {
      const { tools } = await agent.client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('notebook');
      const first = answer(await notebook(agent, { action: 'read' }));
      expect(first).toContain('notebook flow.ipynb: 4 cells, read from the live shared document');
      expect(first).toContain('--- cell 3 · code [ ] · id total\ntotal = rows * 2\nprint(totl)');

      const sent = performance.now();
      const edited = await notebook(agent, {
        action: 'edit',
        edits: [
          { op: 'insert', type: 'markdown', source: 'The **total** doubles the rows.', after: 'load' },
          { op: 'replace', cell: 'total', find: 'print(totl)', source: 'print(total)' },
        ],
      });
      expect(edited.isError).toBeFalsy();
      expect(answer(edited)).toMatch(/^inserted markdown cell \S+ after load\nreplaced one match in cell total/);
      await retry(() => {
        const cells = live(person);
        expect(cells.map((cell) => cell.id)).toEqual(['intro', 'load', expect.any(String), 'total', 'after']);
        expect(cells[2]).toMatchObject({ cell_type: 'markdown', source: 'The **total** doubles the rows.', metadata: { ipython_mcp: { agent: true, client: 'ipython-mcp-tests' }, tags: ['agent'] } });
        expect(cells[3]).toMatchObject({ source: 'total = rows * 2\nprint(total)', metadata: { ipython_mcp: { changed_by: 'ipython-mcp-tests' } } });
      }, 10_000);
      const visibleMs = performance.now() - sent;

      // The person's load has not run: run it, then the fixed cell and the cells below.
      const ran = await notebook(agent, { action: 'run', cells: ['load'] });
      expect(ran.isError).toBeFalsy();
      const below = await notebook(agent, { action: 'run', from: 'total' });
      expect(below.isError).toBeFalsy();
      expect(answer(below)).toContain('--- cell 4 · id total');
      expect(answer(below)).toContain('14');
      expect(answer(below)).toContain('--- cell 5 · id after');
      expect(answer(below)).toContain('15');
      await retry(() => {
        const cells = live(person);
        expect(cells).toHaveLength(5);
        expect(cells[3]).toMatchObject({ outputs: [expect.objectContaining({ output_type: 'stream', name: 'stdout', text: '14\n' })], execution_count: expect.any(Number), metadata: { ipython_mcp: { run_by: 'ipython-mcp-tests' } } });
        expect(cells[4]).toMatchObject({ outputs: [expect.objectContaining({ text: '15\n' })], execution_count: cells[3]!.execution_count + 1 });
      }, 10_000);

      const again = answer(await notebook(agent, { action: 'read', start: 4 }));
      expect(again).toMatch(/--- cell 4 · code \[\d+\] · edited by the agent \(ipython-mcp-tests\), run by the agent \(ipython-mcp-tests\) · id total\ntotal = rows \* 2\nprint\(total\)\n→ stdout: 14/);
      expect(again).not.toContain('id intro');
      await savedEventually(lab, 'flow.ipynb', (saved) => {
        const log = saveLog(lab);
        const shown = `${log}\nsaved ${JSON.stringify(saved.map((cell) => [cellText(cell.source), cell.outputs?.length]))}; live ${JSON.stringify(live(person).map((cell) => [cellText(cell.source), cell.outputs?.length]))}`;
        expect(saved.map((cell) => cellText(cell.source)), shown).toEqual(['# Sales', 'rows = 7', 'The **total** doubles the rows.', 'total = rows * 2\nprint(total)', 'print(total + 1)']);
        expect(cellText(saved[4]!.outputs[0].text)).toBe('15\n');
      });
      // Generous bound here; the bench measures it.
      expect(visibleMs).toBeLessThan(5_000);
    } finally {
      person.close();
      await agent.close();
    }
  });

  it('bad input answers a structured error and changes nothing', async () => {
    writeNotebook(lab, 'bad.ipynb');
    await openNotebookSession(lab, 'bad.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'bad.ipynb']);
    const person = await openSharedNotebook({ url: lab.url, token: lab.token, path: 'bad.ipynb', displayName: 'person' });
    try {
      const before = JSON.stringify(live(person));
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ action: 'edit', edits: [{ op: 'insert', type: 'code', source: 'x', at: 'end' }, { op: 'delete', cell: 'nope' }] }, 'invalid_arguments', 'cell_not_found'],
        [{ action: 'edit', edits: [{ op: 'replace', cell: 'total', find: 'to', source: 'y' }] }, 'invalid_arguments', 'find_not_unique'],
        [{ action: 'edit', edits: [{ op: 'replace', cell: 'total', find: 'absent', source: 'y' }] }, 'invalid_arguments', 'find_not_unique'],
        [{ action: 'edit', edits: [{ op: 'replace', cell: 'total' }] }, 'invalid_arguments', 'missing_field'],
        [{ action: 'run', cells: ['nope'] }, 'invalid_arguments', 'cell_not_found'],
        [{ action: 'run', cells: ['intro'] }, 'invalid_arguments', 'not_code'],
      ];
      for (const [args, code, reason] of cases) {
        const result = await notebook(agent, args);
        expect(result.isError, JSON.stringify(args)).toBe(true);
        expect(result.structuredContent).toMatchObject({ error: { code, details: { reason } } });
        expect(answer(result)).toMatch(new RegExp(`^error ${code}: `));
      }
      const malformed = await notebook(agent, { action: 'paint' });
      expect(malformed.isError).toBe(true);
      expect(malformed.structuredContent).toMatchObject({ error: { code: 'invalid_arguments' } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(JSON.stringify(live(person))).toBe(before);
    } finally {
      person.close();
      await agent.close();
    }
  });

  it("the person typing in a cell: a whole replace is refused, a find/replace merges with their keystrokes", async () => {
    writeNotebook(lab, 'typing.ipynb');
    await openNotebookSession(lab, 'typing.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'typing.ipynb']);
    const person = await openSharedNotebook({ url: lab.url, token: lab.token, path: 'typing.ipynb', displayName: 'person' });
    try {
      await notebook(agent, { action: 'read' });
      const cell = person.notebook.cells[2]!;
      cell.updateSource(cell.source.length, cell.source.length, '\n# the person types');
      await retry(async () => expect(answer(await notebook(agent, { action: 'read' }))).toContain('# the person types'), 10_000);
      const refused = await notebook(agent, { action: 'edit', edits: [{ op: 'replace', cell: 'total', source: 'total = 0' }] });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: { code: 'invalid_arguments', details: { reason: 'cell_being_edited', cell: 'total' } } });
      // While the agent's fix travels, the person goes on typing at the end: both land.
      const fixing = notebook(agent, { action: 'edit', edits: [{ op: 'replace', cell: 'total', find: 'totl', source: 'total' }] });
      cell.updateSource(cell.source.length, cell.source.length, ' more');
      expect((await fixing).isError).toBeFalsy();
      await retry(() => expect(person.notebook.cells[2]!.source).toBe('total = rows * 2\nprint(total)\n# the person types more'), 10_000);
      await retry(async () => expect(answer(await notebook(agent, { action: 'read', start: 3, count: 1 }))).toContain('print(total)\n# the person types more'), 10_000);
    } finally {
      person.close();
      await agent.close();
    }
  });

  it('two agents edit one notebook at once: both batches land whole, in the file too', async () => {
    writeNotebook(lab, 'two.ipynb');
    await openNotebookSession(lab, 'two.ipynb');
    const [one, two] = await Promise.all([startKernelServer(lab, ['--notebook', 'two.ipynb']), startKernelServer(lab, ['--notebook', 'two.ipynb'])]);
    try {
      await Promise.all([notebook(one, { action: 'read' }), notebook(two, { action: 'read' })]);
      const [a, b] = await Promise.all([
        notebook(one, { action: 'edit', edits: [{ op: 'insert', type: 'markdown', source: 'from one', at: 'start' }, { op: 'replace', cell: 'load', find: '7', source: '8' }] }),
        notebook(two, { action: 'edit', edits: [{ op: 'insert', type: 'markdown', source: 'from two', after: 'after' }, { op: 'replace', cell: 'total', find: 'totl', source: 'total' }] }),
      ]);
      expect(a.isError).toBeFalsy();
      expect(b.isError).toBeFalsy();
      await savedEventually(lab, 'two.ipynb', (cells) => {
        const saved = cells.map((cell) => cellText(cell.source));
        const log = saveLog(lab);
        expect(saved, log).toEqual(['from one', '# Sales', 'rows = 8', 'total = rows * 2\nprint(total)', 'print(total + 1)', 'from two']);
      });
      const ran = answer(await notebook(two, { action: 'run' }));
      expect(ran).toContain('16');
      expect(ran).toContain('17');
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe('the notebook tool on a Jupyter server without collaboration (the contents API)', () => {
  it('reads the saved file, writes a batch into it, runs cells with their answers (the file is not changed by a run)', async () => {
    writeNotebook(plain, 'plain.ipynb');
    await openNotebookSession(plain, 'plain.ipynb');
    const agent = await startKernelServer(plain, ['--notebook', 'plain.ipynb']);
    try {
      const read = answer(await notebook(agent, { action: 'read' }));
      expect(read).toContain('read from the saved file (this server has no real-time collaboration)');
      expect(read).toContain('id total');
      const edited = await notebook(agent, { action: 'edit', edits: [{ op: 'insert', type: 'markdown', source: 'note', after: 'load' }, { op: 'replace', cell: 'total', find: 'totl', source: 'total' }, { op: 'move', cell: 'intro', at: 'end' }] });
      expect(edited.isError).toBeFalsy();
      expect(answer(edited)).toContain('written to the saved file');
      const saved = await savedCells(plain, 'plain.ipynb');
      expect(saved.map((cell) => cellText(cell.source))).toEqual(['rows = 7', 'note', 'total = rows * 2\nprint(total)', 'print(total + 1)', '# Sales']);
      expect(saved[2]!.metadata).toMatchObject({ ipython_mcp: { changed_by: 'ipython-mcp-tests' } });
      const ran = await notebook(agent, { action: 'run' });
      expect(ran.isError).toBeFalsy();
      expect(answer(ran)).toContain('15');
      expect(answer(ran)).toContain('the outputs are in this answer only');
      const missing = await notebook(agent, { action: 'edit', edits: [{ op: 'delete', cell: 'nope' }] });
      expect(missing.structuredContent).toMatchObject({ error: { code: 'invalid_arguments', details: { reason: 'cell_not_found' } } });
      expect((await savedCells(plain, 'plain.ipynb')).length).toBe(5);
    } finally {
      await agent.close();
    }
  });

  it('a file changed between the read and the write is not overwritten (notebook_changed)', async () => {
    writeNotebook(plain, 'race.ipynb');
    const { readNotebookFile, writeNotebookFile, NotebookFileError } = await import('@ipython-mcp/notebook-document');
    const access = { url: plain.url, token: plain.token, path: 'race.ipynb' };
    const read = await readNotebookFile(access);
    // The person saves from JupyterLab meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeNotebookCells(plain, 'race.ipynb', [{ cell_type: 'markdown', id: 'mine', metadata: {}, source: 'saved by the person' }]);
    const error = await writeNotebookFile(access, { ...read.content, cells: [] }, read.lastModified).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotebookFileError);
    expect((error as InstanceType<typeof NotebookFileError>).reason).toBe('changed');
    expect((await savedCells(plain, 'race.ipynb')).map((cell) => cellText(cell.source))).toEqual(['saved by the person']);
  });

  it('a notebook that turned into something not JSON answers a clear error; nothing is written', async () => {
    writeNotebook(plain, 'broken.ipynb');
    await openNotebookSession(plain, 'broken.ipynb');
    const agent = await startKernelServer(plain, ['--notebook', 'broken.ipynb']);
    try {
      expect(answer(await notebook(agent, { action: 'read' }))).toContain('id load');
      writeFileSync(join(plain.rootDir, 'broken.ipynb'), '{ this is not json');
      for (const args of [{ action: 'read' }, { action: 'edit', edits: [{ op: 'delete', cell: 'load' }] }]) {
        const result = await notebook(agent, args);
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({ error: { code: 'invalid_arguments', details: { reason: 'not_a_notebook' } } });
      }
      expect(readFileSync(join(plain.rootDir, 'broken.ipynb'), 'utf8')).toBe('{ this is not json');
    } finally {
      await agent.close();
    }
    const { readNotebookFile, NotebookFileError } = await import('@ipython-mcp/notebook-document');
    const outside = await readNotebookFile({ url: plain.url, token: plain.token, path: '../etc/passwd' }).catch((caught: unknown) => caught);
    expect(outside).toBeInstanceOf(NotebookFileError);
    expect((outside as InstanceType<typeof NotebookFileError>).reason).toBe('outside_root');
  });
});
