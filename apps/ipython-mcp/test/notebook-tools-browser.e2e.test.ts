// The person's page while the agent uses the notebook tool, in a real browser: JupyterLab with jupyter-collaboration
// (started by the test), the notebook opened in Debian's chromium (playwright-core; no browser is downloaded), and
// the built binary with --notebook as the agent. The agent inserts a markdown cell after the person's cell, fixes a
// typo in another, and runs from the first: the page shows each change and the outputs in the person's cells. The
// screenshot goes to apps/ipython-mcp/test-artifacts/ (gitignored); docs/images/notebook-tool.png is one of them.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { writeNotebookCells } from './notebook-harness.js';

const CHROMIUM = process.env.IPYTHON_MCP_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const STEP_MS = 45_000;

let lab: RunningJupyter;
let browser: Browser;
let page: Page;
let agent: TestServer;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  lab = await startJupyter('jupyterlab');
  writeNotebookCells(lab, 'tool.ipynb', [
    { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Sales' },
    { cell_type: 'code', id: 'load', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
    { cell_type: 'code', id: 'total', metadata: {}, source: 'total = rows * 2\nprint(totl)', outputs: [], execution_count: null },
  ]);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await page.goto(`${lab.url}lab/tree/tool.ipynb?token=${lab.token}`);
  await page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'rows = 7' }).waitFor({ timeout: STEP_MS });
  await page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first().waitFor({ timeout: STEP_MS });
  agent = await startKernelServer(lab, ['--notebook', 'tool.ipynb']);
}, 240_000);

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  await lab?.stop();
});

describe('the person sees the notebook tool at work (JupyterLab, chromium)', () => {
  it('an inserted markdown cell, a fixed cell and the outputs of a run appear in the page', async () => {
    const edited = await agent.call('notebook', {
      action: 'edit',
      edits: [
        { op: 'insert', type: 'markdown', source: '*The total doubles the rows (a note by the agent).*', after: 'load' },
        { op: 'replace', cell: 'total', find: 'totl', source: 'total' },
      ],
    });
    expect(edited.isError).toBeFalsy();
    await page.locator('.jp-Notebook .jp-MarkdownCell', { hasText: 'The total doubles the rows' }).waitFor({ timeout: STEP_MS });
    const total = page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'print(total)' });
    await total.waitFor({ timeout: STEP_MS });
    const ran = await agent.call('notebook', { action: 'run', from: 'load' });
    expect(ran.isError, JSON.stringify(ran.content).slice(0, 2000)).toBeFalsy();
    const log = () => lab.stderr().split('\n').filter((line) => /tool\.ipynb|band|overwrit|Saving/i.test(line)).slice(-20).join('\n');
    await total.locator('.jp-OutputArea-output', { hasText: '14' }).waitFor({ timeout: STEP_MS }).catch(async (error: unknown) => {
      const read = await agent.call('notebook', { action: 'read' });
      throw new Error(`${(error as Error).message}\nthe run answered: ${JSON.stringify(ran.content).slice(0, 1000)}\nthe agent reads: ${JSON.stringify(read.content).slice(0, 2000)}\nthe server's save log:\n${log()}`);
    });
    await total.locator('.jp-InputPrompt', { hasText: /\[\d+\]/ }).waitFor({ timeout: STEP_MS });
    // No cell was added for the run: the outputs are in the person's cells.
    await expect(page.locator('.jp-Notebook .jp-Cell').count()).resolves.toBe(4);
    await page.screenshot({ path: join(ARTIFACTS, 'notebook-tool.png') });
  });
});
