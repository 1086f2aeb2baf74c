// The sign of an agent cell out of the person's view (issue 58), from ipython-mcp's JupyterLab extension
// (packages/jupyterlab-extension, installed into the test environment's JupyterLab by bootstrap --dev): a badge at
// the notebook's edge naming the agent and its cell, in the agent's colour, that takes the person there; and the bar
// and name on each agent cell. The person's own cells, and a notebook without an agent, give no sign.
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { ARTIFACTS, inView, openPersonPage, STEP_MS, until, writeLongNotebook, writePersonNotebook, type PersonPage } from './notebook-page.js';

let lab: RunningJupyter;

beforeAll(async () => {
  lab = await startJupyter('jupyterlab');
}, 240_000);

afterAll(async () => {
  await lab?.stop();
});

/** A file the test creates when a cell it runs may end (the cell waits for it: no race with the page's steps). */
function releaseFile(): { path: string; release(): void; remove(): void } {
  const path = join(tmpdir(), `ipython-mcp-offscreen-${randomUUID()}`);
  return { path, release: () => writeFileSync(path, ''), remove: () => rmSync(path, { force: true }) };
}

/** Cell code that prints `marker`, then waits until `path` exists. */
function waitingCode(marker: string, path: string): string {
  return `import os, time\nprint('${marker}', flush=True)\nwhile not os.path.exists(${JSON.stringify(path)}):\n    time.sleep(0.05)`;
}

/** The person's view goes back to the notebook's top, as their mouse wheel takes it. */
async function wheelToTop(person: PersonPage): Promise<void> {
  await person.page.mouse.move(700, 500);
  await person.page.mouse.wheel(0, -100_000);
}

/** Whether a sign shows anywhere in the page's view, asked over `ms` (several of the extension's looks). */
async function signsShownOver(person: PersonPage, ms: number): Promise<number> {
  let shown = 0;
  for (const until = Date.now() + ms; Date.now() < until; ) {
    shown = Math.max(shown, await inView(person.page, '.ipython-mcp-offscreen'));
    await person.page.waitForTimeout(200);
  }
  return shown;
}

/** A screenshot of `target` (whole, or its bottom 240 pixels) into the artifacts directory, for the docs. */
async function clipShot(person: PersonPage, name: string, target: Locator, part: 'whole' | 'bottom'): Promise<void> {
  const box = (await target.boundingBox())!;
  const clip = part === 'whole' ? { ...box, y: box.y - 30, height: box.height + 40 } : { ...box, y: box.y + box.height - 240, height: 240 };
  await person.page.screenshot({ path: join(ARTIFACTS, `notebook-${name}.png`), clip });
}

/** The agent's name the extension draws at the bottom right of an agent cell's input (CSS `content`). */
function agentLabel(cell: Locator): Promise<string> {
  return cell.locator('.jp-InputArea-editor').evaluate((node) => node.ownerDocument.defaultView!.getComputedStyle(node, '::after').content);
}

describe("the sign of an agent cell out of the person's view (ipython-mcp's JupyterLab extension, chromium)", () => {
  it('without an agent: no sign, no agent mark, no console error; the person\'s own cell running below the view gives no sign', async () => {
    const PATH = 'quiet.ipynb';
    writeLongNotebook(lab, PATH, "import time\ntime.sleep(6)  # the person's last cell");
    const person = await openPersonPage(lab, PATH, 'quiet');
    try {
      const { page } = person;
      // The extension is loaded: its two (hidden) badges are on the notebook panel.
      await page.locator('.jp-NotebookPanel .ipython-mcp-offscreen-below').waitFor({ state: 'attached', timeout: STEP_MS });
      const last = person.cellWith("# the person's last cell");
      // The cells above the last one take their real heights as they come into view (JupyterLab's windowing), so
      // the first click may land on another cell: the person clicks until the last cell is the active one.
      await until(async () => {
        await last.scrollIntoViewIfNeeded();
        await last.locator('.jp-InputPrompt').click();
        expect(await last.evaluate((node) => node.classList.contains('jp-mod-active'))).toBe(true);
      }, STEP_MS);
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+Enter');
      await last.locator('.jp-InputPrompt', { hasText: '[*]' }).waitFor({ timeout: STEP_MS });
      await wheelToTop(person);
      await until(async () => expect(await inView(page, '.jp-Notebook .jp-CodeCell:has-text("# the person\'s last cell")')).toBe(0), STEP_MS);
      expect(await last.locator('.jp-InputPrompt').innerText()).toContain('[*]');
      expect(await signsShownOver(person, 2_000)).toBe(0);
      expect(await page.locator('.ipython-mcp-agentCell').count()).toBe(0);
      await last.locator('.jp-InputPrompt', { hasText: '[1]' }).waitFor({ state: 'attached', timeout: STEP_MS });
      expect(person.errors).toEqual([]);
    } finally {
      await person.close();
    }
  });

  it("the agent's cell at the end, the person at the top: the bottom badge names the agent and the cell; a click takes the person there and it goes; away again while it runs, it is back; after the run it goes, and a reload shows none", async () => {
    const PATH = 'far.ipynb';
    writeLongNotebook(lab, PATH);
    const person = await openPersonPage(lab, PATH, 'far');
    const agent = await startKernelServer(lab, ['--notebook', PATH], {}, [], 'claude-code');
    const gate = releaseFile();
    try {
      const { page } = person;
      const answer = agent.structured('execute', { code: waitingCode('F start', gate.path) });
      const badge = page.locator('.ipython-mcp-offscreen-below');
      const cellSelector = '.jp-Notebook .jp-CodeCell:has-text("F start")';
      await until(async () => expect(await inView(page, '.ipython-mcp-offscreen-below:has-text("▼ claude-code is working in cell 43")')).toBe(1), STEP_MS);
      expect(await inView(page, cellSelector)).toBe(0);
      expect(await inView(page, '.ipython-mcp-offscreen-above')).toBe(0);
      // Outlined in the agent's collaborator colour (ipython-mcp gives its collaborators JupyterLab's 7th).
      const colours = await badge.evaluate((node) => {
        const page = node.ownerDocument;
        const probe = page.createElement('div');
        probe.style.color = 'var(--jp-collaborator-color7)';
        page.body.appendChild(probe);
        const wanted = page.defaultView!.getComputedStyle(probe).color;
        probe.remove();
        return { badge: page.defaultView!.getComputedStyle(node).borderTopColor, wanted };
      });
      expect(colours.badge).toBe(colours.wanted);
      // (JupyterLab's own notice about its news sits at the bottom right: the person answers it first.)
      const news = page.locator('.Toastify__toast').getByRole('button', { name: 'No', exact: true });
      if ((await news.count()) > 0) {
        await news.click();
        await page.locator('.Toastify__toast').first().waitFor({ state: 'detached', timeout: STEP_MS });
      }
      await person.shot('offscreen-sign');
      await clipShot(person, 'offscreen-sign-edge', page.locator('.jp-NotebookPanel:visible'), 'bottom');
      // A click takes the person to the cell, and the badge goes; the person's own selection stays (the agent's cell
      // is not made active, so the person's keys do not go into it).
      await badge.click();
      await until(async () => {
        expect(await inView(page, cellSelector)).toBe(1);
        expect(await badge.isHidden()).toBe(true);
      }, STEP_MS);
      const cell = person.cellWith('F start');
      await expect(cell.evaluate((node) => node.classList.contains('jp-mod-active'))).resolves.toBe(false);
      await cell.locator('.jp-OutputArea-output', { hasText: 'F start' }).waitFor({ timeout: STEP_MS });
      // The cell carries the agent's bar and name (at its input's bottom right).
      await expect(cell.evaluate((node) => node.classList.contains('ipython-mcp-agentCell'))).resolves.toBe(true);
      expect(await agentLabel(cell)).toBe('"claude-code (agent)"');
      await person.shot('offscreen-sign-clicked');
      await clipShot(person, 'offscreen-agent-cell', cell, 'whole');
      // Away again while the cell runs: the sign is back.
      await wheelToTop(person);
      await until(async () => expect(await inView(page, '.ipython-mcp-offscreen-below:has-text("▼ claude-code is working in cell 43")')).toBe(1), STEP_MS);
      // The run ends: the sign says it worked there, then goes (a few seconds after the agent's activity ended).
      gate.release();
      await answer;
      await until(async () => expect(await badge.isHidden()).toBe(true), 20_000);
      expect(person.errors).toEqual([]);
      // The notebook opened again (a reload) with the agent's finished cell below the view: no sign for what was
      // already there.
      await page.reload();
      await person.cellWith('rows = 7').waitFor({ timeout: STEP_MS });
      await page.locator('.jp-NotebookPanel .ipython-mcp-offscreen-below').waitFor({ state: 'attached', timeout: STEP_MS });
      expect(await inView(page, cellSelector)).toBe(0);
      expect(await signsShownOver(person, 2_000)).toBe(0);
    } finally {
      gate.release();
      await agent.close();
      await person.close();
      gate.remove();
    }
  });

  it("an agent cell in the person's view: no sign while it runs; it has the agent's bar and name", async () => {
    const PATH = 'near.ipynb';
    writePersonNotebook(lab, PATH);
    const person = await openPersonPage(lab, PATH, 'near');
    const agent = await startKernelServer(lab, ['--notebook', PATH], {}, [], 'codex');
    const gate = releaseFile();
    try {
      const answer = agent.structured('execute', { code: waitingCode('N start', gate.path) });
      const cell = person.cellWith('N start');
      await cell.locator('.jp-OutputArea-output', { hasText: 'N start' }).waitFor({ timeout: STEP_MS });
      expect(await inView(person.page, '.jp-Notebook .jp-CodeCell:has-text("N start")')).toBe(1);
      expect(await cell.locator('.jp-InputPrompt').innerText()).toContain('[*]');
      // The extension marks the cell at its next look (it looks every 400 ms).
      await until(async () => expect(await agentLabel(cell)).toBe('"codex (agent)"'), STEP_MS);
      expect(await signsShownOver(person, 2_000)).toBe(0);
      gate.release();
      await answer;
      expect(person.errors).toEqual([]);
    } finally {
      gate.release();
      await agent.close();
      await person.close();
      gate.remove();
    }
  });
});
