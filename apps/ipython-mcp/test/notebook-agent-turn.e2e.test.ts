// A real agent turn on the person's notebook: JupyterLab with jupyter-collaboration, the notebook open in a session,
// and the real `claude -p` driving `ipython-mcp --jupyter URL --notebook PATH` for a scripted stand-in model
// (fixtures/stand-in-model.ts): the model reads the notebook, inserts a cell after the person's, runs from there, and
// answers with the value only the run's answer had. The saved file shows the cell and its output.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, testPython } from './harness.js';
import { agentSuite, expectRun, runClaudeCode } from './fixtures/agent-runs.js';
import { startStandInModel, type ModelTurn } from './fixtures/stand-in-model.js';
import { startJupyter, type RunningJupyter } from './jupyter-harness.js';
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
});
