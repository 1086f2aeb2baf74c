// The person's side of a notebook, in a real browser: JupyterLab with jupyter-collaboration (started by the test),
// the notebook opened in Debian's chromium (driven by playwright-core; no browser is downloaded). Shared by the
// browser suites; screenshots go to apps/ipython-mcp/test-artifacts/ (gitignored).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { retry } from './http-harness.js';
import type { RunningJupyter } from './jupyter-harness.js';
import { writeNotebookCells } from './notebook-harness.js';

// One reader of the saved file and of nbformat text for every notebook suite (notebook-harness.ts).
export { savedCells, cellText as textOf } from './notebook-harness.js';

/** Debian's chromium (tooling/scripts/browser-deps.sh installs it); IPYTHON_MCP_TEST_CHROMIUM names another. */
export const CHROMIUM = process.env.IPYTHON_MCP_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
/** How long the page may take for one step on a loaded machine (JupyterLab's first load is the longest). */
export const STEP_MS = 45_000;

/** The person's notebook: a markdown cell and a code cell (`rows = 7`). */
export function writePersonNotebook(lab: RunningJupyter, path: string): void {
  writeNotebookCells(lab, path, [
    { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# The person\'s notebook' },
    { cell_type: 'code', id: 'person', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
  ]);
}

/** The person's browser with `path` open in JupyterLab, its kernel idle. */
export interface PersonPage {
  browser: Browser;
  page: Page;
  /** The page's console errors and uncaught exceptions, from its first load on. */
  errors: string[];
  /** The code cell in the page whose text contains `text`. */
  cellWith(text: string): Locator;
  /** A full-page screenshot into the artifacts directory, as `notebook-NAME.png`. */
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens `path` (written by {@link writePersonNotebook}) as the person would, from JupyterLab's printed link; with
 * `workspace`, in a JupyterLab workspace of that name (a second browser that does not restore the first one's tabs).
 */
export async function openPersonPage(lab: RunningJupyter, path: string, workspace?: string): Promise<PersonPage> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(String(error.stack ?? error)));
    await page.goto(`${lab.url}lab/${workspace === undefined ? '' : `workspaces/${workspace}/`}tree/${path}?token=${lab.token}`);
    await page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'rows = 7' }).waitFor({ timeout: STEP_MS });
    await page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first().waitFor({ timeout: STEP_MS });
    return {
      browser,
      page,
      errors,
      cellWith: (text) => page.locator('.jp-Notebook .jp-CodeCell', { hasText: text }),
      shot: async (name) => {
        await page.screenshot({ path: join(ARTIFACTS, `notebook-${name}.png`), fullPage: true });
      },
      close: () => browser.close(),
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
}

/**
 * Retries `check` (its assertions) every 200 ms until it passes or `ms` have passed; the last failure is thrown. Not
 * faster: a check reads the whole notebook from the server or the page, on a machine the server shares.
 */
export function until(check: () => Promise<void>, ms: number): Promise<void> {
  return retry(check, ms, 200);
}

/** How many of the elements `selector` finds are drawn inside the page's viewport (at least partly). */
export async function inView(page: Page, selector: string): Promise<number> {
  const height = page.viewportSize()!.height;
  let count = 0;
  for (const each of await page.locator(selector).all()) {
    const box = await each.boundingBox();
    if (box !== null && box.height > 0 && box.y < height && box.y + box.height > 0 && (await each.isVisible())) count += 1;
  }
  return count;
}

/**
 * Writes a long notebook at `path`: a markdown cell, the person's `rows = 7` and 40 cells of six lines each, so a cell
 * added at the end is far below the person's view (`last`, when given, is the person's own last cell).
 */
export function writeLongNotebook(lab: RunningJupyter, path: string, last?: string): void {
  const filler = Array.from({ length: 40 }, (_, index) => ({
    cell_type: 'code', id: `fill${index}`, metadata: {}, outputs: [], execution_count: null,
    source: Array.from({ length: 6 }, (_, line) => `step_${index}_${line} = ${line}`).join('\n'),
  }));
  writeNotebookCells(lab, path, [
    { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# A long notebook' },
    { cell_type: 'code', id: 'person', metadata: {}, source: 'rows = 7', outputs: [], execution_count: null },
    ...filler,
    ...(last === undefined ? [] : [{ cell_type: 'code', id: 'last', metadata: {}, source: last, outputs: [], execution_count: null }]),
  ]);
}
