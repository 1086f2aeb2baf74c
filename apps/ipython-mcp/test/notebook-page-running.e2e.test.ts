// The agent's cell is never left running on the person's page (issue 58): while an agent cell prints over a few
// seconds, the person cuts and pastes it, moves it, closes the notebook's tab and opens it again, or deletes it. Each
// ends in a cell that shows how it ended (all its outputs and its [n]) on the person's open page, and the saved file
// holds each output once; a deleted cell leaves nothing running anywhere, and the agent's answer is complete.
// JupyterLab with jupyter-collaboration, the notebook open in chromium (never reloaded), the built binary as the agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { openPersonPage, savedCells, STEP_MS, textOf, until, writePersonNotebook, type PersonPage } from './notebook-page.js';

const PATH = 'running.ipynb';

let lab: RunningJupyter;
let person: PersonPage;
let agent: TestServer;

/** Code that prints `name start`, sleeps `seconds`, then prints `name end`. */
function slowCell(name: string, seconds: number): string {
  return `import time\nprint('${name} start', flush=True)\ntime.sleep(${seconds})\nprint('${name} end')`;
}

/** Selects the page's cell holding `marker` in command mode (a click on its prompt, then Escape), as a person does. */
async function select(marker: string): Promise<void> {
  await person.cellWith(marker).locator('.jp-InputPrompt').click();
  await person.page.keyboard.press('Escape');
}

/**
 * Closes the notebook's tab as a person does. The agent's writes leave the page's copy unsaved in JupyterLab's eyes,
 * so it asks "Save changes before closing?"; the person answers Save.
 */
async function closeTab(): Promise<void> {
  await person.page.locator('.lm-DockPanel .lm-TabBar-tab', { hasText: PATH }).locator('.lm-TabBar-tabCloseIcon').click();
  await until(async () => {
    const dialog = person.page.locator('.jp-Dialog');
    if ((await dialog.count()) > 0) await dialog.getByRole('button', { name: 'Save', exact: true }).click({ timeout: 2_000 });
    expect(await person.page.locator('.jp-Notebook').count()).toBe(0);
  }, STEP_MS);
}

/** The ids of the saved cells whose source holds `marker`. */
async function savedIds(marker: string): Promise<string[]> {
  return (await savedCells(lab, PATH)).filter((each) => textOf(each.source).includes(marker)).map((each) => String(each.id));
}

/**
 * The cell holding `name`'s code ended as the agent's answer did, on the open page (one output with both lines, its
 * [n], no [*] anywhere) and in the saved file (one cell, that output once, that count).
 */
async function endedEverywhere(name: string, count: number): Promise<void> {
  const marker = `print('${name} start'`;
  await until(async () => {
    const cell = person.cellWith(marker);
    expect(await cell.count()).toBe(1);
    expect((await cell.locator('.jp-OutputArea-output').allInnerTexts()).map((text) => text.replace(/\s+$/, ''))).toEqual([`${name} start\n${name} end`]);
    expect((await cell.locator('.jp-InputPrompt').innerText()).trim()).toBe(`[${count}]:`);
    expect(await person.page.locator('.jp-Notebook .jp-InputPrompt', { hasText: '[*]' }).count()).toBe(0);
  }, 15_000);
  await until(async () => {
    const saved = (await savedCells(lab, PATH)).filter((each) => textOf(each.source).includes(marker));
    expect(saved).toHaveLength(1);
    expect(saved[0]!.execution_count).toBe(count);
    expect(saved[0]!.outputs.map((output: Record<string, unknown>) => `${String(output.name)}:${textOf(output.text)}`)).toEqual([`stdout:${name} start\n${name} end\n`]);
  }, 20_000);
}

beforeAll(async () => {
  lab = await startJupyter('jupyterlab');
  writePersonNotebook(lab, PATH);
  person = await openPersonPage(lab, PATH);
  agent = await startKernelServer(lab, ['--notebook', PATH], {}, [], 'claude-code');
}, 240_000);

afterAll(async () => {
  await agent?.close();
  await person?.close();
  await lab?.stop();
});

describe("the agent's running cell on the person's page (JupyterLab, chromium, no reload)", () => {
  it('cut while it runs and pasted below the person\'s cell while it still runs: the pasted cell ends with every output and its count', async () => {
    const answer = agent.structured('execute', { code: slowCell('H', 5) });
    const marker = "print('H start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'H start' }).waitFor({ timeout: STEP_MS });
    const [id] = await savedIdsEventually(marker);
    await select(marker);
    await person.page.keyboard.press('x');
    await person.cellWith(marker).waitFor({ state: 'detached', timeout: STEP_MS });
    await select('rows = 7');
    await person.page.keyboard.press('v');
    await person.cellWith(marker).waitFor({ timeout: STEP_MS });
    const ran = await answer;
    expect(ran.stdout).toBe('H start\nH end\n');
    await endedEverywhere('H', ran.execution_count as number);
    // JupyterLab 4 keeps a cut cell's id for the first paste after the cut.
    expect(await savedIds(marker)).toEqual([id]);
    // It landed where the person pasted it: right below their cell.
    const sources = (await savedCells(lab, PATH)).map((each) => textOf(each.source));
    expect(sources[sources.findIndex((each) => each === 'rows = 7') + 1]).toContain(marker);
  });

  it('cut while it runs and pasted after it ended: the pasted cell ends with every output and its count', async () => {
    const answer = agent.structured('execute', { code: slowCell('I', 3) });
    const marker = "print('I start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'I start' }).waitFor({ timeout: STEP_MS });
    await select(marker);
    await person.page.keyboard.press('x');
    await person.cellWith(marker).waitFor({ state: 'detached', timeout: STEP_MS });
    const ran = await answer;
    expect(ran.stdout).toBe('I start\nI end\n');
    await select('rows = 7');
    await person.page.keyboard.press('v');
    await endedEverywhere('I', ran.execution_count as number);
  });

  it('pasted twice after a cut (the second paste a new id): each pasted cell ends with every output and its count', async () => {
    const answer = agent.structured('execute', { code: slowCell('J', 4) });
    const marker = "print('J start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'J start' }).waitFor({ timeout: STEP_MS });
    await select(marker);
    await person.page.keyboard.press('x');
    await person.cellWith(marker).waitFor({ state: 'detached', timeout: STEP_MS });
    await select('rows = 7');
    await person.page.keyboard.press('v');
    await person.page.keyboard.press('v');
    await until(async () => expect(await person.cellWith(marker).count()).toBe(2), STEP_MS);
    const ran = await answer;
    const count = ran.execution_count as number;
    await until(async () => {
      const cells = person.cellWith(marker);
      for (const index of [0, 1]) {
        const cell = cells.nth(index);
        expect((await cell.locator('.jp-OutputArea-output').allInnerTexts()).map((text) => text.replace(/\s+$/, ''))).toEqual(['J start\nJ end']);
        expect((await cell.locator('.jp-InputPrompt').innerText()).trim()).toBe(`[${count}]:`);
      }
    }, 15_000);
    await until(async () => {
      const saved = (await savedCells(lab, PATH)).filter((each) => textOf(each.source).includes(marker));
      expect(saved.map((each) => each.execution_count)).toEqual([count, count]);
      expect(new Set(saved.map((each) => each.id)).size).toBe(2);
      for (const each of saved) expect(each.outputs.map((output: Record<string, unknown>) => textOf(output.text))).toEqual(['J start\nJ end\n']);
    }, 20_000);
  });

  it('moved up while it runs (Ctrl+Shift+Up): the moved cell ends with every output and its count', async () => {
    const answer = agent.structured('execute', { code: slowCell('K', 4) });
    const marker = "print('K start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'K start' }).waitFor({ timeout: STEP_MS });
    const before = (await savedCellsEventually(marker)).findIndex((each) => textOf(each.source).includes(marker));
    await select(marker);
    await person.page.keyboard.press('Control+Shift+ArrowUp');
    await person.page.keyboard.press('Control+Shift+ArrowUp');
    const ran = await answer;
    expect(ran.stdout).toBe('K start\nK end\n');
    await endedEverywhere('K', ran.execution_count as number);
    const after = (await savedCells(lab, PATH)).findIndex((each) => textOf(each.source).includes(marker));
    expect(after).toBe(before - 2);
  });

  it('the person closes the notebook tab while it runs and opens it again: the cell ends with every output and its count', async () => {
    const answer = agent.structured('execute', { code: slowCell('L', 5) });
    const marker = "print('L start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'L start' }).waitFor({ timeout: STEP_MS });
    await closeTab();
    await person.page.locator('.jp-DirListing-item[data-file-type="notebook"]', { hasText: PATH }).dblclick();
    await person.cellWith('rows = 7').waitFor({ timeout: STEP_MS });
    const ran = await answer;
    expect(ran.stdout).toBe('L start\nL end\n');
    await endedEverywhere('L', ran.execution_count as number);
  });

  it('closed while it runs and opened again after it ended: the cell shows its end', async () => {
    const answer = agent.structured('execute', { code: slowCell('M', 2) });
    const marker = "print('M start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'M start' }).waitFor({ timeout: STEP_MS });
    await closeTab();
    const ran = await answer;
    await person.page.locator('.jp-DirListing-item[data-file-type="notebook"]', { hasText: PATH }).dblclick();
    await person.cellWith('rows = 7').waitFor({ timeout: STEP_MS });
    await endedEverywhere('M', ran.execution_count as number);
  });

  it('deleted while it runs and not brought back: nothing is left running on the page or in the file, and the agent\'s answer is complete', async () => {
    const answer = agent.structured('execute', { code: slowCell('N', 4) });
    const marker = "print('N start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'N start' }).waitFor({ timeout: STEP_MS });
    await select(marker);
    await person.page.keyboard.press('d');
    await person.page.keyboard.press('d');
    await person.cellWith(marker).waitFor({ state: 'detached', timeout: STEP_MS });
    const ran = await answer;
    expect(ran.stdout).toBe('N start\nN end\n');
    expect(typeof ran.execution_count).toBe('number');
    // Its later outputs went nowhere: no cell of the page or the file shows them, and nothing shows [*].
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await person.page.locator('.jp-Notebook .jp-OutputArea-output', { hasText: 'N end' }).count()).toBe(0);
    expect(await person.page.locator('.jp-Notebook .jp-InputPrompt', { hasText: '[*]' }).count()).toBe(0);
    await person.page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first().waitFor({ timeout: STEP_MS });
    await until(async () => {
      const cells = await savedCells(lab, PATH);
      expect(cells.filter((each) => textOf(each.source).includes(marker))).toEqual([]);
      expect(cells.filter((each) => JSON.stringify(each.outputs ?? []).includes('N end'))).toEqual([]);
    }, 20_000);
    const status = (await agent.structured('runtime_status', {})) as Record<string, any>;
    expect(JSON.stringify(status)).toMatch(/"cells_deleted_while_running":\s*[1-9]/);
  });

  it('deleted while it runs and brought back with undo after it ended: the cell ends with every output and its count', async () => {
    const answer = agent.structured('execute', { code: slowCell('O', 2) });
    const marker = "print('O start'";
    await person.cellWith(marker).locator('.jp-OutputArea-output', { hasText: 'O start' }).waitFor({ timeout: STEP_MS });
    await select(marker);
    await person.page.keyboard.press('d');
    await person.page.keyboard.press('d');
    await person.cellWith(marker).waitFor({ state: 'detached', timeout: STEP_MS });
    const ran = await answer;
    await person.page.keyboard.press('z');
    await person.cellWith(marker).waitFor({ timeout: STEP_MS });
    await endedEverywhere('O', ran.execution_count as number);
  });
});

/** The saved cells once a cell holding `marker` is saved. */
async function savedCellsEventually(marker: string): Promise<Array<Record<string, any>>> {
  let cells: Array<Record<string, any>> = [];
  await until(async () => {
    cells = await savedCells(lab, PATH);
    expect(cells.some((each) => textOf(each.source).includes(marker))).toBe(true);
  }, 20_000);
  return cells;
}

/** The ids of the saved cells holding `marker`, once one is saved. */
async function savedIdsEventually(marker: string): Promise<string[]> {
  await savedCellsEventually(marker);
  return savedIds(marker);
}
