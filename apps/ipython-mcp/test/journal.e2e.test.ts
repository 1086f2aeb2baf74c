// The session journal (IPYTHON_MCP_JOURNAL / --journal), read back the way Jupyter reads it: nbformat.validate,
// nbconvert to HTML, nbconvert --execute; a SIGKILL mid-cell; journals that cannot be written; rollover.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, loggedLines, startServer, taggedProcesses, testPython, waitForExit, workerPid, type TestServer } from './harness.js';

const TAG = randomUUID();
const CHECK = fileURLToPath(new URL('./fixtures/notebook_check.py', import.meta.url));
const BASE_ENV = {
  IPYTHON_MCP_TEST_RUN_TAG: TAG,
  IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1',
  IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1',
};
// A 1x1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';
const SWALLOW_INTERRUPTS = 'import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass';

interface Summary {
  valid: boolean;
  error: string | null;
  cells: { cell_type: string; source: string; execution_count?: number | null; outputs?: Record<string, any>[] }[];
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-journal-'));
});
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

function notebook(command: 'validate' | 'rerun', path: string, out?: string): Summary {
  const done = spawnSync(testPython(), [CHECK, command, path, ...(out ? [out] : [])], { encoding: 'utf8', timeout: 180_000 });
  expect(done.status, done.stderr).toBe(0);
  return JSON.parse(done.stdout) as Summary;
}

async function journalStatus(server: TestServer): Promise<Record<string, any>> {
  return (await server.structured('runtime_status')).journal;
}

/** Waits until the journal has `cells` cells on disk. */
async function written(server: TestServer, cells: number): Promise<void> {
  const status = await eventually(() => journalStatus(server), (value) => value.cells >= cells, 10_000);
  expect(status.cells).toBeGreaterThanOrEqual(cells);
}

const code = (summary: Summary) => summary.cells.filter((cell) => cell.cell_type === 'code');
const markdown = (summary: Summary) => summary.cells.filter((cell) => cell.cell_type === 'markdown').map((cell) => cell.source);

describe('a journal with every kind of cell and outcome', () => {
  const path = () => join(scratch, 'every-kind', 'session.ipynb');
  let summary: Summary;
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ ...BASE_ENV, IPYTHON_MCP_MAX_TEXT_CHARS: '200' }, ['--journal', path()]);
    const run = (source: string) => server.call('execute', { code: source });
    await run('x = 21\nprint(x * 2)');
    await run('x * 2');
    await run('import sys\nprint("careful", file=sys.stderr)');
    await run('1 / 0');
    await run('def broken(:\n    pass');
    await run(`from IPython.display import display, HTML, Image\nimport base64\ndisplay(HTML("<b>bold</b>"))\ndisplay(Image(data=base64.b64decode("${PNG}")))`);
    await run('print("y" * 1000)');
    await run('def pair(a: int, b: str = "z") -> list:\n    """Two things."""\n    return [a, b]\ndef boom(n: int) -> int:\n    raise ValueError(f"bad {n}")');
    await server.call('call_function', { name: 'pair', arguments: { a: 1, b: "it's" } });
    await server.call('call_function', { name: 'boom', arguments: { n: 3 } });
    await server.call('call_function', { name: 'missing', arguments: {} }); // never ran: not journaled
    await server.call('register_tool', { name: 'pair', tool_name: 'make_pair' });
    await server.call('make_pair', { a: 7 });
    await run('import time\nkept = "before the timeout"\ntime.sleep(10**6)');
    await run(SWALLOW_INTERRUPTS);
    await run('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)');
    await run('after = "the last cell"');
    // Cancelled by the client while running: interrupted, state kept.
    const controller = new AbortController();
    const cancelled = server.client.callTool({ name: 'execute', arguments: { code: 'import time\ntime.sleep(10**6)' } }, undefined, { signal: controller.signal, timeout: 60_000 });
    await eventually(() => server.structured('runtime_status'), (value) => value.state === 'busy');
    controller.abort();
    await cancelled.catch(() => undefined);
    await eventually(() => server.structured('runtime_status'), (value) => value.state === 'ready' && value.last_interruption?.kind === 'cancelled');
    // The worker dies between cells: replaced, and said so.
    process.kill(await workerPid(server), 'SIGKILL');
    await eventually(() => server.structured('runtime_status'), (value) => value.epoch === 4 && value.state === 'ready', 20_000);
    await written(server, 23);
    summary = notebook('validate', path());
  });
  afterAll(async () => {
    await server.close();
  });

  it('passes nbformat.validate and is private to the user', () => {
    expect(summary.error).toBeNull();
    expect(summary.valid).toBe(true);
    expect(statSync(path()).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(scratch, 'every-kind'))).toEqual(['session.ipynb']);
  });

  it('records execute cells with Jupyter outputs and the namespace execution counts', () => {
    const cells = code(summary);
    expect(cells[0]).toMatchObject({ source: 'x = 21\nprint(x * 2)', execution_count: 1, outputs: [{ type: 'stream', name: 'stdout', text: '42\n' }] });
    expect(cells[1]).toMatchObject({ execution_count: 2, outputs: [{ type: 'execute_result', text: '42' }] });
    expect(cells[2]!.outputs).toEqual([{ type: 'stream', name: 'stderr', text: 'careful\n' }]);
    expect(cells[3]!.outputs).toEqual([expect.objectContaining({ type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero' })]);
    expect(cells[3]!.outputs![0]!.lines).toBeGreaterThan(1);
    expect(cells[4]!.outputs).toEqual([expect.objectContaining({ type: 'error', ename: 'SyntaxError' })]);
    expect(cells[5]!.outputs).toEqual([
      { type: 'display_data', mimes: ['text/html', 'text/plain'], text: '<IPython.core.display.HTML object>' },
      { type: 'display_data', mimes: ['image/png', 'text/plain'], text: '<IPython.core.display.Image object>' },
    ]);
    expect(cells[6]!.outputs![0]!.text).toMatch(/^y{50}\n\[… 801 characters were not kept here\]\ny{149}\n$/);
    expect(cells.slice(0, 8).map((cell) => cell.execution_count)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('records call_function and dynamic tool calls as the Python calls they stand for', () => {
    const cells = code(summary);
    expect(cells[8]).toMatchObject({ source: 'pair(a=1, b="it\'s")', execution_count: null, outputs: [{ type: 'execute_result', text: '[1, "it\'s"]' }] });
    expect(cells[9]).toMatchObject({ source: 'boom(n=3)', outputs: [expect.objectContaining({ type: 'error', ename: 'ValueError', evalue: 'bad 3' })] });
    expect(cells[10]).toMatchObject({ source: '# tool make_pair\npair(a=7)', outputs: [{ type: 'execute_result', text: "[7, 'z']" }] });
    expect(cells.some((cell) => cell.source.includes('missing'))).toBe(false);
  });

  it('says in markdown what happened to interrupted cells and whether the state was kept', () => {
    const cells = code(summary);
    expect(cells[11]).toMatchObject({ source: expect.stringContaining('time.sleep(10**6)'), execution_count: null, outputs: [] });
    const notes = markdown(summary);
    expect(notes[0]).toMatch(/^## ipython-mcp .* session, started /);
    expect(notes[1]).toMatch(/^\*\*Timed out\.\*\* .*the namespace state was kept/);
    expect(notes[2]).toMatch(/^\*\*Timed out\.\*\* .*the worker was replaced and the namespace reset \(epoch 2\)/);
    expect(notes[3]).toMatch(/^\*\*Worker crashed\.\*\* .*namespace reset \(epoch 3\)/);
    expect(notes[4]).toMatch(/^\*\*Cancelled\.\*\* The client cancelled .*the namespace state was kept/);
    expect(notes[5]).toMatch(/^\*\*Worker replaced\*\* \(crash\) between cells: the namespace was reset \(epoch 4\)/);
    expect(notes).toHaveLength(6);
    // Each note follows the cell it is about.
    const tail = summary.cells.slice(-11, -4).map((cell) => (cell.cell_type === 'code' ? `code: ${cell.source.split('\n')[0]}` : cell.source.split('.')[0]));
    expect(tail).toEqual(['code: import time', '**Timed out', 'code: import time', '**Timed out', 'code: import os, signal', '**Worker crashed', 'code: after = "the last cell"']);
  });

  it('reports its state in runtime_status', async () => {
    const status = await journalStatus(server);
    expect(status).toMatchObject({ path: path(), state: 'writing', files: 1, error: null });
    expect(status.cells).toBe(summary.cells.length);
  });

  it('is served as an MCP resource', async () => {
    const { resources } = await server.client.listResources();
    // The journal first; after it the namespace's outputs (this session's images), output-resources.e2e tests those.
    expect(resources[0]).toEqual(expect.objectContaining({ uri: 'ipython-mcp://journal', mimeType: 'application/x-ipynb+json' }));
    for (const resource of resources.slice(1)) expect(resource.uri).toMatch(/^ipython-mcp:\/\/default\/(?:spill|image)\//);
    const read = await server.client.readResource({ uri: 'ipython-mcp://journal' });
    const text = (read.contents[0] as { text: string }).text;
    expect(JSON.parse(text).cells).toHaveLength(summary.cells.length);
    await expect(server.client.readResource({ uri: 'ipython-mcp://other' })).rejects.toThrow(/Unknown resource/);
  });

  it('renders with jupyter nbconvert --to html', () => {
    const done = spawnSync(testPython(), ['-m', 'jupyter', 'nbconvert', '--to', 'html', '--output-dir', scratch, '--output', 'rendered', path()], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    expect(done.status, done.stderr).toBe(0);
    const html = readFileSync(join(scratch, 'rendered.html'), 'utf8');
    expect(html).toContain('ZeroDivisionError');
    expect(html).toContain('<b>bold</b>');
    expect(html).toContain(`data:image/png;base64,${PNG}`);
    expect(html).toContain('Timed out.');
  });
});

describe('re-running a journal', () => {
  it('reproduces the outputs of a deterministic session under jupyter nbconvert --execute', async () => {
    const path = join(scratch, 'rerun.ipynb');
    const server = await startServer(BASE_ENV, ['--journal', path]);
    try {
      const cells = [
        'import math\nvalues = [math.factorial(n) for n in range(6)]\nprint(values)',
        'sum(values)',
        'import sys\nprint("to stderr", file=sys.stderr)',
        'def scale(items: list, factor: int = 2) -> list:\n    return [item * factor for item in items]',
        '{"a": [1, 2.5, None, True], "b": "text"}',
        'from IPython.display import display, Markdown\ndisplay(Markdown("*shown*"))',
        'int("not a number")',
      ];
      for (const cell of cells) await server.call('execute', { code: cell });
      await server.call('call_function', { name: 'scale', arguments: { items: [1, 2, 3], factor: 3 } });
      await server.call('call_function', { name: 'scale', arguments: { items: ['a'] } });
      await written(server, cells.length + 3);
    } finally {
      await server.close();
    }
    const original = notebook('validate', path);
    const rerun = notebook('rerun', path, join(scratch, 'rerun-executed.ipynb'));
    expect(rerun.error).toBeNull();
    const outputs = (summary: Summary) =>
      code(summary).map((cell) => (cell.outputs ?? []).map((output) => ({ ...output, lines: output.lines === undefined ? undefined : 'some' })));
    expect(outputs(rerun)).toEqual(outputs(original));
    expect(code(original)).toHaveLength(9);
  });
});

describe('crash safety', () => {
  it('a SIGKILL of the server mid-cell leaves a valid notebook with every finished cell', async () => {
    const path = join(scratch, 'killed.ipynb');
    const server = await startServer({ ...BASE_ENV, IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '60' }, ['--journal', path]);
    for (let index = 0; index < 20; index += 1) await server.call('execute', { code: `print(${index})\n"${'v'.repeat(2000)}"` });
    await written(server, 21);
    const running = server.call('execute', { code: 'import time\ntime.sleep(60)' }).catch(() => undefined);
    await eventually(() => server.structured('runtime_status'), (value) => value.state === 'busy');
    process.kill(server.serverPid, 'SIGKILL');
    expect(await waitForExit(server.serverPid, 5_000)).toBe(true);
    await running;
    await server.close();
    const summary = notebook('validate', path);
    expect(summary.valid).toBe(true);
    expect(code(summary).map((cell) => cell.outputs![0]!.text)).toEqual(Array.from({ length: 20 }, (_, index) => `${index}\n`));
  });
});

describe('a journal that cannot be written', () => {
  it('does not stop the server: reported once in the logs and in runtime_status', async () => {
    // A parent that is a regular file: mkdir and open fail even for root.
    const blocker = join(scratch, 'not-a-directory');
    writeFileSync(blocker, 'x');
    const server = await startServer({ ...BASE_ENV, IPYTHON_MCP_JOURNAL: join(blocker, 'session.ipynb') });
    try {
      for (let index = 0; index < 3; index += 1) {
        const result = await server.structured('execute', { code: `secret_${index} = ${index}\nsecret_${index}` });
        expect(result.result.value).toBe(index);
      }
      const status = await eventually(() => journalStatus(server), (value) => value.state === 'failed', 10_000);
      expect(status).toMatchObject({ state: 'failed', cells: 0 });
      expect(status.error).toMatch(/^ENOTDIR|^EEXIST/);
      expect((await server.structured('runtime_status')).state).toBe('ready');
      await expect(server.client.readResource({ uri: 'ipython-mcp://journal' })).rejects.toThrow(/not being written/);
      const lines = await loggedLines(server, 'journal.failed');
      expect(lines).toHaveLength(1);
      expect(server.stderr()).not.toContain('secret_');
    } finally {
      await server.close();
    }
  });

  it('never overwrites a file that is not a journal', async () => {
    const path = join(scratch, 'mine.ipynb');
    writeFileSync(path, '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}');
    const server = await startServer(BASE_ENV, ['--journal', path]);
    try {
      await server.call('execute', { code: '1 + 1' });
      expect(server.client.getServerCapabilities()?.resources).toBeDefined();
      const status = await eventually(() => journalStatus(server), (value) => value.state === 'failed', 10_000);
      expect(status.error).toContain('not an ipython-mcp journal');
      expect(readFileSync(path, 'utf8')).toBe('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}');
    } finally {
      await server.close();
    }
  });
});

describe('without a journal', () => {
  it('writes nothing, publishes no journal resource and adds nothing to runtime_status', async () => {
    const server = await startServer(BASE_ENV);
    try {
      expect((await server.structured('execute', { code: '1 + 1' })).result.value).toBe(2);
      // Resources stay on for the namespace's outputs (spill files, images); the journal is not among them.
      expect((await server.client.listResources()).resources).toEqual([]);
      await expect(server.client.readResource({ uri: 'ipython-mcp://journal' })).rejects.toThrow(/Unknown resource/);
      expect('journal' in (await server.structured('runtime_status'))).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('bounds and sessions', () => {
  it('rolls over to a numbered next file past the size cap, and says so in both', async () => {
    const path = join(scratch, 'rolling', 'big.ipynb');
    const server = await startServer({ ...BASE_ENV, IPYTHON_MCP_JOURNAL_MAX_BYTES: '8192' }, ['--journal', path]);
    try {
      for (let index = 0; index < 12; index += 1) await server.call('execute', { code: `print("${'r'.repeat(400)}", ${index})` });
      await written(server, 13);
      const status = await journalStatus(server);
      expect(status.files).toBeGreaterThanOrEqual(2);
      expect(status.path).toMatch(/big\.\d+\.ipynb$/);
    } finally {
      await server.close();
    }
    const first = notebook('validate', path);
    const second = notebook('validate', join(scratch, 'rolling', 'big.2.ipynb'));
    expect(first.valid && second.valid).toBe(true);
    expect(markdown(first).at(-1)).toContain('continues in `big.2.ipynb`');
    expect(markdown(second)[0]).toContain('Continued from `big.ipynb`');
    for (const file of readdirSync(join(scratch, 'rolling'))) expect(statSync(join(scratch, 'rolling', file)).size).toBeLessThanOrEqual(8192 + 2048);
  });

  it('a later server continues the journal it finds, keeping the earlier session', async () => {
    const path = join(scratch, 'continued.ipynb');
    for (const value of ['first', 'second']) {
      const server = await startServer(BASE_ENV, ['--journal', path]);
      await server.call('execute', { code: `"${value}"` });
      await written(server, 2);
      await server.close();
    }
    expect(existsSync(path)).toBe(true);
    const summary = notebook('validate', path);
    expect(summary.valid).toBe(true);
    expect(code(summary).map((cell) => cell.outputs![0]!.text)).toEqual(["'first'", "'second'"]);
    expect(markdown(summary).filter((note) => note.includes('session, started'))).toHaveLength(2);
  });
});
