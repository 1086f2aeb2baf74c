// The kernel's machine guarded by the kernel side (python/ipython_mcp_worker/kernel/machine_guard.py), through a real
// MCP client on a real `jupyter server`: the fault matrix's memory cases (memory.e2e.test.ts) and its cases of the
// processes a cell starts (lifecycle.e2e.test.ts), where they make sense on a kernel.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { survivors, type TestServer } from './harness.js';
import { humanExecute, startHumanKernel, startJupyter, startKernelServer, type RunningJupyter } from './jupyter-harness.js';

const LIMIT_MB = 400;
let jupyter: RunningJupyter;
beforeAll(async () => {
  jupyter = await startJupyter('server');
});
afterAll(async () => {
  await jupyter?.stop();
});

async function exec(server: TestServer, code: string, timeoutSeconds?: number): Promise<Record<string, any>> {
  return server.structured('execute', { code, ...(timeoutSeconds === undefined ? {} : { timeout_seconds: timeoutSeconds }) });
}

/** Appends 8 MiB chunks inside a function until stopped (or at 1.5 GiB), counting them in the global `appended`. */
const GROWING_LOCAL = [
  "appended = {'n': 0}",
  'def grow():',
  '    chunks = []',
  '    while len(chunks) < 192:',
  "        chunks.append(b'x' * 2**23)",
  "        appended['n'] += 1",
  '    return len(chunks)',
  'grow()',
].join('\n');

describe('the memory guard on the kernel’s machine (--kernel-name)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startKernelServer(jupyter, ['--kernel-name', 'python3'], { IPYTHON_MCP_MEMORY_LIMIT_MB: String(LIMIT_MB) });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a cell growing past the limit is stopped as memory_limit, its frames freed, the namespace kept', async () => {
    await exec(server, 'keep = 41');
    const call = await server.call('execute', { code: GROWING_LOCAL });
    expect(call.isError).toBe(true);
    const body = call.structuredContent as Record<string, any>;
    expect(body.error.code).toBe('memory_limit');
    // Stopped early: the chunks made before the stop (~40 of 8 MiB), not all 192.
    const appended = (await exec(server, "appended['n']")).result.value as number;
    expect(appended).toBeGreaterThanOrEqual(10);
    expect(appended).toBeLessThan(192);
    expect((await exec(server, 'keep')).result.value).toBe(41);
    expect((await exec(server, '6 * 7')).result.value).toBe(42);
  });

  it('a deadline, then memory past the limit during its grace: one KeyboardInterrupt, released, the outcome names both', async () => {
    // The cell's handler of the deadline's interrupt allocates past the limit (held by its frame), waits for the
    // guard to see it, and re-raises: a second interrupt (the guard's own) would cut it short before `caught += 10`.
    const code = [
      'import time',
      'caught = 0',
      'def cell():',
      '    global caught',
      '    try:',
      '        time.sleep(10**6)',
      '    except KeyboardInterrupt:',
      '        caught += 1',
      `        held = b'x' * (${LIMIT_MB + 50} * 2**20)`,
      '        time.sleep(0.6)',
      '        caught += 10',
      '        raise',
      'cell()',
    ].join('\n');
    await exec(server, 'keep = 41');
    const epoch = (await server.structured('runtime_status')).epoch as number;
    const call = await server.call('execute', { code, timeout_seconds: 1 });
    expect(call.isError).toBe(true);
    const body = call.structuredContent as Record<string, any>;
    expect(body.error.code).toBe('operation_timeout');
    expect(body.error.message).toMatch(new RegExp(`^the operation passed its deadline[^;]*; then, while it was being stopped, it grew past the memory limit \\(${LIMIT_MB} MB\\); state was preserved$`));
    expect(body.error.details.memory).toMatchObject({ trigger: 'watch', limit_mb: LIMIT_MB, replaced_worker: false });
    expect(body.runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved', epoch });
    expect((await exec(server, 'caught')).result.value).toBe(11);
    expect((await exec(server, 'keep')).result.value).toBe(41);
    expect((await exec(server, '6 * 7')).result.value).toBe(42);
  });
});

/**
 * A `sleep 1000` that ignores SIGINT: the server's interrupt signals the kernel's whole process group (jupyter_client),
 * so only such a process outlives it, the agent's and the person's alike.
 */
const DEAF_SLEEP = `["sh", "-c", "trap '' INT; exec sleep 1000"]`;

/** Starts two deaf sleeps (a Popen and a `!` escape in the background), then swallows interrupts for 8 s. */
const CHILDREN_THEN_STUCK = String.raw`
import subprocess, time
_kids = [subprocess.Popen(${DEAF_SLEEP}).pid]
_background = !sh -c "trap '' INT; exec sleep 1000" > /dev/null 2>&1 & echo $!
_kids.append(int(_background[-1]))
open(KIDS_FILE, "w").write(" ".join(map(str, _kids)))
_until = time.monotonic() + 8
while time.monotonic() < _until:
    try:
        time.sleep(0.05)
    except KeyboardInterrupt:
        pass
`;

describe('the processes an agent cell started end past its grace; the person’s are left alone (--kernel ID)', () => {
  it('ends the stuck cell’s children on the kernel’s machine, never a process the person started', async () => {
    const kernelId = await startHumanKernel(jupyter);
    const personPid = Number(humanExecute(jupyter, kernelId, `import subprocess\nperson = subprocess.Popen(${DEAF_SLEEP})\nprint(person.pid)`).split('\n')[1]);
    expect(Number.isInteger(personPid)).toBe(true);
    const server = await startKernelServer(jupyter, ['--kernel', kernelId], { IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1' });
    const kidsFile = join(tmpdir(), `ipython-mcp-kids-${process.pid}-${Date.now()}`);
    try {
      const call = await server.call('execute', { code: `KIDS_FILE = ${JSON.stringify(kidsFile)}\n${CHILDREN_THEN_STUCK}`, timeout_seconds: 2 });
      expect(call.isError).toBe(true);
      const kids = readFileSync(kidsFile, 'utf8').split(' ').map(Number);
      expect(kids).toHaveLength(2);
      // Interrupted at 2 s, still running 1 s later: the kernel side ends what the cell started.
      expect(await survivors(kids, 10_000)).toEqual([]);
      expect(await survivors([personPid], 0)).toEqual([personPid]);
    } finally {
      await server.close();
      process.kill(personPid, 'SIGKILL');
      rmSync(kidsFile, { force: true });
    }
  });
});
