// A real agent turn on the person's notebook: JupyterLab with jupyter-collaboration, the notebook open in a session,
// and the real `claude -p` driving `ipython-mcp --jupyter URL --notebook PATH` for a scripted stand-in model
// (fixtures/stand-in-model.ts): the model reads the notebook, inserts a cell after the person's, runs from there, and
// answers with the value only the run's answer had. The saved file shows the cell and its output. The second turn
// has the server installed once with `--jupyter URL` alone: the model lists the server's notebooks, opens the person's
// by name, and works in it; the person's document client sees the cell and its output live.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSharedNotebook } from '@ipython-mcp/notebook-document';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, testPython } from './harness.js';
import { agentSuite, expectRun, runClaudeCode } from './fixtures/agent-runs.js';
import { startStandInModel, type ModelTurn, type Step } from './fixtures/stand-in-model.js';
import { startJupyter, type RunningJupyter } from './jupyter-harness.js';
import { retry } from './http-harness.js';
import { cellText, openNotebookSession, savedEventually, writeNotebookCells } from './notebook-harness.js';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-notebook-agent-'));
let lab: RunningJupyter;

beforeAll(async () => {
  lab = await startJupyter('jupyterlab');
}, 120_000);

afterAll(async () => {
  await lab?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function seen(turn: ModelTurn | undefined): string {
  return JSON.stringify(turn?.toolResult ?? null);
}

/** The text the client handed back for the previous tool call, as the model reads it. */
function resultText(turn: ModelTurn | undefined): string {
  const content = (turn?.toolResult as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Array<{ type?: string; text?: string }>).map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('\n');
}

describe('Claude Code on the person\'s notebook (claude -p)', () => {
  const { bin, marker } = agentSuite('claude');

  it('reads the notebook, inserts a cell after the person\'s, runs from there, and says the value', async () => {
    writeNotebookCells(lab, 'turn.ipynb', [
      { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Rows' },
      { cell_type: 'code', id: 'load', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
    ]);
    await openNotebookSession(lab, 'turn.ipynb');
    const model = await startStandInModel('anthropic', [
      { tool: 'notebook', input: { action: 'read' } },
      { tool: 'notebook', input: { action: 'edit', edits: [{ op: 'insert', type: 'code', source: 'print(rows * 6)', after: 'load' }] } },
      { tool: 'notebook', input: { action: 'run', from: 'load' } },
      { text: (turn) => `The cell printed ${seen(turn).includes('\\n42\\n') ? '42' : 'nothing'}.` },
    ]);
    try {
      const home = mkdtempSync(join(scratch, 'claude-home-'));
      const server = {
        command: process.execPath,
        args: [CLI, '--jupyter', lab.url, '--notebook', 'turn.ipynb'],
        env: { IPYTHON_MCP_PYTHON: testPython(), JUPYTER_TOKEN: lab.token },
      };
      const result = await runClaudeCode({ bin: bin(), model, prompt: 'Add a cell that prints rows * 6 and run it.', home, servers: { ipython: server }, marker });
      expectRun(result);
      expect(model.turns.length, `other requests: ${model.sideRequests.join(', ')}`).toBeGreaterThanOrEqual(4);
      expect(model.turns[0]!.offered).toContain('mcp__ipython__notebook');
      expect(seen(model.turns[1])).toContain('id load');
      expect(seen(model.turns[2])).toContain('inserted code cell');
      expect(seen(model.turns[3])).toContain('--- cell 3');
      expect(result.stdout, seen(model.turns[3]).slice(0, 3000)).toContain('The cell printed 42.');
      await savedEventually(lab, 'turn.ipynb', (cells) => {
        expect(cells.map((cell) => cellText(cell.source))).toEqual(['# Rows', 'rows = 7', 'print(rows * 6)']);
        expect(cellText(cells[2]!.outputs[0]?.text)).toBe('42\n');
      });
    } finally {
      await model.close();
    }
  });

  it('installed once with --jupyter URL alone: lists the notebooks, opens the person\'s by name, reads, inserts a cell, runs it', async () => {
    mkdirSync(join(lab.rootDir, 'reports'), { recursive: true });
    writeNotebookCells(lab, 'reports/q2-sales.ipynb', [{ cell_type: 'code', id: 'old', metadata: {}, source: 'rows = 2', outputs: [], execution_count: null }]);
    writeNotebookCells(lab, 'reports/q3-sales.ipynb', [
      { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Q3 sales' },
      { cell_type: 'code', id: 'load', metadata: {}, source: 'rows = 9', outputs: [], execution_count: null },
    ]);
    // The person saved the notebook and has it open: its session runs, their tab is a client of the shared document.
    const personKernel = await openNotebookSession(lab, 'reports/q3-sales.ipynb');
    const person = await openSharedNotebook({ url: lab.url, token: lab.token, path: 'reports/q3-sales.ipynb', displayName: 'person' });
    // The model reads each answer and takes its next step from it: the path from the list, the last cell's id from
    // the read, the new cell's id from the edit, and the value from the run.
    const found: { path?: string | undefined; last?: string | undefined; inserted?: string | undefined } = {};
    const model = await startStandInModel('anthropic', (turn, index): Step => {
      const text = resultText(turn);
      switch (index) {
        case 0:
          return { tool: 'notebook', input: { action: 'list' } };
        case 1:
          found.path = /^- (\S*q3-sales\.ipynb) ·/m.exec(text)?.[1];
          return { tool: 'notebook', input: { action: 'open', path: found.path ?? 'not listed' } };
        case 2:
          return { tool: 'notebook', input: { action: 'read' } };
        case 3:
          found.last = [...text.matchAll(/^--- cell \d+ · .* · id (\S+)$/gm)].at(-1)?.[1];
          return { tool: 'notebook', input: { action: 'edit', edits: [{ op: 'insert', type: 'code', source: 'import os\nprint(f"{rows * 6} rows, kernel {os.getpid()}")', after: found.last ?? 'none' }] } };
        case 4:
          found.inserted = /^inserted code cell (\S+) after/m.exec(text)?.[1];
          return { tool: 'notebook', input: { action: 'run', from: found.last ?? 'none', to: found.inserted ?? 'none' } };
        default:
          return { text: `The new cell printed: ${/^(\d+ rows, kernel \d+)$/m.exec(text)?.[1] ?? 'nothing'}.` };
      }
    });
    try {
      const home = mkdtempSync(join(scratch, 'claude-home-'));
      // No notebook flag: the server knows the Jupyter server only.
      const server = { command: process.execPath, args: [CLI, '--jupyter', lab.url], env: { IPYTHON_MCP_PYTHON: testPython(), JUPYTER_TOKEN: lab.token } };
      const result = await runClaudeCode({ bin: bin(), model, prompt: 'Open my Q3 sales notebook, add a cell that prints rows * 6 and run it.', home, servers: { ipython: server }, marker });
      expectRun(result);
      const shown = model.turns.map((turn, index) => `[${index}] ${resultText(turn).slice(0, 600)}`).join('\n');
      expect(model.turns.length, `other requests: ${model.sideRequests.join(', ')}\n${shown}`).toBeGreaterThanOrEqual(6);
      expect(model.turns[0]!.offered).toContain('mcp__ipython__notebook');
      // (The first turn's notebook is on this server too.)
      expect(resultText(model.turns[1]), shown).toMatch(/^\d notebooks on \S+ \(\d with a running kernel\); current: none/);
      expect(resultText(model.turns[1])).toContain('- reports/q2-sales.ipynb · no kernel\n');
      expect(resultText(model.turns[1])).toMatch(new RegExp(`- reports/q3-sales\\.ipynb · kernel python3 \\w+ \\(id ${personKernel}\\)\n`));
      expect(found.path).toBe('reports/q3-sales.ipynb');
      expect(resultText(model.turns[2]), shown).toContain('opened reports/q3-sales.ipynb (2 cells): it is the current notebook');
      expect(resultText(model.turns[3]), shown).toContain('--- cell 2 · code [ ] · id load\nrows = 9');
      expect(found.last).toBe('load');
      expect(found.inserted, shown).toMatch(/\S/);
      expect(resultText(model.turns[5]), shown).toContain(`--- cell 3 · id ${found.inserted}`);
      // The value only the run produced: the kernel's process id, with the person's rows.
      const said = /The new cell printed: (54 rows, kernel (\d+))\./.exec(result.stdout);
      expect(said, `${result.stdout}\n${shown}`).not.toBeNull();
      const printed = `${said![1]}\n`;
      await savedEventually(lab, 'reports/q3-sales.ipynb', (cells) => {
        expect(cells.map((cell) => cellText(cell.source))).toEqual(['# Q3 sales', 'rows = 9', 'import os\nprint(f"{rows * 6} rows, kernel {os.getpid()}")']);
        expect(cells[2]).toMatchObject({ id: found.inserted, metadata: { ipython_mcp: { agent: true } } });
        expect(cellText(cells[2]!.outputs[0]?.text)).toBe(printed);
      });
      // The person's tab: the same cell, its output, marked as the agent's and run by it.
      await retry(() => {
        const cells = person.notebook.toJSON().cells as unknown as Array<Record<string, any>>;
        expect(cells.map((cell) => cell.id)).toEqual(['intro', 'load', found.inserted]);
        expect(cells[2]).toMatchObject({ outputs: [expect.objectContaining({ output_type: 'stream', name: 'stdout', text: printed })], metadata: { tags: ['agent'], ipython_mcp: { agent: true } } });
        expect(cells[2]!.metadata.ipython_mcp.run_by).toEqual(expect.any(String));
      }, 10_000);
      // The person's kernel ran it (their session, left running), and nothing was added to the other notebook.
      expect((await lab.rest('GET', 'api/kernels')).body).toEqual(expect.arrayContaining([expect.objectContaining({ id: personKernel })]));
      await savedEventually(lab, 'reports/q2-sales.ipynb', (cells) => expect(cells.map((cell) => cellText(cell.source))).toEqual(['rows = 2']));
    } finally {
      person.close();
      await model.close();
    }
  });
});
