import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testPython } from '@ipython-mcp/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeCell, markdownCell } from './notebook-format.js';
import { SessionJournal } from './session-journal.js';

const APPEND_FOREVER = fileURLToPath(new URL('../test/append-forever.mjs', import.meta.url));

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'session-journal-'));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** nbformat.validate from the test environment: the number of cells of a valid notebook. */
function validCells(path: string): number {
  const code = 'import sys, nbformat\nnb = nbformat.read(sys.argv[1], as_version=4)\nnbformat.validate(nb)\nprint(len(nb.cells))';
  const done = spawnSync(testPython(), ['-c', code, path], { encoding: 'utf8', timeout: 60_000 });
  expect(done.status, done.stderr).toBe(0);
  return Number(done.stdout.trim());
}

describe('SessionJournal', () => {
  it('coalesces a burst of appends into a few whole-file writes of a valid, private notebook', async () => {
    const path = join(scratch, 'burst', 'journal.ipynb');
    const journal = new SessionJournal({ path });
    for (let index = 0; index < 500; index += 1) journal.append(codeCell(`x = ${index}`, [{ output_type: 'stream', name: 'stdout', text: `${index}\n` }], index + 1));
    journal.append(markdownCell('*done*'));
    await journal.close();
    const status = journal.status();
    expect(status).toMatchObject({ path, state: 'closed', cells: 502, files: 1, error: null });
    expect(status.writes).toBeLessThan(10);
    expect(validCells(path)).toBe(502);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(scratch, 'burst'))).toEqual(['journal.ipynb']);
    journal.append(markdownCell('after close: dropped'));
    await journal.flushed();
    expect(validCells(path)).toBe(502);
  });

  it('is a complete notebook whenever the process is SIGKILLed, even mid-write', async () => {
    const path = join(scratch, 'killed.ipynb');
    let previous = 0;
    for (const delay of [37, 210, 450]) {
      const child = spawn(process.execPath, [APPEND_FOREVER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
      let appended = 0;
      child.stdout.on('data', (chunk: Buffer) => {
        appended = Number(chunk.toString().trim().split('\n').at(-1));
      });
      // Once it has written at least once (a slow machine may take a while to start node), kill it at a moment
      // that is, most of the time, in the middle of a write: it writes continuously.
      const startedAt = performance.now();
      while (!(existsSync(path) && appended > 0) && performance.now() - startedAt < 30_000) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, delay));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      expect(appended).toBeGreaterThan(0);
      const notebook = JSON.parse(readFileSync(path, 'utf8')) as { cells: { id: string }[]; nbformat: number };
      expect(notebook.nbformat).toBe(4);
      expect(new Set(notebook.cells.map((cell) => cell.id)).size).toBe(notebook.cells.length);
      // Every run continues the journal the previous one left.
      expect(notebook.cells.length).toBeGreaterThan(previous);
      previous = notebook.cells.length;
      expect(validCells(path)).toBe(previous);
    }
  });

  it('rolls over to numbered files at the cap and keeps oversized cells as their source and a note', async () => {
    const path = join(scratch, 'roll', 'capped.ipynb');
    const journal = new SessionJournal({ path, maxBytes: 16_384 });
    for (let index = 0; index < 30; index += 1) journal.append(codeCell(`print(${index})`, [{ output_type: 'stream', name: 'stdout', text: 'y'.repeat(1000) }], index));
    journal.append(codeCell('huge()', [{ output_type: 'stream', name: 'stdout', text: 'z'.repeat(50_000) }], 31));
    await journal.close();
    const files = readdirSync(join(scratch, 'roll')).sort();
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(files).toContain('capped.2.ipynb');
    for (const file of files) {
      expect(statSync(join(scratch, 'roll', file)).size).toBeLessThanOrEqual(16_384);
      validCells(join(scratch, 'roll', file));
    }
    const last = readFileSync(journal.status().path, 'utf8');
    expect(last).toContain('huge()');
    expect(last).toContain("exceed the journal's per-cell bound");
    expect(last).not.toContain('zzzz');
  });

  it('stops on the first write error, reports it once and never throws to the caller', async () => {
    const blocker = join(scratch, 'plain-file');
    writeFileSync(blocker, 'not a directory');
    const warnings: unknown[] = [];
    const journal = new SessionJournal({ path: join(blocker, 'j.ipynb'), logger: { warn: (event, fields) => warnings.push({ event, fields }) } });
    for (let index = 0; index < 5; index += 1) journal.append(markdownCell(`secret ${index}`));
    await journal.close();
    expect(journal.status()).toMatchObject({ state: 'failed', cells: 0, writes: 0 });
    expect(journal.status().error).toMatch(/^(ENOTDIR|EEXIST)/);
    expect(warnings).toEqual([{ event: 'journal.failed', fields: { code: expect.any(String), syscall: expect.anything() } }]);
    expect(JSON.stringify(warnings)).not.toContain('secret');
  });

  it('stops cleanly when writing fails in the middle of a session', async () => {
    const directory = join(scratch, 'vanishing');
    const path = join(directory, 'j.ipynb');
    const journal = new SessionJournal({ path, minWriteIntervalMs: 0 });
    journal.append(markdownCell('first'));
    await journal.flushed();
    expect(journal.status()).toMatchObject({ state: 'writing', cells: 2 });
    // The directory becomes a regular file: the next temporary file cannot be created (even as root).
    rmSync(directory, { recursive: true });
    writeFileSync(directory, '');
    journal.append(markdownCell('second'));
    await journal.flushed();
    expect(journal.status()).toMatchObject({ state: 'failed', cells: 2 });
    journal.append(markdownCell('third'));
    await journal.close();
    expect(journal.status().state).toBe('failed');
  });

  it('leaves a file that is not one of its journals alone', async () => {
    const path = join(scratch, 'foreign.ipynb');
    writeFileSync(path, 'my own notes');
    const journal = new SessionJournal({ path });
    journal.append(markdownCell('x'));
    await journal.close();
    expect(journal.status().state).toBe('failed');
    expect(readFileSync(path, 'utf8')).toBe('my own notes');
  });
});
