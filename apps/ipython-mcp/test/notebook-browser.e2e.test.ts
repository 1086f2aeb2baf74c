// The person's side, in a real browser: JupyterLab with jupyter-collaboration (started by the test), the notebook
// opened in Debian's chromium (driven by playwright-core; no browser is downloaded), and the built binary with
// --notebook as the agent. Screenshots go to apps/ipython-mcp/test-artifacts/ (gitignored), one per step.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

/** Debian's chromium (tooling/scripts/browser-deps.sh installs it); IPYTHON_MCP_TEST_CHROMIUM names another. */
const CHROMIUM = process.env.IPYTHON_MCP_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
/** How long the page may take for one step on a loaded machine (JupyterLab's first load is the longest). */
const STEP_MS = 45_000;
const AGENT_HEADER = '# agent (ipython-mcp-tests), via ipython-mcp';

let lab: RunningJupyter;
let browser: Browser;
let page: Page;
let agent: TestServer;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `notebook-${name}.png`), fullPage: true });
}

/** The code cell in the page whose text contains `text`. */
function cellWith(text: string) {
  return page.locator('.jp-Notebook .jp-CodeCell', { hasText: text });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  lab = await startJupyter('jupyterlab');
  writeFileSync(
    join(lab.rootDir, 'browser.ipynb'),
    JSON.stringify({
      cells: [
        { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# The person\'s notebook' },
        { cell_type: 'code', id: 'person', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
      ],
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    }),
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // The person opens the notebook as JupyterLab's printed link would (the token in the URL, once).
  await page.goto(`${lab.url}lab/tree/browser.ipynb?token=${lab.token}`);
  await page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'rows = 7' }).waitFor({ timeout: STEP_MS });
  await page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first().waitFor({ timeout: STEP_MS });
  agent = await startKernelServer(lab, ['--notebook', 'browser.ipynb']);
}, 240_000);

afterAll(async () => {
  await agent?.close();
  await browser?.close();
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
    await page.keyboard.press('Control+A');
    await page.keyboard.type('helper(7)');
    await page.keyboard.press('Shift+Enter');
    await cellWith('helper(7)').locator('.jp-OutputArea-output', { hasText: '70' }).waitFor({ timeout: STEP_MS });
    await shot('person-calls-helper');
  });

  it("the person presses stop while the agent's cell runs: the answer says interrupted, the state is kept, the page shows it", async () => {
    const answer = agent.call('execute', { code: 'import time\nfor _ in range(600):\n    time.sleep(0.1)' });
    const cell = cellWith('range(600)');
    await cell.waitFor({ timeout: STEP_MS });
    await page.locator('.jp-Notebook-ExecutionIndicator[data-status="busy"]').first().waitFor({ timeout: STEP_MS });
    await page.locator('jp-button[data-command="notebook:interrupt-kernel"], button[data-command="notebook:interrupt-kernel"]').first().click();
    const result = await answer;
    expect(JSON.stringify(result.structuredContent)).toMatch(/KeyboardInterrupt|interrupt/i);
    await cell.locator('.jp-OutputArea-output', { hasText: 'KeyboardInterrupt' }).waitFor({ timeout: STEP_MS });
    expect((await agent.structured('execute', { code: 'helper(3)' })).result.value).toBe(30);
    await shot('stopped');
  });

  it("the agent's presence is visible among the notebook's collaborators", async () => {
    await page.locator('.jp-SideBar [data-id="jp-collaboration-panel"]').first().click();
    await page.locator('.jp-CollaboratorsList', { hasText: 'ipython-mcp agent' }).waitFor({ timeout: STEP_MS });
    await shot('presence');
  });
});
