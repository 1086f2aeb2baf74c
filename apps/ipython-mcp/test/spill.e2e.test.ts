import { existsSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MODES, childPids, eventually, startServer, type TestServer } from './harness.js';

// Long output through a real stdio client: head and tail of a stream with exact counts, the whole stream spilled
// to a file of the server's own (0600 in a 0700 directory) that a later execute can read, the spill budget
// (IPYTHON_MCP_OUTPUT_SPILL_MB: oldest files dropped first, a flood past it stays bounded and says so), memory
// bounded under a 1 GiB flood, and the directory gone on every way the server ends.

const MiB = 1024 * 1024;

function text(result: { content: unknown[] }): string {
  const item = result.content.find((each): each is { type: 'text'; text: string } => (each as { type?: string }).type === 'text');
  return item?.text ?? '';
}

/** VmRSS of a process in bytes (Linux). */
function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/**
 * The active worker's pid on this host. Inside --sandbox the worker's own pid is its number in the engine's pid
 * namespace, and the standby holds the same number in another one (and may have started in the same clock tick):
 * the worker is the process in the server's tree whose innermost pid and pid namespace (the namespace's inode, which
 * is unique while it lives and reads the same from inside and out) are the ones it reports.
 */
async function hostWorkerPid(server: TestServer): Promise<number> {
  const reported = await server.structured('execute', {
    code: 'import os as _os\n(_os.getpid(), _os.readlink("/proc/self/ns/pid"))',
  });
  const [inner, namespace] = reported.result.value as [number, string];
  const found: number[] = [];
  const queue = [server.serverPid];
  while (queue.length > 0) {
    for (const pid of childPids(queue.pop()!)) {
      queue.push(pid);
      try {
        const nspid = /NSpid:\s+([\d\s]+)\n/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim().split(/\s+/).map(Number) ?? [];
        if (readlinkSync(`/proc/${pid}/ns/pid`) === namespace && nspid.at(-1) === inner) found.push(pid);
      } catch {
        // gone
      }
    }
  }
  expect(found, `the worker (pid ${inner} inside ${namespace}) in the server's tree`).toHaveLength(1);
  return found[0]!;
}

describe('a long print', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('keeps its first and last characters, counts the rest exactly, and spills all of it to a 0600 file', async () => {
    const result = await server.call('execute', { code: "print('x' * 10**6); print('END-OF-LOG')" });
    const out = result.structuredContent as Record<string, any>;
    const total = 10 ** 6 + 1 + 'END-OF-LOG\n'.length;
    expect(out.stdout.startsWith('x'.repeat(2048))).toBe(true);
    expect(out.stdout.endsWith('x\nEND-OF-LOG\n')).toBe(true);
    expect(out.stdout.length + out.stdout_omitted_chars).toBe(total);
    expect(out.stdout_omitted_at).toBe(2048);
    expect(out.truncated).toEqual({ stdout: true });
    const path = out.stdout_spill as string;
    expect(readFileSync(path, 'utf8')).toBe(`${'x'.repeat(10 ** 6)}\nEND-OF-LOG\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(path)).uid).toBe(process.getuid?.());
    expect(out).not.toHaveProperty('stdout_spill_omitted_chars');
    // The text block marks the cut, how much, and how to read the rest.
    const lines = text(result).split('\n');
    expect(lines).toContain(`[stdout truncated: ${(total - 8192).toLocaleString('en-US')} characters omitted here]`);
    expect(lines).toContain(`[whole stdout in ${path}; read it with execute, e.g. open(path).read()[-5000:]]`);
    // An ordinary later execute reads it.
    const read = await server.structured('execute', { code: `open(${JSON.stringify(path)}).read()[-11:]` });
    expect(read.result.value).toBe('END-OF-LOG\n');
  });

  it('spills nothing for output within the budget, or for call_function', async () => {
    const short = await server.structured('execute', { code: "print('short')" });
    expect(short).toEqual({ execution_count: expect.any(Number), stdout: 'short\n' });
    await server.structured('execute', { code: "def loud() -> int:\n    print('y' * 100_000)\n    return 1" });
    const before = readdirSync(dirname((await server.structured('execute', { code: "print('z' * 9000)" })).stdout_spill)).length;
    expect((await server.structured('call_function', { name: 'loud' })).value).toBe(1);
    const after = await server.structured('execute', { code: "print('z' * 9000)" });
    expect(readdirSync(dirname(after.stdout_spill)).length).toBe(before + 1);
  });
});

describe.each(SANDBOX_MODES)('the spill budget ($mode)', ({ env }) => {
  it('drops the oldest spill first, and a 1 GiB flood stays within its cap and bounded memory, and says so', async () => {
    const server = await startServer({ ...env, IPYTHON_MCP_OUTPUT_SPILL_MB: '8', IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '300' });
    try {
      const spills: string[] = [];
      for (let cell = 0; cell < 3; cell += 1) {
        spills.push((await server.structured('execute', { code: "print('a' * (3 * 2**20))" })).stdout_spill);
      }
      // 3 MiB each in an 8 MiB budget: the first went when the third came.
      expect(spills.map((path) => existsSync(path))).toEqual([false, true, true]);

      const pid = await hostWorkerPid(server);
      await server.structured('execute', { code: '0' });
      const before = { server: rssBytes(server.serverPid), worker: rssBytes(pid) };
      const peak = { ...before };
      const sampler = setInterval(() => {
        try {
          peak.server = Math.max(peak.server, rssBytes(server.serverPid));
          peak.worker = Math.max(peak.worker, rssBytes(pid));
        } catch {
          // a process gone mid-read: the assertions below report it
        }
      }, 25);
      const line = MiB; // each print writes MiB - 1 'x' characters plus '\n'
      const lines = 1024;
      const result = await server.call('execute', { code: `for _ in range(${lines}):\n    print('x' * (${line} - 1))` });
      clearInterval(sampler);
      const out = result.structuredContent as Record<string, any>;
      const total = lines * line;
      expect(out.stdout.length + out.stdout_omitted_chars).toBe(total);
      const spill = out.stdout_spill as string;
      const size = statSync(spill).size;
      expect(size).toBeLessThanOrEqual(8 * MiB);
      // Everything else in the directory was dropped to make room for it: the directory holds the cap at most.
      const inDirectory = readdirSync(dirname(spill)).reduce((sum, name) => sum + statSync(`${dirname(spill)}/${name}`).size, 0);
      expect(inDirectory).toBeLessThanOrEqual(8 * MiB);
      expect(out.stdout_spill_omitted_chars).toBe(total - size);
      expect(text(result)).toContain(`[start of stdout (all but its last ${(total - size).toLocaleString('en-US')} characters: spill cap) in ${spill};`);
      const growth = { server: (peak.server - before.server) / MiB, worker: (peak.worker - before.worker) / MiB };
      console.log(`[measure] 1 GiB flood (${env.IPYTHON_MCP_SANDBOX ? '--sandbox' : 'unsandboxed'}): RSS growth server ${growth.server.toFixed(1)} MiB, worker ${growth.worker.toFixed(1)} MiB; spill ${size} bytes`);
      expect(growth.server).toBeLessThan(64);
      expect(growth.worker).toBeLessThan(64);
    } finally {
      await server.close();
    }
  }, 300_000);

  it('IPYTHON_MCP_OUTPUT_SPILL_MB=0 turns it off: head and tail only, no directory', async () => {
    const server = await startServer({ IPYTHON_MCP_OUTPUT_SPILL_MB: '0' });
    try {
      const result = await server.call('execute', { code: "print('x' * 10**5); print('END')" });
      const out = result.structuredContent as Record<string, any>;
      expect(out.stdout.endsWith('x\nEND\n')).toBe(true);
      expect(out).not.toHaveProperty('stdout_spill');
      expect(text(result)).not.toContain('whole stdout');
      expect((await server.structured('execute', { code: 'import os\nstr(os.environ.get("IPYTHON_MCP_SPILL_DIR"))' })).result.value).toBe('None');
    } finally {
      await server.close();
    }
  });
});

describe('the spill directory is gone after the server exits', () => {
  const spillOf = async (server: TestServer): Promise<string> => {
    const out = await server.structured('execute', { code: "print('q' * 20_000)" });
    expect(existsSync(out.stdout_spill)).toBe(true);
    return dirname(out.stdout_spill as string);
  };

  it('on a clean close (stdin EOF)', async () => {
    const server = await startServer();
    const directory = await spillOf(server);
    await server.close();
    expect(existsSync(directory)).toBe(false);
  });

  it('on SIGTERM', async () => {
    const server = await startServer();
    const directory = await spillOf(server);
    process.kill(server.serverPid, 'SIGTERM');
    await eventually(() => existsSync(directory), (exists) => !exists, 15_000);
    await server.close();
  });

  it('on SIGKILL of the server (the worker\'s watchdog removes it)', async () => {
    const server = await startServer();
    const directory = await spillOf(server);
    process.kill(server.serverPid, 'SIGKILL');
    await eventually(() => existsSync(directory), (exists) => !exists, 15_000);
    await server.close();
  });

  it('but not when a worker is replaced (the server lives on)', async () => {
    const server = await startServer({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '0.5', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '0.5' });
    try {
      const directory = await spillOf(server);
      const stuck = await server.structured('execute', { code: 'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)' });
      expect(stuck.error.code).toBe('operation_timeout');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(existsSync(directory)).toBe(true);
      expect(dirname((await server.structured('execute', { code: "print('r' * 20_000)" })).stdout_spill)).toBe(directory);
    } finally {
      await server.close();
    }
  }, 60_000);
});
