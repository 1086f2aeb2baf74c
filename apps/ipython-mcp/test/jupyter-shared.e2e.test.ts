// One kernel shared by several agents and the person (issue 53 parts 1 and 2): every answer is its caller's own
// cell's, a second ipython-mcp never takes the kernel from the first, and nothing an agent runs ends the kernel.
// A real `jupyter server`, the built binary over stdio with real SDK clients, jupyter_client as the person.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullRuntime, testPython, type TestServer } from './harness.js';
import {
  connectionFileOf,
  humanExecute,
  startHumanExecute,
  startHumanKernel,
  startJupyter,
  startKernelServer,
  watchKernel,
  type RunningJupyter,
} from './jupyter-harness.js';

let jupyter: RunningJupyter;

beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 90_000);

afterAll(async () => {
  await jupyter?.stop();
});

/** The person keeping the kernel busy on a subshell (and with `main`, on the main shell) until stopped. */
function startPersonBusy(kernelId: string, main: boolean): { ready: Promise<void>; stop: () => Promise<string> } {
  const script = new URL('../../../packages/jupyter-kernel/test/human-subshell.py', import.meta.url).pathname;
  const child: ChildProcess = spawn(testPython(), [script, connectionFileOf(jupyter, kernelId), ...(main ? ['--main'] : [])], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let onReady: (() => void) | undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('ready\n')) onReady?.();
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    ready,
    stop: async () => {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await exited;
      clearTimeout(timer);
      if (code !== 0) throw new Error(`human-subshell.py failed (${String(code)}): ${stderr}`);
      return stdout;
    },
  };
}

/** An execute whose answer must be this caller's cell's: its value, its print, no error and nothing to report. */
async function ownCell(agent: TestServer, tag: string, code: string): Promise<void> {
  const result = await agent.call('execute', { code });
  const structured = result.structuredContent as Record<string, any>;
  expect(structured.error ?? null, `${tag}: ${JSON.stringify(structured).slice(0, 400)}`).toBeNull();
  expect(structured.result?.value, `${tag}: ${JSON.stringify(structured).slice(0, 600)}`).toBe(tag);
  expect(structured.stdout, tag).toBe(`${tag}\n`);
  expect(structured.displays ?? [], tag).toEqual([]);
  expect(structured, tag).not.toHaveProperty('runtime');
  expect(fullRuntime(result).epoch, tag).toBe(1);
}

describe('cells of other clients never answer the agent', () => {
  let kernelId: string;
  let agent: TestServer;

  beforeAll(async () => {
    kernelId = await startHumanKernel(jupyter);
    agent = await startKernelServer(jupyter, ['--kernel', kernelId]);
  }, 90_000);

  afterAll(async () => {
    await agent?.close();
  });

  it('cells on a subshell and on the main shell while agent cells run: each answer is its own cell', async () => {
    humanExecute(jupyter, kernelId, 'agent_ran = {}');
    const person = startPersonBusy(kernelId, true);
    await person.ready;
    try {
      for (let index = 0; index < 40; index += 1) {
        const tag = `agent-${index}`;
        // Short sleeps of different lengths, so the subshell's cells end at every point of the agent's.
        const sleep = (index % 5) * 0.03;
        await ownCell(agent, tag, `import time\nprint(${JSON.stringify(tag)})\ntime.sleep(${sleep})\nagent_ran[${JSON.stringify(tag)}] = agent_ran.get(${JSON.stringify(tag)}, 0) + 1\n${JSON.stringify(tag)}`);
      }
    } finally {
      const counts = await person.stop();
      // The person's cells ran meanwhile, on both shells.
      const [, subshell, main] = /subshell (\d+) main (\d+)/.exec(counts) ?? [];
      expect(Number(subshell)).toBeGreaterThan(10);
      expect(Number(main)).toBeGreaterThan(0);
    }
    expect(humanExecute(jupyter, kernelId, 'print(sorted(set(agent_ran.values())), len(agent_ran))')).toBe('ok\n[1] 40\n\n');
  }, 240_000);

  it('an agent cell that runs cells itself (run_cell) is answered by its own end', async () => {
    const result = await agent.structured('execute', {
      code: 'ip = get_ipython()\nip.run_cell("inner = 41")\nprint("outer")\ninner + 1',
    });
    expect(result.result?.value, JSON.stringify(result)).toBe(42);
    expect(result.stdout).toBe('outer\n');
  });
});

describe('several ipython-mcp on one kernel', () => {
  let kernelId: string;
  const agents: TestServer[] = [];

  beforeAll(async () => {
    kernelId = await startHumanKernel(jupyter);
    humanExecute(jupyter, kernelId, 'ran = {}\ndef mark(tag):\n    ran[tag] = ran.get(tag, 0) + 1\n    return tag');
    for (let index = 0; index < 3; index += 1) agents.push(await startKernelServer(jupyter, ['--kernel', kernelId]));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
  });

  async function agentTurns(agent: TestServer, name: string, calls: number): Promise<void> {
    for (let index = 0; index < calls; index += 1) {
      const tag = `${name}-${index}`;
      await ownCell(agent, tag, `print(${JSON.stringify(tag)})\nmark(${JSON.stringify(tag)})`);
      // call_function goes over the agent's comm, not as a cell: its answer is its own too.
      if (index % 10 === 0) expect((await agent.structured('call_function', { name: 'mark', arguments: { tag: `${tag}-f` } })).value).toBe(`${tag}-f`);
    }
  }

  async function personTurns(until: Promise<unknown>): Promise<number> {
    let done = false;
    void until.finally(() => (done = true));
    let cells = 0;
    while (!done) {
      expect(await startHumanExecute(jupyter, kernelId, `mark("person-${cells}")`)).toBe(`ok\n'person-${cells}'\n`);
      cells += 1;
    }
    return cells;
  }

  async function expectAllOnce(expected: number): Promise<void> {
    const counts = humanExecute(jupyter, kernelId, 'print(sorted(set(ran.values())), len(ran))');
    expect(counts).toBe(`ok\n[1] ${expected}\n\n`);
    for (const agent of agents) {
      const status = await agent.structured('runtime_status', {});
      expect(status.epoch).toBe(1);
      expect(status.last_interruption ?? null).toBeNull();
    }
  }

  it('three agents and the person, 50 calls each, interleaved: every answer the caller\'s own, each cell once', async () => {
    const turns = Promise.all(agents.map((agent, index) => agentTurns(agent, `a${index}`, 50)));
    const personCells = await personTurns(turns);
    await turns;
    expect(personCells).toBeGreaterThan(0);
    humanExecute(jupyter, kernelId, 'ran = {k: v for k, v in ran.items() if not k.startswith("person-")}');
    await expectAllOnce(3 * 50 + 3 * 5);
  }, 600_000);

  it('the same while one agent runs a 5 s cell: nobody is interrupted, nobody answered by another', async () => {
    humanExecute(jupyter, kernelId, 'ran.clear()');
    const [slow, ...others] = agents as [TestServer, TestServer, TestServer];
    const long = slow.structured('execute', { code: 'import time\ntime.sleep(5)\nmark("slow")' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await Promise.all(others.map((agent, index) => agentTurns(agent, `b${index}`, 10)));
    const done = await long;
    expect(done.error ?? null).toBeNull();
    expect(done.result.value).toBe('slow');
    expect(done).not.toHaveProperty('runtime');
    await expectAllOnce(1 + 2 * 10 + 2);
  }, 300_000);

  it('an agent that leaves closes only its own comm: the others go on in the same epoch', async () => {
    const leaving = agents.pop() as TestServer;
    await leaving.close();
    for (const [index, agent] of agents.entries()) await ownCell(agent, `after-${index}`, `print("after-${index}")\n"after-${index}"`);
  }, 120_000);
});

describe("the person's kernel is safe from the agent", () => {
  it.each([
    ['exit()', 'exit()'],
    ['quit()', 'quit()'],
    ['sys.exit(3)', 'import sys\nsys.exit(3)'],
    ['raise SystemExit', 'raise SystemExit'],
  ])('%s in an agent cell is an error; the kernel keeps the person\'s names after the agent leaves', async (_name, code) => {
    const kernelId = await startHumanKernel(jupyter);
    humanExecute(jupyter, kernelId, 'mine = "still here"');
    const agent = await startKernelServer(jupyter, ['--kernel', kernelId]);
    try {
      const result = await agent.structured('execute', { code });
      expect(result.error?.type).toBe('SystemExit');
      expect(result).not.toHaveProperty('runtime');
      expect((await agent.structured('execute', { code: 'mine' })).result.value).toBe('still here');
      humanExecute(jupyter, kernelId, 'def leave():\n    exit()');
      const called = await agent.call('call_function', { name: 'leave', arguments: {} });
      expect(called.isError).toBe(true);
      expect((await agent.structured('execute', { code: 'mine' })).result.value).toBe('still here');
    } finally {
      await agent.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(humanExecute(jupyter, kernelId, 'print(mine)')).toBe('ok\nstill here\n\n');
    await jupyter.rest('DELETE', `api/kernels/${kernelId}`);
  }, 120_000);
});

const MiB = 1024 * 1024;

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((each) => each.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

describe('floods and big requests on a kernel ipython-mcp started', () => {
  let agent: TestServer;
  let kernelPid: number;
  let kernelId: string;

  beforeAll(async () => {
    agent = await startKernelServer(jupyter, ['--kernel-name', 'python3'], { IPYTHON_MCP_OUTPUT_SPILL_MB: '8', IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '300' });
    kernelPid = (await agent.structured('execute', { code: 'import os\nos.getpid()' })).result.value as number;
    kernelId = (await agent.structured('runtime_status', {})).backend.kernel_id as string;
  }, 90_000);

  afterAll(async () => {
    await agent?.close();
  });

  it('5 MB of code is refused at once with message_too_large, and nothing reaches the kernel', async () => {
    const count = (await agent.structured('execute', { code: 'len(In)' })).result.value as number;
    const started = Date.now();
    const refused = await agent.call('execute', { code: `x = "${'y'.repeat(5 * 1000 * 1000)}"` });
    expect((refused.structuredContent as any).error.code).toBe('message_too_large');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await agent.structured('execute', { code: 'len(In)' })).result.value).toBe(count + 1);
    expect((await agent.structured('runtime_status', {})).epoch).toBe(1);
  });

  it('1 GiB printed: exact counts, the kernel grows by at most 64 MiB, the person receives a bounded stream', async () => {
    await agent.structured('execute', { code: '0' });
    const watch = watchKernel(jupyter, kernelId, 'flood end', 240);
    await watch.listening;
    const before = rssBytes(kernelPid);
    let peak = before;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssBytes(kernelPid));
      } catch {
        // read again on the next tick
      }
    }, 25);
    const lines = 1024;
    const result = await agent.call('execute', { code: `for _ in range(${lines}):\n    print('x' * (${MiB} - 1))\nprint("flood end")` });
    clearInterval(sampler);
    const out = result.structuredContent as Record<string, any>;
    const total = lines * MiB + 'flood end\n'.length;
    expect(out.error ?? null).toBeNull();
    expect(out.stdout.length + out.stdout_omitted_chars).toBe(total);
    expect(out.stdout.endsWith('flood end\n')).toBe(true);
    expect(statSync(out.stdout_spill as string).size).toBeLessThanOrEqual(8 * MiB);
    const growth = (peak - before) / MiB;
    const seen = await watch.seen;
    const received = seen.filter((each) => each.type === 'stream').reduce((sum, each) => sum + (each.text ?? '').length, 0);
    console.log(`[measure] 1 GiB printed on a kernel: kernel RSS growth ${growth.toFixed(1)} MiB; the person's client received ${received} characters`);
    expect(growth).toBeLessThanOrEqual(64);
    expect(received).toBeLessThan(16 * 1024);
  }, 300_000);

  it('256 MiB printed plus os.write(2, ...): an ordinary answer with exact counts', async () => {
    const lines = 256;
    const result = await agent.call('execute', {
      code: `import os\nfor _ in range(${lines}):\n    print('x' * (${MiB} - 1))\nos.write(2, b"fd two\\n")\n"after"`,
    });
    const out = result.structuredContent as Record<string, any>;
    expect(out.error ?? null).toBeNull();
    expect(out.result.value).toBe('after');
    expect(out.stdout.length + out.stdout_omitted_chars).toBe(lines * MiB);
    expect((await agent.structured('execute', { code: '"still fine"' })).result.value).toBe('still fine');
  }, 300_000);

  it('fd-level output (os.write, a subprocess, C printf) is in the result, as on the local worker', async () => {
    const out = await agent.structured('execute', {
      code: [
        'import os, subprocess, sys, ctypes',
        'os.write(1, b"fd one\\n")',
        'os.write(2, b"fd two\\n")',
        'subprocess.run([sys.executable, "-c", "print(\'from a child\')"])',
        'ctypes.CDLL(None).printf(b"from C\\n")',
        '"end"',
      ].join('\n'),
    });
    expect(out.result.value).toBe('end');
    expect(out.stdout).toBe('fd one\nfrom a child\nfrom C\n');
    expect(out.stderr).toBe('fd two\n');
  });

  it('closing fd 1 and fd 2: later fd-level, Python and subprocess output is still captured, as on the local worker', async () => {
    const closing = await agent.structured('execute', { code: 'import os\nos.close(1)\nos.close(2)\nprint("python-level after close")' });
    expect(closing.stdout, JSON.stringify(closing)).toBe('python-level after close\n');
    const later = await agent.structured('execute', {
      code: [
        'import os, subprocess, sys',
        'os.write(1, b"fd one\\n")',
        'os.write(2, b"fd two\\n")',
        'print("python out")',
        'print("python err", file=sys.stderr)',
        'subprocess.run([sys.executable, "-c", "import sys; print(\'child out\'); print(\'child err\', file=sys.stderr)"])',
        '7',
      ].join('\n'),
    });
    expect(later.result.value).toBe(7);
    for (const line of ['fd one\n', 'python out\n', 'child out\n']) expect(later.stdout).toContain(line);
    for (const line of ['fd two\n', 'python err\n', 'child err\n']) expect(later.stderr).toContain(line);
  });
});
