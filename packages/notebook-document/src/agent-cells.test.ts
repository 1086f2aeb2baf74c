import { YNotebook, type YCodeCell } from '@jupyter/ydoc';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { applyAwarenessUpdate, encodeAwarenessUpdate, removeAwarenessStates } from 'y-protocols/awareness';
import { AgentCells, ORDER_GRACE_MS, RUNS_AWARENESS_FIELD, agentCellHeader } from './agent-cells.js';
import { renderNotebook } from './notebook-view.js';

const notebooks: YNotebook[] = [];

function notebookWithPersonCells(): YNotebook {
  const notebook = new YNotebook({ disableDocumentWideUndoRedo: true });
  notebooks.push(notebook);
  notebook.insertCells(0, [
    { cell_type: 'markdown', source: '# Mine' },
    { cell_type: 'code', source: 'x = 1' },
  ]);
  return notebook;
}

/** Outputs are written after a short gathering delay; waits for it. */
const flushed = () => new Promise((resolve) => setTimeout(resolve, 60));

afterEach(() => {
  for (const notebook of notebooks.splice(0)) notebook.dispose();
});

describe('AgentCells', () => {
  it("inserts after the last cell, marks it the agent's, fills outputs, sets the count; the person's cells stay", async () => {
    const notebook = notebookWithPersonCells();
    const cells = new AgentCells(notebook);
    cells.start(1, 'print(1)\n2', 'claude-code');
    cells.output(1, { type: 'stream', name: 'stdout', text: 'a' });
    cells.output(1, { type: 'stream', name: 'stdout', text: 'b\n' });
    cells.output(1, { type: 'execute_result', executionCount: 5, data: { 'text/plain': '2' }, metadata: {} });
    cells.end(1, { executionCount: 5, status: 'ok' });
    const json = notebook.toJSON();
    expect(json.cells.slice(0, 2).map((cell) => cell.source)).toEqual(['# Mine', 'x = 1']);
    const agent = json.cells[2] as Record<string, any>;
    expect(agent.source).toBe(`${agentCellHeader('claude-code')}\nprint(1)\n2`);
    expect(agent.metadata).toEqual({ ipython_mcp: { agent: true, client: 'claude-code' }, tags: ['agent'] });
    expect(agent.execution_count).toBe(5);
    expect(agent.outputs).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'ab\n' },
      { output_type: 'execute_result', execution_count: 5, data: { 'text/plain': '2' }, metadata: {} },
    ]);
    expect(renderNotebook(notebook, 'n.ipynb', 10_000)).toContain("code [5] · the agent's");
  });

  it('a cell the person deleted while it ran is let go: later outputs go nowhere, nothing throws', async () => {
    const notebook = notebookWithPersonCells();
    const cells = new AgentCells(notebook);
    cells.start(1, 'long()', undefined);
    notebook.deleteCell(2);
    cells.output(1, { type: 'stream', name: 'stdout', text: 'late' });
    await flushed();
    cells.end(1, { executionCount: 3, status: 'ok' });
    expect(notebook.cells).toHaveLength(2);
    expect(cells.counts).toEqual({ inserted: 1, deletedWhileRunning: 1, staleEnded: 0 });
  });

  it('a running cell moved (a copy, as JupyterLab moves cells) runs on in the copy: [*], the outputs, then its count; the run record goes at the end', async () => {
    const notebook = notebookWithPersonCells();
    const cells = new AgentCells(notebook);
    cells.start(1, 'long()', 'claude-code');
    cells.output(1, { type: 'stream', name: 'stdout', text: 'a\n' });
    await flushed();
    expect((notebook.cells[2] as YCodeCell).getMetadata('ipython_mcp')).toMatchObject({ agent: true, running: expect.any(String) });
    notebook.moveCell(2, 0);
    await flushed();
    const moved = notebook.cells[0] as YCodeCell;
    expect(moved.executionState).toBe('running');
    cells.output(1, { type: 'stream', name: 'stdout', text: 'b\n' });
    cells.end(1, { executionCount: 4, status: 'ok' });
    expect(notebook.cells).toHaveLength(3);
    expect(moved.execution_count).toBe(4);
    expect(moved.executionState).toBe('idle');
    expect(moved.getOutputs()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'a\nb\n' }]);
    expect(moved.getMetadata('ipython_mcp')).toEqual({ agent: true, client: 'claude-code' });
    expect(cells.counts.deletedWhileRunning).toBe(0);
  });

  it('a running cell cut and pasted after it ended (a new id, what it held at the cut) is finished: all its outputs, its count', async () => {
    const notebook = notebookWithPersonCells();
    const cells = new AgentCells(notebook);
    cells.start(1, 'long()', undefined);
    cells.output(1, { type: 'stream', name: 'stdout', text: 'a\n' });
    await flushed();
    const clipboard = (notebook.cells[2] as YCodeCell).toJSON();
    notebook.deleteCell(2);
    cells.output(1, { type: 'stream', name: 'stdout', text: 'b\n' });
    cells.output(1, { type: 'execute_result', executionCount: 6, data: { 'text/plain': '2' }, metadata: {} });
    cells.end(1, { executionCount: 6, status: 'ok' });
    notebook.insertCell(1, { ...clipboard, id: undefined } as never);
    notebook.insertCell(3, { ...clipboard, id: undefined } as never);
    await flushed();
    for (const index of [1, 3]) {
      const pasted = notebook.cells[index] as YCodeCell;
      expect(pasted.execution_count).toBe(6);
      expect(pasted.getOutputs()).toEqual([
        { output_type: 'stream', name: 'stdout', text: 'a\nb\n' },
        { output_type: 'execute_result', execution_count: 6, data: { 'text/plain': '2' }, metadata: {} },
      ]);
      expect(pasted.getMetadata('ipython_mcp')).toEqual({ agent: true });
    }
    // Cut then pasted: moved, not deleted.
    expect(cells.counts.deletedWhileRunning).toBe(0);
    // A copy of the ended cell made now is the person's: nothing finishes it.
    notebook.insertCell(0, { cell_type: 'code', source: 'long()', metadata: { ipython_mcp: { agent: true } }, outputs: [], execution_count: null } as never);
    await flushed();
    expect((notebook.cells[0] as YCodeCell).execution_count).toBe(null);
  });

  it('an ended cell is never touched again (late events for it are ignored)', async () => {
    const notebook = notebookWithPersonCells();
    const cells = new AgentCells(notebook);
    cells.start(1, 'x', undefined);
    cells.end(1, { executionCount: 1, status: 'ok' });
    (notebook.cells[2] as YCodeCell).setSource('the person rewrote it');
    cells.output(1, { type: 'stream', name: 'stdout', text: 'late' });
    cells.end(1, { executionCount: 9, status: 'ok' });
    await flushed();
    const cell = notebook.cells[2] as YCodeCell;
    expect(cell.getSource()).toBe('the person rewrote it');
    expect(cell.execution_count).toBe(1);
    expect(cell.getOutputs()).toEqual([]);
  });

  it('clear_output and update_display_data act on the cell as in JupyterLab', async () => {
    const notebook = notebookWithPersonCells();
    const cells = new AgentCells(notebook);
    cells.start(1, 'x', undefined);
    cells.output(1, { type: 'display_data', data: { 'text/plain': 'v1' }, metadata: {}, displayId: 'd' });
    cells.output(1, { type: 'update_display_data', data: { 'text/plain': 'v2' }, metadata: {}, displayId: 'd' });
    cells.output(1, { type: 'stream', name: 'stdout', text: 'gone' });
    cells.output(1, { type: 'clear_output', wait: true });
    cells.output(1, { type: 'stream', name: 'stdout', text: 'kept' });
    cells.end(1, { executionCount: 2, status: 'ok' });
    expect((notebook.cells[2] as YCodeCell).getOutputs()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'kept' }]);
  });

  it('bounds what one cell writes, whatever the outputs (a flood never reaches the document whole)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 3000 }), { maxLength: 60 }), (chunks) => {
        const notebook = notebookWithPersonCells();
        const cells = new AgentCells(notebook, { maxCellOutputChars: 4096 });
        cells.start(1, 'flood()', undefined);
        chunks.forEach((text, index) => cells.output(1, { type: 'stream', name: index % 2 === 0 ? 'stdout' : 'stderr', text }));
        cells.end(1, { executionCount: 1, status: 'ok' });
        const written = JSON.stringify((notebook.cells[2] as YCodeCell).getOutputs());
        expect(written.length).toBeLessThan(3 * 4096);
        const total = chunks.reduce((sum, text) => sum + text.length, 0);
        if (total > 8192) expect(written).toContain('is not shown here');
      }),
      { numRuns: 40 },
    );
  });
});

describe('the order agent cells ran in', () => {
  it("an agent cell that ended below another agent's cell still running moves above it (the kernel ran it first)", async () => {
    const notebook = notebookWithPersonCells();
    const ours = new AgentCells(notebook);
    const theirs = new AgentCells(notebook);
    theirs.start(1, 'their_cell()', 'codex');
    ours.start(1, 'our_cell()', 'claude-code');
    ours.end(1, { executionCount: 24, status: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, ORDER_GRACE_MS + 50));
    expect(notebook.cells.map((cell) => cell.getSource().split('\n')[1])).toEqual([undefined, undefined, 'our_cell()', 'their_cell()']);
    const moved = notebook.cells[2] as YCodeCell;
    expect(moved.execution_count).toBe(24);
    expect(moved.getMetadata('ipython_mcp')).toEqual({ agent: true, client: 'claude-code' });
    theirs.end(1, { executionCount: 25, status: 'ok' });
    expect((notebook.cells[3] as YCodeCell).execution_count).toBe(25);
    // A cell above that has ended (whatever its count: a restarted kernel counts from 1 again) is left where it is.
    ours.start(2, 'later()', 'claude-code');
    ours.end(2, { executionCount: 1, status: 'ok' });
    expect(notebook.cells.at(-1)!.getSource()).toContain('later()');
  });

  it("a cell of the same mirror is never passed (its cells are sent in the kernel's order), nor one that ends within the grace", async () => {
    const notebook = notebookWithPersonCells();
    const ours = new AgentCells(notebook);
    const theirs = new AgentCells(notebook);
    ours.start(1, 'first()', 'claude-code');
    ours.start(2, 'second()', 'claude-code');
    theirs.start(1, 'theirs()', 'codex');
    ours.end(2, { executionCount: 2, status: 'ok' });
    ours.end(1, { executionCount: 1, status: 'ok' });
    theirs.end(1, { executionCount: 3, status: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, ORDER_GRACE_MS + 50));
    expect(notebook.cells.slice(2).map((cell) => cell.getSource().split('\n')[1])).toEqual(['first()', 'second()', 'theirs()']);
  });
});

describe('a cell another ipython-mcp left running', () => {
  const GRACE_MS = 80;
  const waitMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Another ipython-mcp's view: its own notebook, whose awareness state (its runs' prefix) reaches `notebook`'s room. */
  function otherIpythonMcp(notebook: YNotebook): { run: string; leave: () => void; come: () => void } {
    const other = new YNotebook({ disableDocumentWideUndoRedo: true });
    notebooks.push(other);
    const cells = new AgentCells(other, { staleRunMs: GRACE_MS });
    const come = () => {
      // A state coming back is announced anew (its clock goes up, as y-websocket's renewal does).
      other.awareness.setLocalState({ ...other.awareness.getLocalState() });
      applyAwarenessUpdate(notebook.awareness, encodeAwarenessUpdate(other.awareness, [other.ydoc.clientID]), 'room');
    };
    come();
    const prefix = other.awareness.getLocalState()?.[RUNS_AWARENESS_FIELD] as string;
    cells.dispose();
    return { run: `${prefix}-1`, leave: () => removeAwarenessStates(notebook.awareness, [other.ydoc.clientID], 'room'), come };
  }
  function runningCellOf(notebook: YNotebook, run: string): YCodeCell {
    const cell = notebook.insertCell(notebook.cells.length, { cell_type: 'code', source: '# agent, via ipython-mcp\nlong()', metadata: { ipython_mcp: { agent: true, running: run } }, outputs: [{ output_type: 'stream', name: 'stdout', text: 'so far\n' }] } as never) as YCodeCell;
    cell.executionState = 'running';
    return cell;
  }

  it('whose ipython-mcp left the room: ended after the grace, its outputs kept, a note, the record gone; never before', async () => {
    const notebook = notebookWithPersonCells();
    const gone = otherIpythonMcp(notebook);
    gone.leave();
    const cell = runningCellOf(notebook, gone.run);
    const cells = new AgentCells(notebook, { staleRunMs: GRACE_MS });
    await waitMs(GRACE_MS / 2);
    expect(cell.executionState).toBe('running');
    await waitMs(GRACE_MS * 2);
    expect(cell.executionState).toBe('idle');
    expect(cell.getMetadata('ipython_mcp')).toEqual({ agent: true });
    expect(cell.getOutputs()).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'so far\n' },
      { output_type: 'stream', name: 'stderr', text: expect.stringMatching(/^\[ipython-mcp: the ipython-mcp that ran this cell left before the cell ended; the kernel may still be running it/) },
    ]);
    expect(cells.counts.staleEnded).toBe(1);
    expect(notebook.cells).toHaveLength(3);
    cells.dispose();
  });

  it('whose ipython-mcp is in the room, or comes back within the grace: left alone; its own cells are never touched', async () => {
    const notebook = notebookWithPersonCells();
    const present = otherIpythonMcp(notebook);
    const theirs = runningCellOf(notebook, present.run);
    const cells = new AgentCells(notebook, { staleRunMs: GRACE_MS });
    cells.start(1, 'mine()', undefined);
    await waitMs(GRACE_MS * 2);
    expect(theirs.executionState).toBe('running');
    // A connection that drops and comes back within the grace.
    present.leave();
    await waitMs(GRACE_MS / 3);
    present.come();
    await waitMs(GRACE_MS * 2);
    expect(theirs.executionState).toBe('running');
    expect((notebook.cells[3] as YCodeCell).executionState).toBe('running');
    expect(cells.counts.staleEnded).toBe(0);
    // Gone for good: ended after the grace; this ipython-mcp's own running cell goes on.
    present.leave();
    await waitMs(GRACE_MS * 3);
    expect(theirs.executionState).toBe('idle');
    expect((notebook.cells[3] as YCodeCell).executionState).toBe('running');
    cells.end(1, { executionCount: 2, status: 'ok' });
    expect(cells.counts.staleEnded).toBe(1);
    cells.dispose();
  });

  it('dispose stops the sweep: nothing is ended after it', async () => {
    const notebook = notebookWithPersonCells();
    const gone = otherIpythonMcp(notebook);
    gone.leave();
    const cell = runningCellOf(notebook, gone.run);
    const cells = new AgentCells(notebook, { staleRunMs: GRACE_MS });
    cells.dispose();
    await waitMs(GRACE_MS * 2);
    expect(cell.executionState).toBe('running');
  });
});
