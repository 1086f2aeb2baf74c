// --state FILE through a real SDK client: the namespace saved at a graceful end and restored by the next server,
// what cannot be pickled named with its reason, registrations back, damaged files starting empty with the
// reason, the size cap, a SIGKILL during a save leaving the previous file whole, and no change without --state.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, eventually, startServer, taggedProcesses, testPython, waitForExit, type TestServer } from './harness.js';

const TAG = randomUUID();
const ENV = { IPYTHON_MCP_TEST_RUN_TAG: TAG };

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-state-'));
});
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  const left = await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000);
  expect(left).toEqual([]);
});

function text(result: { content: unknown }): string {
  return (result.content as { type: string; text?: string }[]).map((part) => part.text ?? '').join('\n');
}

async function execute(server: TestServer, code: string): Promise<Record<string, any>> {
  const structured = await server.structured('execute', { code });
  expect(structured.error ?? null, JSON.stringify(structured)).toBeNull();
  return structured;
}

/**
 * Ends the server by stdin EOF and waits for it to exit. Not `client.close()`: the SDK's stdio client sends SIGTERM
 * 2 s after closing stdin and SIGKILL 2 s later, which on a loaded machine can cut a save short (README).
 */
async function endByStdinEof(server: TestServer): Promise<void> {
  const child = (server.transport as unknown as { _process?: { stdin?: { end(): void } | null } })._process;
  child?.stdin?.end();
  await waitForExit(server.serverPid, 60_000);
  await server.client.close().catch(() => undefined);
}

async function stateStatus(server: TestServer): Promise<Record<string, any>> {
  return (await server.structured('runtime_status', {})).state_file as Record<string, any>;
}

describe('--state FILE', () => {
  it('brings the namespace and a registered tool back in the next server, and names what it could not save', async () => {
    const file = join(scratch, 'round-trip.state');
    const first = await startServer(ENV, ['--state', file]);
    try {
      await execute(
        first,
        'x = 41\ndef f(a): return a + 1\nimport json as j\ndata = list(range(10**6))\ng = (i for i in range(3))\nh = lambda v: v * 2\n' +
          'def triple(a: int) -> int:\n    return a * 3',
      );
      const registered = await first.structured('register_tool', { name: 'triple' });
      expect(registered.tool_name).toBe('triple');
    } finally {
      await endByStdinEof(first); // the graceful end that saves
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const second = await startServer(ENV, ['--state', file]);
    try {
      const tools = await second.client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain('triple');
      const first = await second.call('execute', { code: '[f(x) == 42, j.dumps([1]), len(data), h(21) == 42]' });
      const firstText = text(first);
      expect(firstText).toMatch(/^\[ipython-mcp state\] restored 6 name\(s\): data, f, h, j, triple, x; tools: triple; not restored: g \(cannot be pickled: TypeError: cannot pickle 'generator' object\)/);
      expect(firstText).toContain("[True, '[1]', 1000000, True]");
      // One line, once.
      expect(text(await second.call('execute', { code: '1 + 1' }))).not.toContain('ipython-mcp state');
      const called = await second.call('triple', { a: 2 });
      expect(called.isError ?? false).toBe(false);
      expect(text(called)).toContain('6');
      const status = await stateStatus(second);
      expect(status.path).toBe(file);
      expect(status.last_restore).toMatchObject({ kind: 'restore', ok: true, error: null, names_count: 6, tools: ['triple'], skipped_count: 1 });
      expect(status.last_restore.skipped).toEqual([{ name: 'g', reason: "cannot be pickled: TypeError: cannot pickle 'generator' object" }]);
      expect(status.last_restore.bytes).toBeGreaterThan(1_000_000);
      expect(status.last_save).toBeNull();
    } finally {
      await second.close();
    }
  });

  it.each([
    ['truncated', (good: Buffer) => good.subarray(0, Math.floor(good.length / 2)), /truncated/],
    ['random bytes', () => randomBytes(64 * 1024), /not an ipython-mcp state file/],
  ])('a %s file starts an empty namespace with the reason in runtime_status', async (_name, damage, reason) => {
    const file = join(scratch, `damaged-${_name.replace(' ', '-')}.state`);
    const first = await startServer(ENV, ['--state', file]);
    await execute(first, 'x = 41\nblob = bytes(200_000)');
    await endByStdinEof(first);
    writeFileSync(file, damage(readFileSync(file)));
    const second = await startServer(ENV, ['--state', file]);
    try {
      const status = await stateStatus(second);
      expect(status.last_restore.ok).toBe(false);
      expect(status.last_restore.names_count).toBe(0);
      expect(status.last_restore.error).toMatch(reason);
      const probe = await second.call('execute', { code: 'x' });
      expect(text(probe)).toMatch(/^\[ipython-mcp state\] the state file was not loaded, the namespace starts empty/);
      expect(text(probe)).toContain('NameError');
      expect((await second.structured('runtime_status', {})).state).toBe('ready');
    } finally {
      await second.close();
    }
  });

  it('a 10 MB cap keeps the small names and reports the large one (the explicit save, then the next server)', async () => {
    const file = join(scratch, 'capped.state');
    const first = await startServer(ENV, ['--state', file, '--state-max-mb', '10']);
    try {
      const saved = await first.structured('execute', { code: 'small = 1\nwords = ["a"] * 100\nbig = bytes(20 * 2**20)\n%ipython_mcp_save' });
      expect(saved.stdout).toMatch(/saved 2 name\(s\) to capped\.state \(small, words\); skipped 1: big \(not saved: over the 10 MiB size cap\)/);
      const status = await stateStatus(first);
      expect(status.last_save).toMatchObject({ kind: 'save', ok: true, names: ['small', 'words'], skipped: [{ name: 'big', reason: 'not saved: over the 10 MiB size cap' }] });
    } finally {
      await first.close();
    }
    expect(statSync(file).size).toBeLessThan(10 * 2 ** 20);
    const second = await startServer(ENV, ['--state', file, '--state-max-mb', '10']);
    try {
      expect(text(await second.call('execute', { code: '(small, len(words), "big" in globals())' }))).toContain('[1, 100, False]');
    } finally {
      await second.close();
    }
  });

  it('SIGKILL of the server during the save of a 1 GB array leaves the previous file loadable', async () => {
    const file = join(scratch, 'killed.state');
    const first = await startServer(ENV, ['--state', file]);
    await execute(first, 'x = 41\n%ipython_mcp_save');
    const before = readFileSync(file);
    await execute(first, 'import numpy\nbig = numpy.ones(2**27)'); // 1 GiB
    // SIGTERM is a graceful end: the worker starts saving; kill the server while the temporary file grows.
    process.kill(first.serverPid, 'SIGTERM');
    const growing = await eventually(
      () => readdirSync(scratch).filter((name) => name.startsWith('.killed.state.') && name.endsWith('.tmp')),
      (names) => names.length > 0 && statSync(join(scratch, names[0]!)).size > 50 * 2 ** 20,
      60_000,
    );
    expect(growing.length).toBe(1);
    process.kill(first.serverPid, 'SIGKILL');
    await waitForExit(first.serverPid, 10_000);
    await first.client.close().catch(() => undefined);
    expect(readFileSync(file).equals(before)).toBe(true);

    const second = await startServer(ENV, ['--state', file]);
    try {
      expect(text(await second.call('execute', { code: '(x, "big" in globals())' }))).toContain('[41, False]');
      expect((await stateStatus(second)).last_restore).toMatchObject({ ok: true, names: ['x'] });
      // The killed save's temporary file is gone once its writer is.
      await eventually(
        () => readdirSync(scratch).filter((name) => name.startsWith('.killed.state.')),
        (names) => names.length === 0,
        10_000,
      );
    } finally {
      await second.close();
    }
  }, 240_000);

  it('an interpreter without dill fails at start with one line saying how to add it (exit 2)', () => {
    // The interpreter the test environment was made from: it has no dill (the test .venv does).
    const base = spawnSync(testPython(), ['-c', 'import sys, os; print(os.path.join(sys.base_prefix, "bin", "python3"))'], { encoding: 'utf8' }).stdout.trim();
    expect(spawnSync(base, ['-c', 'import dill']).status).not.toBe(0);
    const file = join(scratch, 'no-dill.state');
    const done = spawnSync(process.execPath, [CLI, '--python', base, '--state', file], { encoding: 'utf8', input: '', timeout: 30_000 });
    expect(done.status).toBe(2);
    expect(done.stdout).toBe('');
    expect(done.stderr).toBe(
      `ipython-mcp: --state (IPYTHON_MCP_STATE_FILE) needs the dill package in ${base}: run \`${base} -m pip install dill\`, or \`ipython-mcp setup\` to refresh the managed environment\n`,
    );
  });

  it('without --state nothing changes: a new lifespan starts empty and runtime_status has no state_file', async () => {
    const first = await startServer(ENV);
    await execute(first, 'x = 41');
    expect((await first.structured('runtime_status', {})).state_file).toBeUndefined();
    await first.close();
    const second = await startServer(ENV);
    try {
      const probe = text(await second.call('execute', { code: 'x' }));
      expect(probe).toContain('NameError');
      expect(probe).not.toContain('ipython-mcp state');
    } finally {
      await second.close();
    }
  });
});
