// Choosing the notebook from the conversation: the built binary started with `--jupyter URL` alone (no kernel flag)
// against JupyterLab with jupyter-collaboration, a real SDK client as the agent. The notebook tool lists the server's
// notebooks and opens one; execute then runs in that notebook's kernel, and its cells land in that notebook.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { freePort, kernelIds, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { startServer, type TestServer } from './harness.js';
import { cellText, openNotebookSession, savedEventually, writeNotebookCells } from './notebook-harness.js';

let lab: RunningJupyter;

const PERSON_CELLS = [
  { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Sales' },
  { cell_type: 'code', id: 'load', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
  { cell_type: 'code', id: 'total', metadata: {}, source: 'total = rows * 2\nprint(total)', outputs: [], execution_count: null },
];

function answer(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

/** An agent cell's source as the notebook keeps it: the header line, then the code. */
const agentCell = (code: string): string => `# agent (ipython-mcp-tests), via ipython-mcp\n${code}`;

const notebook = (agent: TestServer, args: Record<string, unknown>) => agent.call('notebook', args);

/** The agent's `execute` of `code`: its stdout, or the error's text. */
async function run(agent: TestServer, code: string): Promise<{ ok: boolean; text: string }> {
  const result = await agent.call('execute', { code });
  return { ok: result.isError !== true, text: answer(result) };
}

async function refused(agent: TestServer, args: Record<string, unknown>, code: string, reason: string): Promise<string> {
  const result = await notebook(agent, args);
  expect(result.isError, `${JSON.stringify(args)}: ${answer(result)}`).toBe(true);
  expect(result.structuredContent).toMatchObject({ error: { code, details: { reason } } });
  expect(answer(result)).toMatch(new RegExp(`^error ${code}: `));
  return answer(result);
}

beforeAll(async () => {
  lab = await startJupyter('jupyterlab');
}, 120_000);

afterAll(async () => {
  await lab?.stop();
});

describe('--jupyter URL alone: list, open and switch notebooks from the conversation', () => {
  it('list → open → read → edit → run → execute in its kernel → open a second notebook → its namespace', async () => {
    mkdirSync(join(lab.rootDir, 'sales'), { recursive: true });
    writeNotebookCells(lab, 'sales/first.ipynb', PERSON_CELLS);
    writeNotebookCells(lab, 'second.ipynb', [{ cell_type: 'code', id: 'own', metadata: {}, source: 'own = "second"', outputs: [], execution_count: null }]);
    // The person has the second notebook open (its kernel runs); nobody has the first.
    const secondKernel = await openNotebookSession(lab, 'second.ipynb');
    const before = await kernelIds(lab);
    const agent = await startKernelServer(lab, []);
    try {
      const { tools } = await agent.client.listTools();
      const tool = tools.find((each) => each.name === 'notebook');
      expect(tool?.description).toContain('list: the notebooks');
      expect((tool?.inputSchema.properties?.action as { enum: string[] }).enum).toEqual(['list', 'open', 'read', 'edit', 'run']);

      // Before any notebook: execute runs in a kernel ipython-mcp started (the server's default kernelspec).
      expect(await run(agent, 'marker = "default"\nprint(marker)')).toMatchObject({ ok: true, text: expect.stringContaining('default') });
      const first = await agent.structured('runtime_status', {});
      expect(first.backend).toMatchObject({ kind: 'jupyter', kernel_name: 'default', policy: 'owned', notebook_cells: { state: 'no_notebook' } });
      const defaultKernel = first.backend.kernel_id as string;
      expect(before).not.toContain(defaultKernel);
      await refused(agent, { action: 'read' }, 'invalid_arguments', 'no_notebook');

      const listed = answer(await notebook(agent, { action: 'list' }));
      expect(listed).toMatch(/^2 notebooks on \S+ \(1 with a running kernel\); current: none/);
      expect(listed).toContain('- sales/first.ipynb · no kernel');
      // Its state is the server's word at that moment (starting, idle).
      expect(listed).toMatch(new RegExp(`- second\\.ipynb · kernel python3 \\w+ \\(id ${secondKernel}\\)\n`));

      const opened = await notebook(agent, { action: 'open', path: 'sales/first.ipynb' });
      expect(opened.isError, answer(opened)).toBeFalsy();
      expect(answer(opened)).toContain('opened sales/first.ipynb (3 cells): it is the current notebook');
      expect(answer(opened)).toContain('started for it now');
      expect(answer(opened)).toMatch(/The namespace changed \(epoch 2\)/);
      expect(answer(opened)).toContain('was shut down (ipython-mcp had started it)');
      const switched = await agent.structured('runtime_status', {});
      expect(switched.epoch).toBe(first.epoch + 1);
      expect(switched.backend).toMatchObject({ notebook: 'sales/first.ipynb', policy: 'attached', notebook_resource: 'ipython-mcp://notebook' });
      const firstKernel = switched.backend.kernel_id as string;
      // The kernels ipython-mcp started (the active one and its standby) are gone; the notebook's runs.
      await expect.poll(async () => (await kernelIds(lab)).filter((id) => !before.includes(id)), { timeout: 15_000 }).toEqual([firstKernel]);
      expect(answer(await notebook(agent, { action: 'list' }))).toMatch(new RegExp(`- sales/first\\.ipynb · kernel python3 \\w+ \\(id ${firstKernel}\\) · current`));

      // The namespace is the notebook's kernel: the default kernel's names are not there.
      expect(await run(agent, 'print(marker)')).toMatchObject({ ok: false, text: expect.stringContaining('NameError') });
      expect(answer(await notebook(agent, { action: 'read' }))).toContain('--- cell 2 · code [ ] · id load\nrows = 7');
      const edited = await notebook(agent, { action: 'edit', edits: [{ op: 'insert', type: 'markdown', source: 'Seven rows.', after: 'load' }] });
      expect(edited.isError, answer(edited)).toBeFalsy();
      // (The agent's print(marker) is a cell at the end now: the run stops before it.)
      const ran = await notebook(agent, { action: 'run', from: 'load', to: 'total' });
      expect(ran.isError, answer(ran)).toBeFalsy();
      expect(answer(ran)).toContain('14');
      // execute runs in that kernel (the run's names are there), and is kept as a new cell at the notebook's end.
      expect(await run(agent, 'print(rows * 3)')).toMatchObject({ ok: true, text: expect.stringContaining('21') });
      await savedEventually(lab, 'sales/first.ipynb', (cells) => {
        expect(cells.map((cell) => cellText(cell.source))).toEqual(['# Sales', 'rows = 7', 'Seven rows.', 'total = rows * 2\nprint(total)', agentCell('print(marker)'), agentCell('print(rows * 3)')]);
        expect(cellText(cells[5]!.outputs[0]?.text)).toBe('21\n');
      });

      // The second notebook: the person's kernel, its own names. The first notebook's session was ipython-mcp's and
      // nobody joined it: shut down (the file stays).
      const second = answer(await notebook(agent, { action: 'open', path: '/second.ipynb' }));
      expect(second).toContain('opened second.ipynb (1 cell): it is the current notebook');
      expect(second).not.toContain('started for it now');
      expect(second).toContain("The previous notebook sales/first.ipynb's kernel was shut down (ipython-mcp had started its session and nobody else joined it)");
      expect((await agent.structured('runtime_status', {})).backend).toMatchObject({ notebook: 'second.ipynb', kernel_id: secondKernel });
      expect(await kernelIds(lab)).not.toContain(firstKernel);
      expect(await run(agent, 'print(rows)')).toMatchObject({ ok: false, text: expect.stringContaining('NameError') });
      expect((await notebook(agent, { action: 'run', cells: ['own'] })).isError).toBeFalsy();
      expect(await run(agent, 'print(own)')).toMatchObject({ ok: true, text: expect.stringContaining('second') });
      // Leaving the person's notebook leaves its kernel running with its names: back there, they are found.
      const third = answer(await notebook(agent, { action: 'open', path: 'sales/first.ipynb' }));
      expect(third).toContain('The previous notebook second.ipynb and its kernel were left running');
      expect(third).toContain('started for it now');
      expect(await kernelIds(lab)).toContain(secondKernel);
      expect(answer(await notebook(agent, { action: 'open', path: 'second.ipynb' }))).toContain('opened second.ipynb');
      expect(await run(agent, 'print(own)')).toMatchObject({ ok: true, text: expect.stringContaining('second') });
      expect(answer(await notebook(agent, { action: 'open', path: 'second.ipynb' }))).toBe('second.ipynb is already the current notebook: nothing changed');
      // Only the person's kernel is left of this test's: ipython-mcp's first kernel and both sessions it started are gone.
      await expect.poll(async () => (await kernelIds(lab)).filter((id) => !before.includes(id)), { timeout: 15_000 }).toEqual([]);
    } finally {
      await agent.close();
    }
    // The person's notebook kernel is theirs: left running when ipython-mcp exits.
    expect(await kernelIds(lab)).toContain(secondKernel);
  });

  it('bad paths and files answer a structured error and change nothing: the current notebook and its namespace stay', async () => {
    writeNotebookCells(lab, 'kept.ipynb', PERSON_CELLS);
    writeFileSync(join(lab.rootDir, 'notes.txt'), 'plain text\n');
    writeFileSync(join(lab.rootDir, 'broken.ipynb'), 'this is not JSON');
    mkdirSync(join(lab.rootDir, 'folder'), { recursive: true });
    const agent = await startKernelServer(lab, []);
    let madeKernel = '';
    try {
      expect(answer(await notebook(agent, { action: 'open', path: 'kept.ipynb' }))).toContain('opened kept.ipynb');
      expect((await run(agent, 'keep = 41')).ok).toBe(true);
      const status = await agent.structured('runtime_status', {});
      const kernels = await kernelIds(lab);
      expect(await refused(agent, { action: 'open', path: '../outside.ipynb' }, 'invalid_arguments', 'outside_root')).toContain('outside');
      await refused(agent, { action: 'open', path: 'sales/../../outside.ipynb', create: true }, 'invalid_arguments', 'outside_root');
      expect(await refused(agent, { action: 'open', path: 'missing.ipynb' }, 'invalid_arguments', 'not_found')).toContain('create: true');
      await refused(agent, { action: 'open', path: 'notes.txt' }, 'invalid_arguments', 'not_a_notebook');
      await refused(agent, { action: 'open', path: 'broken.ipynb' }, 'invalid_arguments', 'not_a_notebook');
      await refused(agent, { action: 'open', path: 'folder' }, 'invalid_arguments', 'not_a_notebook');
      await refused(agent, { action: 'open', path: 'new.txt', create: true }, 'invalid_arguments', 'not_a_notebook');
      await refused(agent, { action: 'open' }, 'invalid_arguments', 'missing_field');
      // Nothing changed: the same notebook, kernel, epoch and names; no notebook made, no kernel started.
      const after = await agent.structured('runtime_status', {});
      expect(after.epoch).toBe(status.epoch);
      expect(after.backend).toMatchObject({ notebook: 'kept.ipynb', kernel_id: status.backend.kernel_id });
      expect(await run(agent, 'print(keep + 1)')).toMatchObject({ ok: true, text: expect.stringContaining('42') });
      expect((await lab.rest('GET', 'api/contents/missing.ipynb')).status).toBe(404);
      expect((await lab.rest('GET', 'api/contents/new.txt')).status).toBe(404);
      expect((await kernelIds(lab)).sort()).toEqual(kernels.sort());
      expect(answer(await notebook(agent, { action: 'list' }))).toContain('current: kept.ipynb');

      // The person joins the kernel ipython-mcp started for kept.ipynb (a kernel WebSocket, as JupyterLab opens one).
      const keptKernel = status.backend.kernel_id as string;
      const person = new WebSocket(`${lab.url.replace(/^http/, 'ws').replace(/\/+$/, '')}/api/kernels/${keptKernel}/channels?token=${lab.token}`);
      await new Promise((resolve, reject) => {
        person.once('open', resolve);
        person.once('error', reject);
      });
      // create: true makes a new notebook and opens it; kept.ipynb's kernel has the person on it: left running.
      const made = answer(await notebook(agent, { action: 'open', path: 'made.ipynb', create: true }));
      expect(made).toContain('The previous notebook kept.ipynb and its kernel were left running: another client is connected to it.');
      person.close();
      expect(await kernelIds(lab)).toContain(keptKernel);
      // (jupyter-collaboration gives an empty notebook's document one empty cell, as JupyterLab's page does.)
      expect(made).toMatch(/^made and opened made\.ipynb \(\d cells?\): it is the current notebook/);
      expect((await run(agent, 'print("in made")')).text).toContain('in made');
      await savedEventually(lab, 'made.ipynb', (cells) => expect(cells.map((cell) => cellText(cell.source)).at(-1)).toBe(agentCell('print("in made")')));
      await savedEventually(lab, 'kept.ipynb', (cells) => expect(cells.map((cell) => cellText(cell.source)).slice(PERSON_CELLS.length)).toEqual([agentCell('keep = 41'), agentCell('print(keep + 1)')]));
      madeKernel = (await agent.structured('runtime_status', {})).backend.kernel_id as string;
    } finally {
      await agent.close();
    }
    // At exit the session ipython-mcp started for made.ipynb, which nobody joined, is shut down.
    await expect.poll(async () => await kernelIds(lab), { timeout: 15_000 }).not.toContain(madeKernel);
  });

  it("an open asked for during a run waits for the run's last cell: a run's cells all run in one kernel", async () => {
    writeNotebookCells(lab, 'slow.ipynb', [
      { cell_type: 'code', id: 'a', metadata: {}, source: 'import time\ntime.sleep(1)\nstep = 1', outputs: [], execution_count: null },
      { cell_type: 'code', id: 'b', metadata: {}, source: 'import time\ntime.sleep(1)\nstep += 1', outputs: [], execution_count: null },
      { cell_type: 'code', id: 'c', metadata: {}, source: 'print("step", step)', outputs: [], execution_count: null },
    ]);
    writeNotebookCells(lab, 'other.ipynb', []);
    const agent = await startKernelServer(lab, []);
    try {
      expect(answer(await notebook(agent, { action: 'open', path: 'slow.ipynb' }))).toContain('opened slow.ipynb');
      const running = notebook(agent, { action: 'run' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const opened = await notebook(agent, { action: 'open', path: 'other.ipynb' });
      const ran = await running;
      expect(ran.isError, answer(ran)).toBeFalsy();
      expect(answer(ran)).toContain('step 2');
      expect(answer(opened)).toContain('opened other.ipynb');
      expect(await run(agent, 'print(globals().get("step", "absent"))')).toMatchObject({ ok: true, text: expect.stringContaining('absent') });
    } finally {
      await agent.close();
    }
  });

  it('without a Jupyter server answering: list and open answer runtime_unavailable, nothing changes', async () => {
    const port = await freePort();
    const agent = await startServer({ JUPYTER_TOKEN: 'x' }, ['--jupyter', `http://127.0.0.1:${port}/`]);
    try {
      expect(await refused(agent, { action: 'list' }, 'runtime_unavailable', 'refused')).toContain('could not be reached');
      await refused(agent, { action: 'open', path: 'a.ipynb' }, 'runtime_unavailable', 'refused');
      await refused(agent, { action: 'read' }, 'invalid_arguments', 'no_notebook');
      const status = await agent.structured('runtime_status', {});
      expect(status.epoch).toBe(1);
      expect(status.backend).toMatchObject({ kernel_name: 'default', notebook_cells: { state: 'no_notebook' } });
    } finally {
      await agent.close();
    }
  });
});

describe('with a fixed notebook (--notebook) the tool does not choose', () => {
  it('lists read, edit and run only, and refuses list and open', async () => {
    writeNotebookCells(lab, 'fixed.ipynb', PERSON_CELLS);
    await openNotebookSession(lab, 'fixed.ipynb');
    const agent = await startKernelServer(lab, ['--notebook', 'fixed.ipynb']);
    try {
      const { tools } = await agent.client.listTools();
      const tool = tools.find((each) => each.name === 'notebook');
      expect((tool?.inputSchema.properties?.action as { enum: string[] }).enum).toEqual(['read', 'edit', 'run']);
      expect(tool?.inputSchema.properties).not.toHaveProperty('path');
      expect(tool?.description).not.toContain('list:');
      await refused(agent, { action: 'open', path: 'other.ipynb' }, 'invalid_arguments', 'fixed_notebook');
    } finally {
      await agent.close();
    }
  });
});
