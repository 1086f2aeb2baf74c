import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { survivors, testPython } from '../test/python.js';
import { CodeModeTimeoutError } from './errors.js';
import { IPythonKernel } from './kernel.js';
import { CodeMode } from './run-code.js';
import type { ToolDefinition } from './tool-functions.js';

// The `journal` kernel option, read back with nbformat (a real Jupyter consumer) from the test environment.

const VALIDATE = [
  'import json, sys, nbformat',
  'nb = nbformat.read(sys.argv[1], as_version=4)',
  'nbformat.validate(nb)',
  'print(json.dumps([{"type": c.cell_type, "source": c.source, "count": c.get("execution_count"),',
  '  "outputs": [{k: o.get(k) for k in ("output_type", "name", "text", "ename", "evalue")} | ({"plain": o["data"].get("text/plain")} if "data" in o else {}) for o in c.get("outputs", [])]} for c in nb.cells]))',
].join('\n');

function readJournal(path: string): { type: string; source: string; count: number | null; outputs: Record<string, unknown>[] }[] {
  const done = spawnSync(testPython(), ['-c', VALIDATE, path], { encoding: 'utf8', timeout: 60_000 });
  expect(done.status, done.stderr).toBe(0);
  return JSON.parse(done.stdout);
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'code-mode-journal-'));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const weather: ToolDefinition = {
  name: 'get_weather',
  description: 'Weather for a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: (input) => ({ city: (input as { city: string }).city, celsius: 21 }),
};
const failing: ToolDefinition = { name: 'flaky', inputSchema: { type: 'object' }, execute: () => { throw new Error('service down'); } };

describe('the journal kernel option', () => {
  it('records run_code cells with outputs, nested calls as comments, timeouts and restarts', async () => {
    const path = join(scratch, 'agent.ipynb');
    const kernel = new IPythonKernel({ python: testPython(), journal: path });
    const mode = new CodeMode({ kernel, tools: [weather, failing], timeout: 1000, maxRetries: 10 });
    try {
      await mode.runCode({ code: 'w = get_weather(city="Paris")\nprint(w["celsius"])\nw' });
      await mode.runCode({ code: 'try:\n    flaky()\nexcept ToolCallError as error:\n    print("failed:", error)' });
      await expect(mode.runCode({ code: 'undefined_name' })).rejects.toThrow(/NameError/);
      await expect(mode.runCode({ code: 'import time\nkept = 1\ntime.sleep(10**6)' })).rejects.toBeInstanceOf(CodeModeTimeoutError);
      await mode.runCode({ code: 'kept', restart: true }).catch(() => undefined);
      await kernel.shutdown();
      const cells = readJournal(path);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(cells.map((cell) => cell.type)).toEqual(['markdown', 'code', 'code', 'code', 'code', 'markdown', 'markdown', 'code']);
      expect(cells[1]!.source).toBe(
        'w = get_weather(city="Paris")\nprint(w["celsius"])\nw\n\n# tool calls made by this cell:\n' +
          "#   get_weather(city='Paris') -> {'city': 'Paris', 'celsius': 21}",
      );
      expect(cells[1]!.outputs).toEqual([
        { output_type: 'stream', name: 'stdout', text: '21\n', ename: null, evalue: null },
        { output_type: 'execute_result', name: null, text: null, ename: null, evalue: null, plain: "{'city': 'Paris', 'celsius': 21}" },
      ]);
      expect(cells[2]!.source).toContain('#   flaky() -> raised ToolCallError: ');
      expect(cells[3]!.outputs).toEqual([expect.objectContaining({ output_type: 'error', ename: 'NameError' })]);
      expect(cells[4]).toMatchObject({ source: expect.stringContaining('time.sleep'), count: null, outputs: [] });
      expect(cells[5]!.source).toMatch(/^\*\*Timed out\.\*\* .*state was kept/);
      expect(cells[6]!.source).toMatch(/^\*\*Kernel restarted\*\*/);
      expect(cells[7]!.outputs).toEqual([expect.objectContaining({ output_type: 'error', ename: 'NameError' })]);
      expect(kernel.journalStatus()).toMatchObject({ path, state: 'writing', cells: 8, error: null });
    } finally {
      const pids = kernel.workerPids();
      await kernel.shutdown();
      expect(await survivors(pids)).toEqual([]);
    }
  });

  it('a journal that cannot be written does not stop the kernel', async () => {
    const blocker = join(scratch, 'a-file');
    writeFileSync(blocker, '');
    const kernel = new IPythonKernel({ python: testPython(), journal: { path: join(blocker, 'j.ipynb'), maxBytes: 1 << 20 } });
    const mode = new CodeMode({ kernel });
    try {
      expect((await mode.runCode({ code: '6 * 7' })).return).toEqual({ kind: 'value', value: 42 });
      expect((await mode.runCode({ code: '7 * 6' })).return).toEqual({ kind: 'value', value: 42 });
      expect(kernel.journalStatus()).toMatchObject({ state: 'failed', cells: 0, error: expect.stringMatching(/^ENOTDIR|^EEXIST/) });
    } finally {
      await kernel.shutdown();
    }
  });

  it('is off unless asked for', () => {
    expect(new IPythonKernel({ python: testPython() }).journalStatus()).toBeNull();
  });
});
