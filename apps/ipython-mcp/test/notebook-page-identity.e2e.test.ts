// Who did what, on the person's open page (issue 58): each attached agent its own collaborator named by its MCP
// client, the agent's cursor (JupyterLab's collaborator cursor, its name flag) on the cell it works in, and a running
// agent cell the person deleted and brought back with undo ending as any cell does, never left at [*]; and what the
// person sees of an agent cell placed below their view (ipython-mcp's extension's sign, JupyterLab's minimap).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { inView, openPersonPage, savedCells, STEP_MS, textOf, until, writeLongNotebook, writePersonNotebook, type PersonPage } from './notebook-page.js';

const PATH = 'identity.ipynb';

let lab: RunningJupyter;
let person: PersonPage;

beforeAll(async () => {
  lab = await startJupyter('jupyterlab');
  writePersonNotebook(lab, PATH);
  person = await openPersonPage(lab, PATH);
}, 240_000);

afterAll(async () => {
  await person?.close();
  await lab?.stop();
});

describe("the agent's identity on the person's page (JupyterLab, chromium)", () => {
  it("two agents attached at once are two collaborators, each named by its client, each with its cursor on its own cell; the person's edit makes a cell theirs too", async () => {
    const agents: TestServer[] = [];
    try {
      agents.push(await startKernelServer(lab, ['--notebook', PATH], {}, [], 'claude-code'));
      agents.push(await startKernelServer(lab, ['--notebook', PATH], {}, [], 'codex'));
      await agents[0]!.structured('execute', { code: "print('from claude')" });
      await agents[1]!.structured('execute', { code: "print('from codex')" });
      const claudeCell = person.cellWith("print('from claude')");
      await claudeCell.locator('.jp-OutputArea-output', { hasText: 'from claude' }).waitFor({ timeout: STEP_MS });
      await expect(claudeCell.locator('.jp-InputArea-editor').innerText()).resolves.toContain('# agent (claude-code), via ipython-mcp');
      // The agent's cursor, drawn by JupyterLab as a collaborator's in the agent's colour, marks the cell it works in;
      // its name flag floats above it (JupyterLab puts the flag in the page's tooltip layer, outside the cell).
      await claudeCell.locator('.jp-remote-cursor').first().waitFor({ state: 'attached', timeout: STEP_MS });
      await person.cellWith("print('from codex')").locator('.jp-remote-cursor').first().waitFor({ state: 'attached', timeout: STEP_MS });
      const flags = person.page.locator('.jp-remote-userFlag');
      await flags.filter({ hasText: 'claude-code (agent)' }).first().waitFor({ state: 'attached', timeout: STEP_MS });
      await flags.filter({ hasText: 'codex (agent)' }).first().waitFor({ state: 'attached', timeout: STEP_MS });
      await person.page.locator('.jp-SideBar [data-id="jp-collaboration-panel"]').first().click();
      const list = person.page.locator('.jp-CollaboratorsList');
      await list.filter({ hasText: 'claude-code (agent)' }).waitFor({ timeout: STEP_MS });
      await list.filter({ hasText: 'codex (agent)' }).waitFor({ timeout: STEP_MS });
      await person.shot('two-agents');
      // The person edits claude-code's cell: the metadata and the agent's view of the notebook say it is theirs too.
      await claudeCell.locator('.cm-content').click();
      await person.page.keyboard.press('Control+End');
      await person.page.keyboard.type('  # checked');
      await until(async () => {
        const saved = (await savedCells(lab, PATH)).find((each) => textOf(each.source).includes("print('from claude')"));
        expect(saved?.metadata.ipython_mcp).toEqual({ agent: true, client: 'claude-code', edited_by_person: true });
        const read = await agents[0]!.client.readResource({ uri: 'ipython-mcp://notebook' });
        expect(String((read.contents[0] as { text?: string }).text)).toMatch(/the agent's, edited by the person · id [^\n]+\n# agent \(claude-code\)[^\n]*\nprint\('from claude'\)  # checked/);
      }, 20_000);
    } finally {
      await Promise.all(agents.map((agent) => agent.close()));
    }
  });

  it("a running agent cell the person deletes and brings back with undo ends with its count and its outputs, on the page and in the file", async () => {
    const agent = await startKernelServer(lab, ['--notebook', PATH], {}, [], 'claude-code');
    try {
      const answer = agent.structured('execute', { code: "import time\nprint('G start', flush=True)\ntime.sleep(6)\nprint('G end')" });
      const cell = person.cellWith("print('G start'");
      await cell.locator('.jp-OutputArea-output', { hasText: 'G start' }).waitFor({ timeout: STEP_MS });
      // The person selects the cell (command mode), deletes it (D D) and undoes that (Z), as JupyterLab's keys do.
      await cell.locator('.jp-InputPrompt').click();
      await person.page.keyboard.press('Escape');
      await person.page.keyboard.press('d');
      await person.page.keyboard.press('d');
      await cell.waitFor({ state: 'detached', timeout: STEP_MS });
      await person.page.keyboard.press('z');
      await cell.waitFor({ timeout: STEP_MS });
      const ran = await answer;
      expect(ran.stdout).toBe('G start\nG end\n');
      await cell.locator('.jp-InputPrompt', { hasText: `[${ran.execution_count}]` }).waitFor({ timeout: STEP_MS });
      await cell.locator('.jp-OutputArea-output', { hasText: 'G end' }).waitFor({ timeout: STEP_MS });
      await until(async () => {
        const saved = (await savedCells(lab, PATH)).find((each) => textOf(each.source).includes("print('G start'"));
        expect(saved?.execution_count).toBe(ran.execution_count);
        expect(saved?.outputs.map((output: Record<string, unknown>) => textOf(output.text))).toEqual(['G start\nG end\n']);
      }, 20_000);
    } finally {
      await agent.close();
    }
  });

  it("an agent cell placed below the person's view: ipython-mcp's extension signs it at the notebook's bottom edge; JupyterLab's minimap (View › Show Minimap) lists it with [*], then [n], and takes the person there", async () => {
    const LONG = 'long.ipynb';
    writeLongNotebook(lab, LONG);
    const reader = await openPersonPage(lab, LONG, 'long');
    const agent = await startKernelServer(lab, ['--notebook', LONG], {}, [], 'claude-code');
    try {
      const { page } = reader;
      // The minimap is JupyterLab's own (command notebook:toggle-virtual-scrollbar, off by default): one item a cell,
      // its first characters and its [*] / [n] / [!].
      await reader.cellWith('rows = 7').locator('.jp-InputPrompt').click();
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+Shift+C');
      await page.locator('.lm-CommandPalette-input').fill('Show Minimap');
      await page.keyboard.press('Enter');
      const answer = agent.structured('execute', { code: "import time\nprint('P start', flush=True)\ntime.sleep(4)\nprint('P end')" });
      const item = page.locator('li', { has: page.locator('.jp-scrollbarItem-source', { hasText: '# agent (claude-code), via ipython-mcp' }) });
      // The minimap draws its items again when the notebook scrolls (JupyterLab's default windowing mode): the
      // person's wheel brings the new cell's line in.
      await page.mouse.move(700, 500);
      await until(async () => {
        await page.mouse.wheel(0, 20);
        expect(await item.locator('.jp-scrollbarItem-executionIndicator').innerText({ timeout: 1_000 })).toBe('[*]');
      }, STEP_MS);
      // The cell, the agent's cursor and its name flag are below the fold; the extension's sign at the notebook's
      // bottom edge names the agent (notebook-page-offscreen has the sign's own cases).
      expect(await inView(page, '.jp-Notebook .jp-CodeCell:has-text("P start")')).toBe(0);
      expect(await inView(page, '.jp-remote-cursor')).toBe(0);
      expect(await inView(page, '.jp-remote-userFlag')).toBe(0);
      expect(await inView(page, '.ipython-mcp-offscreen-below:has-text("claude-code is working in cell 43")')).toBe(1);
      await reader.shot('offscreen-minimap');
      const ran = await answer;
      await item.locator('.jp-scrollbarItem-executionIndicator', { hasText: `[${ran.execution_count}]` }).waitFor({ timeout: STEP_MS });
      // The minimap's item takes the person to the cell, where the agent's cursor marks it.
      // (JupyterLab's own notice about its news may sit over the minimap's bottom: the person answers it first.)
      const news = page.locator('.Toastify__toast').getByRole('button', { name: 'No', exact: true });
      if ((await news.count()) > 0) await news.click();
      await item.click();
      const cell = reader.cellWith("print('P start'");
      await until(async () => expect(await inView(page, '.jp-Notebook .jp-CodeCell:has-text("P start")')).toBe(1), STEP_MS);
      await cell.locator('.jp-OutputArea-output', { hasText: 'P end' }).waitFor({ timeout: STEP_MS });
      await cell.locator('.jp-remote-cursor').first().waitFor({ state: 'attached', timeout: STEP_MS });
    } finally {
      await agent.close();
      await reader.close();
    }
  });
});
