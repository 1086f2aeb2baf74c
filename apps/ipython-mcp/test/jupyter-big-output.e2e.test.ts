// Big output on a kernel (issue 62): an answer every time, exact counts, the whole output in the spill file (its size
// asserted against the answer's counts), bounded memory in the kernel and the Jupyter server, and no spill folder
// left behind. Both ways a spill file reaches this side are run: written straight into the spill directory (a kernel
// on this machine) and pulled after the answer (IPYTHON_MCP_KERNEL_SPILL=transfer, as for a remote kernel), on an
// owned (--kernel-name) and an attached (--kernel ID) kernel, with and without a progress token.
// A 1 GiB case takes about 30 s on two shared cores (most of it the print itself and the 256 MiB pull).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type TestServer } from './harness.js';
import { startJupyter, startKernelServer, type KernelFlags, type RunningJupyter } from './jupyter-harness.js';

const MiB = 1024 * 1024;
// The kernels and ipython-mcp write their temporary folders here (TMPDIR), so what is left behind is ours to count.
const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-big-output-'));
process.env.TMPDIR = scratch;

let jupyter: RunningJupyter;

beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 90_000);

afterAll(async () => {
  await jupyter?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** The peak RSS growth of each process while `work` runs, in MiB. */
async function peakGrowth<T>(pids: Record<string, number>, work: () => Promise<T>): Promise<{ value: T; growth: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, rssBytes(pid)]));
  const peak = { ...before };
  const sample = (): void => {
    for (const [name, pid] of Object.entries(pids)) {
      try {
        peak[name] = Math.max(peak[name] as number, rssBytes(pid));
      } catch {
        // read again on the next tick
      }
    }
  };
  const sampler = setInterval(sample, 50);
  try {
    const value = await work();
    sample();
    return { value, growth: Object.fromEntries(Object.entries(peak).map(([name, bytes]) => [name, (bytes - (before[name] as number)) / MiB])) };
  } finally {
    clearInterval(sampler);
  }
}

function spillFolders(): string[] {
  return readdirSync(scratch).filter((name) => name.startsWith('ipython-mcp-spill-'));
}

async function attachedKernel(): Promise<string> {
  const started = await jupyter.rest('POST', 'api/kernels', { name: 'python3' });
  return (started.body as { id: string }).id;
}

interface Case {
  readonly name: string;
  readonly kernel: 'owned' | 'attached';
  readonly transfer: boolean;
  readonly progress: boolean;
  readonly mib: number;
}

const cases: Case[] = [
  { name: 'owned kernel, 256 MiB, spill file written here by the kernel', kernel: 'owned', transfer: false, progress: false, mib: 256 },
  { name: 'owned kernel, 256 MiB with a progress token, spill file pulled', kernel: 'owned', transfer: true, progress: true, mib: 256 },
  { name: 'attached kernel, 256 MiB, spill file pulled', kernel: 'attached', transfer: true, progress: false, mib: 256 },
  { name: 'attached kernel, 256 MiB with a progress token, spill file written here by the kernel', kernel: 'attached', transfer: false, progress: true, mib: 256 },
  // The spill budget (256 MiB) keeps the file's first 256 MiB: the rest is counted, exactly.
  { name: 'owned kernel, 1 GiB, spill file pulled', kernel: 'owned', transfer: true, progress: false, mib: 1024 },
  { name: 'attached kernel, 1 GiB with a progress token, spill file pulled', kernel: 'attached', transfer: true, progress: true, mib: 1024 },
];

describe('big output on a kernel', () => {
  const attachedIds: string[] = [];

  afterAll(async () => {
    for (const id of attachedIds) await jupyter.rest('DELETE', `api/kernels/${id}`);
  });

  for (const each of cases) {
    it(each.name, async () => {
      const flags: KernelFlags = each.kernel === 'owned' ? ['--kernel-name', 'python3'] : ['--kernel', await attachedKernel()];
      if (each.kernel === 'attached') attachedIds.push(flags[1]);
      const agent: TestServer = await startKernelServer(jupyter, flags, {
        IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1200',
        ...(each.transfer ? { IPYTHON_MCP_KERNEL_SPILL: 'transfer' } : {}),
      });
      try {
        const kernelPid = (await agent.structured('execute', { code: 'import os\nos.getpid()' })).result.value as number;
        // With a progress token the cell pauses halfway: what it printed before the pause must reach the client as
        // progress while the cell still runs (a flood written straight to a file can end in 0.1 s, before any
        // notification is due: its output then travels in the answer only, which is right).
        const pause = each.progress ? `    if _ == ${each.mib / 2}:\n        __import__('time').sleep(0.8)\n` : '';
        const code = `for _ in range(${each.mib}):\n${pause}    print('x' * (${MiB} - 1))\nprint("flood end")`;
        const progress: string[] = [];
        const started = Date.now();
        const { value: result, growth } = await peakGrowth({ kernel: kernelPid, server: jupyter.pid }, () =>
          agent.client.callTool(
            { name: 'execute', arguments: { code } },
            undefined,
            {
              timeout: 1_500_000,
              ...(each.progress ? { onprogress: (update: { message?: string | undefined }) => progress.push(update.message ?? ''), resetTimeoutOnProgress: true } : {}),
            },
          ),
        );
        const seconds = (Date.now() - started) / 1000;
        const out = result.structuredContent as Record<string, any>;
        const total = each.mib * MiB + 'flood end\n'.length;
        expect(out.error ?? null).toBeNull();
        expect(out.stdout.length + out.stdout_omitted_chars).toBe(total);
        expect(out.stdout.endsWith('flood end\n')).toBe(true);
        expect(out.stdout_spill_cut).toBeUndefined();
        // ASCII: a character is a byte. The file holds the stream but for what the spill budget (256 MiB) left out.
        const short = (out.stdout_spill_omitted_chars as number | undefined) ?? 0;
        expect(statSync(out.stdout_spill as string).size).toBe(total - short);
        expect(short).toBe(Math.max(0, total - 256 * MiB));
        if (each.progress) expect(progress.length).toBeGreaterThan(0);
        console.log(
          `[measure] ${each.name}: ${seconds.toFixed(1)} s; RSS growth kernel ${growth.kernel?.toFixed(1)} MiB, Jupyter server ${growth.server?.toFixed(1)} MiB`,
        );
        expect(growth.kernel).toBeLessThanOrEqual(64);
        expect(growth.server).toBeLessThanOrEqual(64);
        expect((await agent.structured('execute', { code: '"next call"' })).result.value).toBe('next call');
      } finally {
        await agent.close();
      }
    }, 1_800_000);
  }

  it('a kernel that dies while its spill file is pulled: the answer keeps what came and says what did not, and why', async () => {
    const agent = await startKernelServer(jupyter, ['--kernel-name', 'python3'], { IPYTHON_MCP_KERNEL_SPILL: 'transfer', IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '600' });
    try {
      const kernelPid = (await agent.structured('execute', { code: 'import os\nos.getpid()' })).result.value as number;
      const answer = agent.structured('execute', { code: `for _ in range(256):\n    print('x' * (${MiB} - 1))` });
      // The pull has begun once the local file has bytes: the cell has ended and answered.
      const pulled = (): number =>
        readdirSync(scratch)
          .filter((name) => name.startsWith('ipython-mcp-output-'))
          .flatMap((directory) => readdirSync(join(scratch, directory)).filter((name) => name.endsWith('-stdout.txt')).map((name) => statSync(join(scratch, directory, name)).size))
          .reduce((sum, size) => sum + size, 0);
      const deadline = Date.now() + 120_000;
      while (pulled() < 8 * MiB && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      process.kill(kernelPid, 'SIGKILL');
      const out = await answer;
      const total = 256 * MiB;
      expect(out.error ?? null).toBeNull();
      expect(out.stdout.length + out.stdout_omitted_chars).toBe(total);
      expect(out.stdout_spill_cut).toMatch(/^\d+ of its \d+ bytes came: the kernel's connection ended/);
      const size = statSync(out.stdout_spill as string).size;
      expect(size).toBeGreaterThanOrEqual(8 * MiB);
      expect(size).toBeLessThan(total);
      expect(out.stdout_spill_omitted_chars).toBe(total - size);
      // The next call runs on a fresh kernel (an owned kernel is replaced).
      expect((await agent.structured('execute', { code: '"next call"' })).result.value).toBe('next call');
    } finally {
      await agent.close();
    }
  }, 300_000);

  it('a cell whose displays pass the server\'s IOPub message rate limit still gets its whole answer', async () => {
    // 6,000 displays in a second or two: past iopub_msg_rate_limit (1,000 a second over 3 s), the Jupyter server drops
    // every IOPub message but a status until the rate falls, the answer on the comm among them. The answer is asked
    // for again after the cell's idle (which resets the server's window), and comes.
    const agent = await startKernelServer(jupyter, ['--kernel-name', 'python3']);
    try {
      const out = await agent.structured('execute', {
        code: 'from IPython.display import display\nfor i in range(6000):\n    display(i)\n"answered"',
      });
      expect(out.error ?? null).toBeNull();
      expect(out.result.value).toBe('answered');
      expect((await agent.structured('execute', { code: '"next call"' })).result.value).toBe('next call');
    } finally {
      await agent.close();
    }
  }, 120_000);

  it('leaves no spill folder in the temporary directory after the sessions (owned kernels shut down, attached ones kept)', async () => {
    const agent = await startKernelServer(jupyter, ['--kernel-name', 'python3'], { IPYTHON_MCP_KERNEL_SPILL: 'transfer' });
    try {
      // A standby kernel, a call that spills nothing and one that spills: none of them leaves a folder.
      await agent.structured('execute', { code: '1' });
      const out = await agent.structured('execute', { code: "print('s' * 200_000)" });
      expect(readFileSync(out.stdout_spill as string, 'utf8')).toBe(`${'s'.repeat(200_000)}\n`);
      // The pulled file's folder goes once the kernel has read this side's spill_done, sent after the last piece:
      // that message may still be on its way when the answer is read.
      expect(await eventually(async () => spillFolders(), (folders) => folders.length === 0, 10_000)).toEqual([]);
    } finally {
      await agent.close();
    }
    expect(spillFolders()).toEqual([]);
  }, 120_000);
});
