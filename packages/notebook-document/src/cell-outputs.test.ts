// The agent cell's outputs as a JupyterLab page applies them. The page is a second document client, synced update by
// update as y-websocket syncs it, whose output list follows JupyterLab 4.6's rules for a remote change
// (@jupyterlab/cells CodeCellModel._onSharedModelChanged and @jupyterlab/outputarea OutputAreaModel): an inserted
// output is appended at the end and merged into the last one when both are the same stream (a merge the page writes
// back into the document), a deleted one is removed at its index, and stream text is appended to the last output.
// The real page is in apps/ipython-mcp/test/notebook-page-outputs.e2e.test.ts; this one runs thousands of sequences.
import { YNotebook, type CellChange, type YCodeCell } from '@jupyter/ydoc';
import fc from 'fast-check';
import { applyAwarenessUpdate, Awareness, encodeAwarenessUpdate } from 'y-protocols/awareness';
import { applyUpdate, encodeStateAsUpdate } from 'yjs';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentCells, type AgentOutput } from './agent-cells.js';
import { renderNotebook } from './notebook-view.js';
import { watchPersonEdits } from './person-marks.js';
import { agentUser } from './shared-notebook.js';

interface PageOutput {
  output_type: string;
  name?: string;
  text?: string;
  [key: string]: unknown;
}

const notebooks: YNotebook[] = [];

/** The agent's document and a page's, synced one update at a time. */
function agentAndPage(): { agent: YNotebook; page: YNotebook } {
  const agent = new YNotebook({ disableDocumentWideUndoRedo: true });
  const page = new YNotebook({ disableDocumentWideUndoRedo: true });
  notebooks.push(agent, page);
  agent.ydoc.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin !== 'page') applyUpdate(page.ydoc, update, 'agent');
  });
  page.ydoc.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin !== 'agent') applyUpdate(agent.ydoc, update, 'page');
  });
  return { agent, page };
}

/** A page's view of one cell's outputs, kept by JupyterLab's rules; `writtenBack` counts the merges it writes back. */
function pageView(cell: YCodeCell): { outputs: PageOutput[]; writtenBack: number } {
  const view = { outputs: [] as PageOutput[], writtenBack: 0 };
  let lastStreamName = '';
  const add = (value: PageOutput): void => {
    const last = view.outputs.at(-1);
    if (value.output_type === 'stream' && value.name === lastStreamName && last !== undefined) {
      last.text = String(last.text) + String(value.text);
      view.writtenBack += 1;
      return;
    }
    view.outputs.push({ ...value });
    lastStreamName = value.output_type === 'stream' ? String(value.name) : '';
  };
  cell.changed.connect((_sender: unknown, change: CellChange) => {
    for (const step of change.streamOutputChange ?? []) {
      const last = view.outputs.at(-1)!;
      if (step.delete !== undefined) last.text = String(last.text).slice(0, String(last.text).length - step.delete);
      if (step.insert !== undefined) last.text = String(last.text) + String(step.insert);
    }
    let retain = 0;
    for (const step of change.outputsChange ?? []) {
      if (step.retain !== undefined) retain += step.retain;
      if (step.delete !== undefined) view.outputs.splice(retain, step.delete);
      for (const output of (step.insert ?? []) as Array<{ toJSON?: () => PageOutput } & PageOutput>) add(output.toJSON?.() ?? output);
    }
  });
  return view;
}

afterEach(() => {
  for (const notebook of notebooks.splice(0)) notebook.dispose();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `outputs` as one agent cell, with a page watching, flushing after each `flushEvery` outputs. */
async function runWithPage(outputs: AgentOutput[], flushEvery: number): Promise<{ page: PageOutput[]; writtenBack: number; saved: unknown[] }> {
  const { agent, page } = agentAndPage();
  const cells = new AgentCells(agent);
  cells.start(1, 'work()', 'tests');
  const view = pageView(page.cells[0] as YCodeCell);
  for (const [index, output] of outputs.entries()) {
    cells.output(1, output);
    if ((index + 1) % flushEvery === 0) await pause(35);
  }
  await pause(35);
  cells.end(1, { executionCount: 1, status: 'ok' });
  const saved = (page.cells[0] as YCodeCell).getOutputs();
  expect((agent.cells[0] as YCodeCell).getOutputs()).toEqual(saved);
  return { page: view.outputs, writtenBack: view.writtenBack, saved };
}

const stdout = (text: string): AgentOutput => ({ type: 'stream', name: 'stdout', text });
const stderr = (text: string): AgentOutput => ({ type: 'stream', name: 'stderr', text });

describe('the agent cell on a page that applies changes as JupyterLab does', () => {
  it('print, wait, print: one stream grows in place; nothing is merged twice or written back', async () => {
    const run = await runWithPage([stdout('C first\n'), stdout('C second\n')], 1);
    expect(run.writtenBack).toBe(0);
    expect(run.page).toEqual([{ output_type: 'stream', name: 'stdout', text: 'C first\nC second\n' }]);
    expect(run.saved).toEqual(run.page);
  });

  it('print then stderr, then a value, then an error: every kind stays, in order', async () => {
    const run = await runWithPage(
      [
        stdout('D out\n'),
        stderr('D err\n'),
        stdout('more\n'),
        { type: 'execute_result', executionCount: 1, data: { 'text/plain': '42' }, metadata: {} },
        { type: 'error', ename: 'ValueError', evalue: 'no', traceback: ['tb'] },
      ],
      1,
    );
    expect(run.writtenBack).toBe(0);
    expect(run.page.map((output) => output.output_type === 'stream' ? `${output.name}:${output.text}` : output.output_type)).toEqual([
      'stdout:D out\n',
      'stderr:D err\n',
      'stdout:more\n',
      'execute_result',
      'error',
    ]);
    expect(run.saved).toEqual(run.page);
  });

  it('a display updated in the middle keeps its place; clear_output(wait) empties before the next output', async () => {
    const run = await runWithPage(
      [
        stdout('a\n'),
        { type: 'display_data', data: { 'text/plain': 'v1' }, metadata: {}, displayId: 'd' },
        stdout('b\n'),
        { type: 'update_display_data', data: { 'text/plain': 'v2' }, metadata: {}, displayId: 'd' },
        stdout('c\n'),
      ],
      1,
    );
    expect(run.page.map((output) => output.text ?? (output.data as Record<string, string>)['text/plain'])).toEqual(['a\n', 'v2', 'b\nc\n']);
    const cleared = await runWithPage([stdout('x\n'), { type: 'clear_output', wait: true }, stdout('y\n')], 1);
    expect(cleared.page).toEqual([{ output_type: 'stream', name: 'stdout', text: 'y\n' }]);
    expect(cleared.writtenBack).toBe(0);
  });

  it('any sequence of outputs, written in any bursts: the page holds what the document holds, and writes nothing back', async () => {
    const output = fc.oneof(
      fc.record({ type: fc.constant('stream' as const), name: fc.constantFrom('stdout' as const, 'stderr' as const), text: fc.string({ minLength: 1, maxLength: 8 }) }),
      fc.record({ type: fc.constant('display_data' as const), data: fc.record({ 'text/plain': fc.string() }), metadata: fc.constant({}), displayId: fc.constantFrom(undefined, 'p', 'q') }),
      fc.record({ type: fc.constant('update_display_data' as const), data: fc.record({ 'text/plain': fc.string() }), metadata: fc.constant({}), displayId: fc.constantFrom(undefined, 'p', 'q') }),
      fc.record({ type: fc.constant('clear_output' as const), wait: fc.boolean() }),
      fc.constant<AgentOutput>({ type: 'execute_result', executionCount: 1, data: { 'text/plain': '1' }, metadata: {} }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(output, { maxLength: 14 }), fc.integer({ min: 1, max: 4 }), async (outputs, flushEvery) => {
        const run = await runWithPage(outputs as AgentOutput[], flushEvery);
        expect(run.writtenBack).toBe(0);
        expect(run.page).toEqual(run.saved);
      }),
      { numRuns: 40 },
    );
  }, 60_000);

  it("a running cell the person deleted and brought back with undo gets its later outputs and its end", async () => {
    const notebook = new YNotebook({ disableDocumentWideUndoRedo: false });
    notebooks.push(notebook);
    const cells = new AgentCells(notebook);
    cells.start(1, 'long()', 'tests');
    cells.output(1, stdout('before\n'));
    await pause(35);
    notebook.undoManager.stopCapturing();
    notebook.deleteCell(0);
    cells.output(1, stdout('while gone\n'));
    await pause(35);
    notebook.undoManager.stopCapturing();
    notebook.undo();
    expect(notebook.cells).toHaveLength(1);
    cells.output(1, stdout('after\n'));
    cells.end(1, { executionCount: 4, status: 'ok' });
    const cell = notebook.cells[0] as YCodeCell;
    expect(cell.executionState).toBe('idle');
    expect(cell.execution_count).toBe(4);
    expect(cell.getOutputs()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'before\nwhile gone\nafter\n' }]);
  });
});

describe("an agent cell the person edits or runs is the person's too", () => {
  it("the person's edit and run mark the metadata and the notebook resource; the agent's own writes and another agent's edit do not", async () => {
    const { agent, page } = agentAndPage();
    const stop = watchPersonEdits(agent);
    try {
      const cells = new AgentCells(agent);
      cells.start(1, 'x = 1', 'claude-code');
      cells.output(1, stdout('agent output\n'));
      cells.end(1, { executionCount: 1, status: 'ok' });
      cells.start(2, 'y = 2', 'claude-code');
      cells.end(2, { executionCount: 2, status: 'ok' });
      await pause(10);
      expect(agent.cells[0]!.getMetadata('ipython_mcp')).toEqual({ agent: true, client: 'claude-code' });
      // Another ipython-mcp (its awareness names it) edits the second cell: still the agent's alone.
      const other = new Awareness(page.ydoc);
      other.setLocalState({ user: agentUser('codex (agent)', 'c0ffee') });
      applyAwarenessUpdate(agent.awareness, encodeAwarenessUpdate(other, [page.ydoc.clientID]), 'test');
      (page.cells[1] as YCodeCell).setSource('y = 3');
      await pause(10);
      expect(agent.cells[1]!.getMetadata('ipython_mcp')).toEqual({ agent: true, client: 'claude-code' });
      other.destroy();
      // The person (no ipython-mcp awareness) edits the first cell, then runs it.
      const person = new YNotebook({ disableDocumentWideUndoRedo: true });
      notebooks.push(person);
      person.ydoc.on('update', (update: Uint8Array, origin: unknown) => {
        if (origin !== 'agent') applyUpdate(agent.ydoc, update, 'person');
      });
      applyUpdate(person.ydoc, encodeStateAsUpdate(agent.ydoc), 'agent');
      (person.cells[0] as YCodeCell).setSource('x = 10');
      await pause(10);
      expect(agent.cells[0]!.getMetadata('ipython_mcp')).toEqual({ agent: true, client: 'claude-code', edited_by_person: true });
      (person.cells[0] as YCodeCell).executionState = 'running';
      await pause(10);
      expect(agent.cells[0]!.getMetadata('ipython_mcp')).toEqual({ agent: true, client: 'claude-code', edited_by_person: true, run_by_person: true });
      expect(renderNotebook(agent, 'n.ipynb', 10_000)).toContain("· the agent's, edited and run by the person ·");
    } finally {
      stop();
    }
  });
});
