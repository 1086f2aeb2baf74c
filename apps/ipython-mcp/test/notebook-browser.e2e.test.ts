// The person's side, in a real browser: JupyterLab with jupyter-collaboration (started by the test), the notebook
// opened in Debian's chromium (driven by playwright-core; no browser is downloaded), and the built binary with
// --notebook as the agent. Screenshots go to apps/ipython-mcp/test-artifacts/ (gitignored), one per step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { openPersonPage, STEP_MS, writePersonNotebook, type PersonPage } from './notebook-page.js';

const AGENT_HEADER = '# agent (ipython-mcp-tests), via ipython-mcp';

let lab: RunningJupyter;
let person: PersonPage;
let agent: TestServer;

const shot = (name: string) => person.shot(name);
const cellWith = (text: string) => person.cellWith(text);

beforeAll(async () => {
  lab = await startJupyter('jupyterlab');
  writePersonNotebook(lab, 'browser.ipynb');
  // The person opens the notebook as JupyterLab's printed link would (the token in the URL, once).
  person = await openPersonPage(lab, 'browser.ipynb');
  agent = await startKernelServer(lab, ['--notebook', 'browser.ipynb']);
}, 240_000);

afterAll(async () => {
  await agent?.close();
  await person?.close();
  await lab?.stop();
});

describe('the person sees the agent in their notebook (JupyterLab, chromium)', () => {
  it("the agent's execute makes a cell appear in the page, with its source, its output, and the agent's mark", async () => {
    const ran = await agent.structured('execute', { code: 'def helper(x):\n    return x * 10\nprint("agent ready")\nhelper(2)' });
    expect(ran.result.value).toBe(20);
    const cell = cellWith(AGENT_HEADER);
    await cell.waitFor({ timeout: STEP_MS });
    await cell.locator('.jp-OutputArea-output', { hasText: 'agent ready' }).waitFor({ timeout: STEP_MS });
    await cell.locator('.jp-OutputArea-output', { hasText: '20' }).waitFor({ timeout: STEP_MS });
    await expect(cell.locator('.jp-InputArea-editor').innerText()).resolves.toContain('return x * 10');
    await cell.locator('.jp-InputPrompt', { hasText: /\[\d+\]/ }).waitFor({ timeout: STEP_MS });
    await shot('agent-cell');
  });

  it("the person runs a cell that calls the agent's helper and sees the right value", async () => {
    const editor = cellWith('rows = 7').locator('.cm-content');
    await editor.click();
    await person.page.keyboard.press('Control+A');
    await person.page.keyboard.type('helper(7)');
    await person.page.keyboard.press('Shift+Enter');
    await cellWith('helper(7)').locator('.jp-OutputArea-output', { hasText: '70' }).waitFor({ timeout: STEP_MS });
    await shot('person-calls-helper');
  });

  it("the person presses stop while the agent's cell runs: the answer says interrupted, the state is kept, the page shows it", async () => {
    const answer = agent.call('execute', { code: 'import time\nfor _ in range(600):\n    time.sleep(0.1)' });
    const cell = cellWith('range(600)');
    await cell.waitFor({ timeout: STEP_MS });
    await person.page.locator('.jp-Notebook-ExecutionIndicator[data-status="busy"]').first().waitFor({ timeout: STEP_MS });
    await person.page.locator('jp-button[data-command="notebook:interrupt-kernel"], button[data-command="notebook:interrupt-kernel"]').first().click();
    const result = await answer;
    expect(JSON.stringify(result.structuredContent)).toMatch(/KeyboardInterrupt|interrupt/i);
    await cell.locator('.jp-OutputArea-output', { hasText: 'KeyboardInterrupt' }).waitFor({ timeout: STEP_MS });
    expect((await agent.structured('execute', { code: 'helper(3)' })).result.value).toBe(30);
    await shot('stopped');
  });

  it("the agent's presence is visible among the notebook's collaborators", async () => {
    await person.page.locator('.jp-SideBar [data-id="jp-collaboration-panel"]').first().click();
    await person.page.locator('.jp-CollaboratorsList', { hasText: 'ipython-mcp-tests (agent)' }).waitFor({ timeout: STEP_MS });
    await shot('presence');
  });
});
