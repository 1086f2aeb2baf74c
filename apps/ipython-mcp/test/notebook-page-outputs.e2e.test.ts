// Every output of the agent's cells on the person's open page, live and once (issue 58): JupyterLab with
// jupyter-collaboration, the notebook open in chromium the whole time (never reloaded), the built binary with
// --notebook as the agent. What the page shows is compared with what the agent's answer holds, and the saved file
// (read while the page is open) must hold each output once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';
import { openPersonPage, savedCells, STEP_MS, textOf, until, writePersonNotebook, type PersonPage } from './notebook-page.js';

const PATH = 'outputs.ipynb';

let lab: RunningJupyter;
let person: PersonPage;
let agent: TestServer;

/** The texts of the outputs of the page's cell holding `marker` (each as the page renders it, trailing space cut). */
async function pageOutputs(marker: string): Promise<string[]> {
  const texts = await person.cellWith(marker).locator('.jp-OutputArea-output').allInnerTexts();
  return texts.map((text) => text.replace(/\s+$/, ''));
}

/** The saved agent cell whose source holds `marker`. */
async function savedCell(marker: string): Promise<Record<string, any>> {
  const cell = (await savedCells(lab, PATH)).find((each) => textOf(each.source).includes(marker));
  expect(cell, `a saved cell with ${marker}`).toBeDefined();
  return cell!;
}

/** The saved cell's outputs in short form: `stdout:TEXT`, `stderr:TEXT`, `result:TEXT`, `error:ENAME`. */
function shortOutputs(cell: Record<string, any>): string[] {
  return (cell.outputs as Array<Record<string, any>>).map((output) => {
    if (output.output_type === 'stream') return `${output.name}:${textOf(output.text)}`;
    if (output.output_type === 'error') return `error:${output.ename}`;
    return `result:${textOf(output.data?.['text/plain'])}`;
  });
}

beforeAll(async () => {
  lab = await startJupyter('jupyterlab');
  writePersonNotebook(lab, PATH);
  person = await openPersonPage(lab, PATH);
  agent = await startKernelServer(lab, ['--notebook', PATH]);
}, 240_000);

afterAll(async () => {
  await agent?.close();
  await person?.close();
  await lab?.stop();
});

describe("the agent's outputs on the person's open page (JupyterLab, chromium, no reload)", () => {
  it('a cell that prints, waits and prints again: the first line shows while it runs, both stay, the file holds them once', async () => {
    let answered = false;
    const answer = agent.structured('execute', { code: "import time\nprint('C first', flush=True)\ntime.sleep(3)\nprint('C second')" }).finally(() => {
      answered = true;
    });
    await person.cellWith("print('C first'").locator('.jp-OutputArea-output', { hasText: 'C first' }).waitFor({ timeout: STEP_MS });
    expect(answered).toBe(false);
    const ran = await answer;
    expect(ran.stdout).toBe('C first\nC second\n');
    await until(async () => expect(await pageOutputs("print('C first'")).toEqual(['C first\nC second']), 10_000);
    // It stays: the page does not lose it a moment later (it did, when the list was replaced whole).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await pageOutputs("print('C first'")).toEqual(['C first\nC second']);
    await until(async () => expect(shortOutputs(await savedCell("print('C first'"))).toEqual(['stdout:C first\nC second\n']), 20_000);
  });

  it('print then stderr, print then a value, print then an error: every output on the page, in order, and once in the file', async () => {
    const cases = [
      { marker: "'D out'", code: "import sys\nprint('D out')\nprint('D err', file=sys.stderr)", page: ['D out', 'D err'], saved: ['stdout:D out\n', 'stderr:D err\n'] },
      { marker: "'E out'", code: "print('E out')\n6 * 7", page: ['E out', '42'], saved: ['stdout:E out\n', 'result:42'] },
      { marker: "'F out'", code: "print('F out')\nraise ValueError('F bad')", page: ['F out'], saved: ['stdout:F out\n', 'error:ValueError'] },
    ];
    for (const each of cases) {
      const ran = await agent.structured('execute', { code: each.code });
      expect(ran.stdout).toBe(`${each.page[0]}\n`);
      await until(async () => {
        const shown = await pageOutputs(each.marker);
        expect(shown.slice(0, each.page.length)).toEqual(each.page);
        expect(shown).toHaveLength(each.saved.length);
      }, 10_000);
    }
    expect((await pageOutputs("'F out'"))[1]).toContain('F bad');
    for (const each of cases) await until(async () => expect(shortOutputs(await savedCell(each.marker))).toEqual(each.saved), 20_000);
    await person.shot('agent-outputs');
  });

  it('a printing loop the person stops with the toolbar: every tick the agent got is on the page, then the interruption', async () => {
    const answer = agent.call('execute', { code: "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)" });
    const cell = person.cellWith("print('tick'");
    await cell.locator('.jp-OutputArea-output', { hasText: 'tick 5' }).waitFor({ timeout: STEP_MS });
    await person.page.locator('jp-button[data-command="notebook:interrupt-kernel"], button[data-command="notebook:interrupt-kernel"]').first().click();
    const result = (await answer).structuredContent as Record<string, any>;
    const ticks = String(result.stdout);
    expect(ticks).toMatch(/^tick 0\ntick 1\n/);
    await until(async () => {
      const shown = await pageOutputs("print('tick'");
      expect(shown[0]).toBe(ticks.replace(/\s+$/, ''));
      expect(shown.join('\n')).toContain('KeyboardInterrupt');
    }, 10_000);
    await until(async () => expect(shortOutputs(await savedCell("print('tick'"))[0]).toBe(`stdout:${ticks}`), 20_000);
  });

  it('100,000 printed lines: the page shows the head and tail the agent got, with the count of what is left out; the file the same, once', async () => {
    const ran = await agent.structured('execute', { code: 'for i in range(100_000):\n    print(i)' });
    const omitted = ran.stdout_omitted_chars as number;
    const at = ran.stdout_omitted_at as number;
    expect(omitted).toBeGreaterThan(500_000);
    const head = String(ran.stdout).slice(0, at);
    const tail = String(ran.stdout).slice(at);
    let shown: string[] = [];
    await until(async () => {
      shown = await pageOutputs('range(100_000)');
      expect(shown).toHaveLength(1);
      expect(shown[0]!.startsWith(head)).toBe(true);
      expect(shown[0]!.endsWith(tail.replace(/\s+$/, ''))).toBe(true);
    }, 20_000);
    expect(shown[0]).toContain(`${omitted} characters omitted`);
    expect(shown[0]!.length).toBeLessThan(head.length + tail.length + 1_000);
    await until(async () => {
      const saved = await savedCell('range(100_000)');
      expect(saved.outputs).toHaveLength(1);
      const text = textOf(saved.outputs[0].text);
      expect(text.startsWith(head)).toBe(true);
      expect(text.endsWith(tail)).toBe(true);
      expect(text.split('characters omitted')).toHaveLength(2);
    }, 20_000);
  });
});
