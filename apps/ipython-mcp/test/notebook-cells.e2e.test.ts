// The agent's cells in the person's notebook, without a browser: JupyterLab with jupyter-collaboration started by the
// test, the built binary with --notebook and a real SDK client as the agent. What the person would find is read
// through the contents API (the saved file: jupyter-collaboration saves the shared document) and through a second
// document client (a reader of the room, as another browser tab is).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSharedNotebook, type SharedNotebook } from '@ipython-mcp/notebook-document';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { humanExecute, kernelIds, runCli, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { savedCells, textOf, until } from './notebook-page.js';

let lab: RunningJupyter;
let plain: RunningJupyter;

/** A notebook of the person's: a markdown cell and a code cell, in that order. */
const PERSON_CELLS = [
  { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Sales analysis\nThe **person** wrote this.' },
  { cell_type: 'code', id: 'load', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
];

function writeNotebook(server: RunningJupyter, path: string): void {
  writeFileSync(
    join(server.rootDir, path),
    JSON.stringify({ cells: PERSON_CELLS, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } }, nbformat: 4, nbformat_minor: 5 }),
  );
}

async function openSession(server: RunningJupyter, path: string): Promise<string> {
  const session = await server.rest('POST', 'api/sessions', { path, type: 'notebook', name: '', kernel: { name: 'python3' } });
  expect(session.status).toBe(201);
  return (session.body as { kernel: { id: string } }).kernel.id;
}

beforeAll(async () => {
  [lab, plain] = await Promise.all([startJupyter('jupyterlab'), startJupyter('server')]);
}, 120_000);

afterAll(async () => {
  await Promise.all([lab?.stop(), plain?.stop()]);
});

describe("the agent's cells in the notebook (JupyterLab with jupyter-collaboration)", () => {
  it("each execute becomes a cell after the person's, with source, outputs, count and the agent's metadata; the person's cells are unchanged", async () => {
    writeNotebook(lab, 'sales.ipynb');
    const kernelId = await openSession(lab, 'sales.ipynb');
    humanExecute(lab, kernelId, 'rows = 7');
    const agent = await startKernelServer(lab, ['--notebook', 'sales.ipynb']);
    try {
      const ran = await agent.structured('execute', { code: 'print("agent was here")\nrows * 6' });
      expect(ran.result.value).toBe(42);
      const failed = await agent.structured('execute', { code: 'raise ValueError("nope")' });
      expect(JSON.stringify(failed)).toContain('ValueError');
      await until(async () => {
        const cells = await savedCells(lab, 'sales.ipynb');
        expect(cells).toHaveLength(4);
        expect(cells.slice(0, 2).map((cell) => [cell.cell_type, textOf(cell.source)])).toEqual(PERSON_CELLS.map((cell) => [cell.cell_type, cell.source]));
        const [first, second] = cells.slice(2);
        expect(textOf(first!.source)).toContain('print("agent was here")\nrows * 6');
        expect(first!.metadata.ipython_mcp).toEqual({ agent: true, client: 'ipython-mcp-tests' });
        expect(first!.metadata.tags).toEqual(['agent']);
        expect(typeof first!.execution_count).toBe('number');
        expect(first!.outputs).toEqual([
          expect.objectContaining({ output_type: 'stream', name: 'stdout', text: 'agent was here\n' }),
          expect.objectContaining({ output_type: 'execute_result', data: expect.objectContaining({ 'text/plain': '42' }) }),
        ]);
        expect(second!.outputs).toEqual([expect.objectContaining({ output_type: 'error', ename: 'ValueError', evalue: 'nope' })]);
        expect(second!.execution_count).toBe(first!.execution_count + 1);
      }, 20_000);
      const status = await agent.structured('runtime_status', {});
      expect(status.backend.notebook_cells).toMatchObject({ mirrored: true, state: 'on', cells_inserted: 2 });
      expect(status.backend.notebook_resource).toBe('ipython-mcp://notebook');
      expect(agent.stderr()).not.toContain(lab.token);
    } finally {
      await agent.close();
    }
  });

  it("the notebook resource is listed and reads the live document: the person's markdown, the cells in order, counts and outputs", async () => {
    writeNotebook(lab, 'read.ipynb');
    await openSession(lab, 'read.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'read.ipynb']);
    let person: SharedNotebook | undefined;
    try {
      const listed = await agent.client.listResources();
      expect(listed.resources.map((resource) => resource.uri)).toContain('ipython-mcp://notebook');
      await agent.structured('execute', { code: 'print("from the agent")' });
      // The person types a cell and does not save: the resource still has it.
      person = await openSharedNotebook({ url: lab.url, token: lab.token, path: 'read.ipynb', displayName: 'person' });
      person.notebook.insertCell(person.notebook.cells.length, { cell_type: 'markdown', source: 'typed, not saved' });
      await until(async () => {
        const read = await agent.client.readResource({ uri: 'ipython-mcp://notebook' });
        const text = String((read.contents[0] as { text?: string }).text);
        expect(text).toContain('# Sales analysis\nThe **person** wrote this.');
        expect(text.indexOf('Sales analysis')).toBeLessThan(text.indexOf('rows = 7'));
        expect(text).toMatch(/code \[\d+\] · the agent's/);
        expect(text).toContain('stdout: from the agent');
        expect(text).toContain('typed, not saved');
      }, 10_000);
    } finally {
      person?.close();
      await agent.close();
    }
  });

  it('a notebook nobody has open: ipython-mcp starts its session (the kernelspec of the notebook), leaves it running, and mirrors into it', async () => {
    writeNotebook(lab, 'closed.ipynb');
    const before = await kernelIds(lab);
    const agent = await startKernelServer(lab, ['--notebook', 'closed.ipynb']);
    let kernelId: string | undefined;
    try {
      expect((await agent.structured('execute', { code: '3 * 3' })).result.value).toBe(9);
      kernelId = (await agent.structured('runtime_status', {})).backend.kernel_id;
      expect(before).not.toContain(kernelId);
      await until(async () => expect(await savedCells(lab, 'closed.ipynb')).toHaveLength(3), 20_000);
    } finally {
      await agent.close();
    }
    // The session is the notebook's now, as if the person had opened it: left running for them.
    expect(await kernelIds(lab)).toContain(kernelId);
    const sessions = (await lab.rest('GET', 'api/sessions')).body as Array<{ id: string; path: string }>;
    const session = sessions.find((each) => each.path === 'closed.ipynb');
    expect(session).toBeDefined();
    await lab.rest('DELETE', `api/sessions/${session!.id}`);
  });

  it("the notebook deleted while attached: the agent's calls still answer in full; runtime_status says what became of the mirror", async () => {
    writeNotebook(lab, 'doomed.ipynb');
    await openSession(lab, 'doomed.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'doomed.ipynb']);
    try {
      expect((await agent.structured('execute', { code: '1 + 1' })).result.value).toBe(2);
      expect((await lab.rest('DELETE', 'api/contents/doomed.ipynb')).status).toBe(204);
      const after = await agent.structured('execute', { code: 'print("still here")\n40 + 2' });
      expect(after.result.value).toBe(42);
      expect(after.stdout).toBe('still here\n');
      const status = await agent.structured('runtime_status', {});
      // Under load the first opening of the document may still be under way (pending, 'being opened').
      expect(['on', 'reconnecting', 'unavailable', 'pending']).toContain(status.backend.notebook_cells.state);
      expect(agent.stderr()).not.toContain(lab.token);
    } finally {
      await agent.close();
    }
  });

  it('doctor says whether the cells are mirrored, and what to install when not', () => {
    writeNotebook(lab, 'doctor.ipynb');
    writeNotebook(plain, 'doctor.ipynb');
    const onLab = runCli(['doctor', '--jupyter', lab.url, '--notebook', 'doctor.ipynb'], { JUPYTER_TOKEN: lab.token });
    expect(onLab.stdout).toContain('has no open session; ipython-mcp starts one');
    expect(onLab.stdout).toContain('notebook cells: mirrored');
    const onPlain = runCli(['doctor', '--jupyter', plain.url, '--notebook', 'doctor.ipynb'], { JUPYTER_TOKEN: plain.token });
    expect(onPlain.stdout).toContain('notebook cells: not mirrored');
    expect(onPlain.stdout).toContain('pip install jupyter-collaboration');
    const off = runCli(['doctor', '--jupyter', lab.url, '--notebook', 'doctor.ipynb', '--notebook-cells', 'off'], { JUPYTER_TOKEN: lab.token });
    expect(off.stdout).toContain('notebook cells: off');
    for (const run of [onLab, onPlain, off]) expect(run.stdout + run.stderr).not.toContain(lab.token);
  });

  it('at --log-level error, mirroring writes nothing to stderr but the banner (the document libraries log as events)', async () => {
    writeNotebook(lab, 'quiet.ipynb');
    await openSession(lab, 'quiet.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'quiet.ipynb'], {}, ['--log-level', 'error']);
    try {
      for (const code of ['print("one")', 'raise ValueError("two")', '3']) await agent.call('execute', { code });
      await until(async () => expect(await savedCells(lab, 'quiet.ipynb')).toHaveLength(5), 20_000);
      const status = await agent.structured('runtime_status', {});
      expect(status.backend.notebook_cells).toMatchObject({ mirrored: true, state: 'on' });
      const stray = agent
        .stderr()
        .split('\n')
        .filter((line) => line.trim().length > 0 && !/^ipython-mcp \S+ ready on stdio /.test(line));
      expect(stray).toEqual([]);
      expect(agent.transportErrors).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it('--notebook-cells off leaves the notebook alone; runtime_status says so', async () => {
    writeNotebook(lab, 'off.ipynb');
    await openSession(lab, 'off.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'off.ipynb'], {}, ['--notebook-cells', 'off']);
    try {
      expect((await agent.structured('execute', { code: '1 + 1' })).result.value).toBe(2);
      const status = await agent.structured('runtime_status', {});
      expect(status.backend.notebook_cells).toMatchObject({ mirrored: false, state: 'off' });
      expect(await savedCells(lab, 'off.ipynb')).toHaveLength(2);
    } finally {
      await agent.close();
    }
  });
});

describe('a Jupyter server without collaboration', () => {
  it("the agent's call answers as before; runtime_status says why cells are not mirrored and what to install", async () => {
    writeNotebook(plain, 'plain.ipynb');
    await openSession(plain, 'plain.ipynb');
    const agent = await startKernelServer(plain, ['--notebook', 'plain.ipynb']);
    try {
      expect((await agent.structured('execute', { code: 'print("hi")\n2 * 21' })).result.value).toBe(42);
      await until(async () => {
        const status = await agent.structured('runtime_status', {});
        expect(status.backend.notebook_cells).toMatchObject({ mirrored: false, state: 'unavailable', fix: expect.stringContaining('pip install jupyter-collaboration') });
      }, 10_000);
      expect(await savedCells(plain, 'plain.ipynb')).toHaveLength(2);
      expect(agent.stderr()).not.toContain(plain.token);
    } finally {
      await agent.close();
    }
  });
});
