// ipython-mcp on a Jupyter kernel, end to end: a real `jupyter server` with a token, the built binary over stdio
// with a real SDK client as the agent, and jupyter_client on the same kernel as the human.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { connectHttp, startHttpServer } from './http-harness.js';
import {
  freePort,
  humanExecute,
  kernelIds,
  runCli,
  startHumanExecute,
  humanCellMarkers,
  startHumanKernel,
  startJupyter,
  startKernelServer,
  watchKernel,
  type RunningJupyter,
} from './jupyter-harness.js';

let jupyter: RunningJupyter;
const { startedMarker, humanCellRunning, remove: removeMarkers } = humanCellMarkers();

beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 90_000);

afterAll(async () => {
  await jupyter?.stop();
  removeMarkers();
});

describe('the agent and a human in one kernel (--kernel)', () => {
  let kernelId: string;
  let agent: TestServer;

  beforeAll(async () => {
    kernelId = await startHumanKernel(jupyter);
    agent = await startKernelServer(jupyter, ['--kernel', kernelId]);
  }, 90_000);

  afterAll(async () => {
    await agent?.close();
  });

  it("the human sets df; the agent's execute reads it", async () => {
    expect(humanExecute(jupyter, kernelId, 'import pandas as pd\ndf = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})')).toMatch(/^ok/);
    const read = await agent.structured('execute', { code: 'int(df["b"].sum())' });
    expect(read.result.value).toBe(15);
  });

  it('the agent defines helper(); the human calls it', async () => {
    await agent.structured('execute', { code: 'def helper(scale=2):\n    return int(df["a"].sum()) * scale' });
    expect(humanExecute(jupyter, kernelId, 'helper()')).toBe('ok\n12\n');
  });

  it("the human sees the agent's cell on IOPub and in In", async () => {
    const watch = watchKernel(jupyter, kernelId, 'agent was here', 30);
    await watch.listening;
    const code = 'print("agent was here")';
    const ran = await agent.structured('execute', { code });
    expect(ran.stdout).toBe('agent was here\n');
    const seen = await watch.seen;
    expect(seen).toContainEqual(expect.objectContaining({ type: 'execute_input', code }));
    expect(seen).toContainEqual({ type: 'stream', text: 'agent was here\n' });
    expect(humanExecute(jupyter, kernelId, 'print(any("agent was here" in cell for cell in In))')).toBe('ok\nTrue\n\n');
  });

  it("the agent's operations run on the kernel's main thread, in line with its cells (no subshell)", async () => {
    humanExecute(jupyter, kernelId, 'import threading\ndef on_main():\n    return threading.current_thread() is threading.main_thread()');
    expect((await agent.structured('call_function', { name: 'on_main' })).value).toBe(true);
    expect((await agent.structured('execute', { code: 'on_main()' })).result.value).toBe(true);
  });

  it("the agent's list, search and inspect never run a property that hangs", async () => {
    humanExecute(jupyter, kernelId, 'class Trap:\n    @property\n    def boom(self):\n        import time\n        time.sleep(1e6)\ntrap = Trap()');
    const started = Date.now();
    const listed = await agent.call('list', {});
    expect(listed.isError).toBeFalsy();
    expect(JSON.stringify(listed.structuredContent)).toContain('helper');
    const found = await agent.structured('search', { query: 'trap' });
    expect(JSON.stringify(found)).toContain('trap');
    const inspected = await agent.call('inspect', { name: 'trap' });
    expect(inspected.isError).toBeFalsy();
    expect(Date.now() - started).toBeLessThan(20_000);
    // The kernel is free: nothing was left running the property.
    expect(humanExecute(jupyter, kernelId, 'print("free")')).toBe('ok\nfree\n\n');
  });

  it("an agent call made while the human's 5 s cell runs waits, then runs", async () => {
    const human = startHumanExecute(jupyter, kernelId, `${startedMarker('waits')}\nimport time\ntime.sleep(5)\nhuman_cell_done = True`);
    await humanCellRunning('waits');
    const started = Date.now();
    const after = await agent.structured('execute', { code: 'human_cell_done' });
    expect(after.result.value).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(2_500);
    expect(await human).toMatch(/^ok/);
  });

  it('a deadline that passes while the human cell runs fails the call and leaves the human cell alone', async () => {
    const human = startHumanExecute(jupyter, kernelId, `${startedMarker('deadline')}\nimport time\ntime.sleep(5)\nprint("human finished")`);
    await humanCellRunning('deadline');
    const failed = await agent.call('execute', { code: 'agent_never_ran = True', timeout_seconds: 1 });
    expect((failed.structuredContent as any).error.code).toBe('operation_timeout');
    expect(await human).toContain('human finished');
    expect((await agent.structured('execute', { code: '"agent_never_ran" in globals()' })).result.value).toBe(false);
  });

  it('a 2 s deadline on sleep(1e6) interrupts it and keeps df', async () => {
    const started = Date.now();
    const slow = await agent.call('execute', { code: 'import time\ntime.sleep(1e6)', timeout_seconds: 2 });
    expect((slow.structuredContent as any).error.code).toBe('operation_timeout');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await agent.structured('execute', { code: 'df.shape' })).result.value).toEqual([3, 2]);
    expect(humanExecute(jupyter, kernelId, 'print(df.shape)')).toBe('ok\n(3, 2)\n\n');
  });

  it('huge output: head and tail in the result, all of it in a spill file on this machine', async () => {
    const result = await agent.call('execute', { code: "print('x' * 10**6); print('END-OF-LOG')" });
    const out = result.structuredContent as Record<string, any>;
    expect(out.stdout.startsWith('x'.repeat(1000))).toBe(true);
    expect(out.stdout.endsWith('x\nEND-OF-LOG\n')).toBe(true);
    expect(out.stdout.length + out.stdout_omitted_chars).toBe(10 ** 6 + 1 + 'END-OF-LOG\n'.length);
    const path = out.stdout_spill as string;
    expect(readFileSync(path, 'utf8')).toBe(`${'x'.repeat(10 ** 6)}\nEND-OF-LOG\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('streams output to a client that asked, as progress notifications, with the same result', async () => {
    const received: Array<{ message?: string | undefined }> = [];
    const code = 'import time\nfor i in range(10):\n    print(f"tick {i}", flush=True)\n    time.sleep(0.1)\ntime.sleep(0.5)\n"finished"';
    const result = await agent.client.callTool({ name: 'execute', arguments: { code } }, undefined, {
      onprogress: (progress) => received.push(progress),
      timeout: 60_000,
    });
    const structured = result.structuredContent as any;
    expect(structured.result.value).toBe('finished');
    expect(structured.stdout).toBe(Array.from({ length: 10 }, (_, i) => `tick ${i}\n`).join(''));
    expect(received.length).toBeGreaterThanOrEqual(2);
    const lines = received.flatMap((item) => (item.message ?? '').split('\n')).map((line) => line.replace('[stdout] ', ''));
    expect(lines).toEqual(Array.from({ length: 10 }, (_, i) => `tick ${i}`));
  });

  it('as docs/jupyter.md says: fd-level output is in the result, as on the local worker; memory guard off', async () => {
    const ran = await agent.structured('execute', { code: 'import os, subprocess\nos.write(1, b"fd-line\\n")\nsubprocess.run(["echo", "sub-line"])\nprint("py-line")' });
    // An fd write and a Python write reach the result by two paths (a pipe drained by a thread, the stream itself),
    // so, as on the local worker, each line is there but their order is not promised.
    expect(ran.stdout.split('\n').sort()).toEqual(['', 'fd-line', 'py-line', 'sub-line']);
    const status = await agent.structured('runtime_status', {});
    expect(status.memory_limit_mb).toBeNull();
  });

  it('runtime_status names the backend: jupyter, the server without the token, the kernel and the policy', async () => {
    await agent.structured('execute', { code: '1' });
    const status = await agent.structured('runtime_status', {});
    expect(status.backend).toMatchObject({ kind: 'jupyter', kernel_id: kernelId, policy: 'attached' });
    expect(status.state).toBe('ready');
    expect(JSON.stringify(status)).not.toContain(jupyter.token);
    expect(agent.stderr()).not.toContain(jupyter.token);
    // The Jupyter client's own chatter went to stderr: stdout carried protocol frames only.
    expect(agent.transportErrors).toEqual([]);
  });

  it('leaves the human kernel running when the agent goes', async () => {
    await agent.close();
    expect(await kernelIds(jupyter)).toContain(kernelId);
  });
});

describe('a kernel ipython-mcp starts (--kernel-name)', () => {
  it('starts a kernel of that kernelspec and shuts it down when ipython-mcp exits', async () => {
    const before = await kernelIds(jupyter);
    const agent = await startKernelServer(jupyter, ['--kernel-name', 'python3']);
    try {
      expect((await agent.structured('execute', { code: '6 * 7' })).result.value).toBe(42);
      const status = await agent.structured('runtime_status', {});
      expect(status.backend).toMatchObject({ kind: 'jupyter', kernel_name: 'python3', policy: 'owned' });
      expect(before).not.toContain(status.backend.kernel_id);
      expect(await kernelIds(jupyter)).toContain(status.backend.kernel_id);
    } finally {
      await agent.close();
    }
    // Every kernel it started (the active one and its warm standby) is gone.
    await expect.poll(async () => (await kernelIds(jupyter)).filter((id) => !before.includes(id)), { timeout: 15_000 }).toEqual([]);
  });
});

describe('bad settings: one clear error each, and no hang', () => {
  it.each([
    [['--kernel', 'abc'], '--kernel needs --jupyter URL'],
    [['--jupyter', 'http://127.0.0.1:1/', '--kernel', 'a', '--kernel-name', 'b'], '--kernel and --kernel-name cannot be combined'],
    [['--jupyter', 'http://127.0.0.1:1/?token=secret', '--kernel', 'a'], 'must not carry a token'],
    [['--jupyter', 'ftp://127.0.0.1/', '--kernel', 'a'], 'must be an http:// or https:// URL'],
    [['--jupyter', 'http://127.0.0.1:1/', '--kernel', 'a', '--sandbox'], '--sandbox cannot be combined with --jupyter'],
    [['setup', '--jupyter', 'http://127.0.0.1:1/', '--kernel', 'a'], '--jupyter and its kernel flags only apply to serving, code-mode and doctor'],
  ])('%j exits 2 naming the flag', (args, message) => {
    const done = runCli(args);
    expect(done.status).toBe(2);
    expect(done.stderr).toContain(message);
    expect(done.stdout).toBe('');
    expect(done.stderr).not.toContain('secret');
  });

  it('--state is refused: a kernel has no snapshot', () => {
    const done = runCli(['--jupyter', 'http://127.0.0.1:1/', '--kernel', 'a'], { IPYTHON_MCP_STATE_FILE: '/tmp/never.dill' });
    expect(done.status).toBe(2);
    expect(done.stderr).toContain('--state');
  });

  async function firstCallError(kernelFlags: ['--kernel', string] | ['--kernel-name', string], env: Record<string, string>, url = jupyter.url): Promise<{ message: string; ms: number; stderr: string }> {
    const { startServer } = await import('./harness.js');
    const agent = await startServer({ JUPYTER_TOKEN: jupyter.token, ...env }, ['--jupyter', url, ...kernelFlags]);
    try {
      const started = Date.now();
      const result = await agent.call('execute', { code: '1' });
      const structured = result.structuredContent as any;
      return { message: `${structured?.error?.code}: ${structured?.error?.message}`, ms: Date.now() - started, stderr: agent.stderr() };
    } finally {
      await agent.close();
    }
  }

  it('a wrong token', async () => {
    const { message, ms, stderr } = await firstCallError(['--kernel-name', 'python3'], { JUPYTER_TOKEN: 'not-the-token' });
    expect(message).toMatch(/^runtime_unavailable: .*refused the token/);
    expect(message).not.toContain('not-the-token');
    expect(stderr).not.toContain('not-the-token');
    expect(ms).toBeLessThan(20_000);
  });

  it('a wrong URL', async () => {
    const { message, ms } = await firstCallError(['--kernel-name', 'python3'], {}, `http://127.0.0.1:${await freePort()}/`);
    expect(message).toMatch(/^runtime_unavailable: .*No Jupyter server answered/);
    expect(ms).toBeLessThan(20_000);
  });

  it('an unknown kernel id', async () => {
    const { message, ms } = await firstCallError(['--kernel', '00000000-0000-4000-8000-000000000000'], {});
    expect(message).toMatch(/^runtime_unavailable: .*No running kernel has this id/);
    expect(ms).toBeLessThan(20_000);
  });

  it('doctor: reachable, token accepted, kernel found, kernel is IPython; and the failing line for a wrong token', async () => {
    const kernelId = await startHumanKernel(jupyter);
    const good = runCli(['doctor', '--jupyter', jupyter.url, '--kernel', kernelId], { JUPYTER_TOKEN: jupyter.token });
    expect(good.status).toBe(0);
    expect(good.stdout).toContain('ok   jupyter server: reachable');
    expect(good.stdout).toContain('ok   jupyter token: accepted');
    expect(good.stdout).toContain(`ok   kernel: ${kernelId} is running`);
    expect(good.stdout).toContain('ok   kernel: python3 is an IPython kernel');
    const bad = runCli(['doctor', '--jupyter', jupyter.url, '--kernel', kernelId], { JUPYTER_TOKEN: 'nope-nope' });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('FAIL jupyter token: refused');
    expect(bad.stdout).not.toContain('nope-nope');
    const missing = runCli(['doctor', '--jupyter', jupyter.url, '--kernel', 'no-such-kernel'], { JUPYTER_TOKEN: jupyter.token });
    expect(missing.status).toBe(1);
    expect(missing.stdout).toContain('FAIL kernel: no running kernel has id no-such-kernel');
  });
});

describe('over --http', () => {
  it('--kernel-name: each named namespace gets a kernel of its own, every one shut down on exit', async () => {
    const before = await kernelIds(jupyter);
    const http = await startHttpServer({ JUPYTER_TOKEN: jupyter.token }, ['--jupyter', jupyter.url, '--kernel-name', 'python3']);
    try {
      const main = await connectHttp(http.url, http.token);
      const other = await connectHttp(`${http.url}/other`, http.token);
      await main.structured('execute', { code: 'who = "default"' });
      await other.structured('execute', { code: 'who = "other"' });
      expect((await main.structured('execute', { code: 'who' })).result.value).toBe('default');
      const mainStatus = await main.structured('runtime_status', {});
      const otherStatus = await other.structured('runtime_status', {});
      expect(mainStatus.backend.policy).toBe('owned');
      expect(mainStatus.backend.kernel_id).not.toBe(otherStatus.backend.kernel_id);
      await main.close();
      await other.close();
    } finally {
      expect(await http.stop()).toBe(0);
    }
    await expect.poll(async () => (await kernelIds(jupyter)).filter((id) => !before.includes(id)), { timeout: 15_000 }).toEqual([]);
    expect(http.stderr()).not.toContain(jupyter.token);
  });

  it('--kernel: the default namespace is that kernel; a named namespace gets a clear error', async () => {
    const kernelId = await startHumanKernel(jupyter);
    const http = await startHttpServer({ JUPYTER_TOKEN: jupyter.token }, ['--jupyter', jupyter.url, '--kernel', kernelId]);
    try {
      const main = await connectHttp(http.url, http.token);
      expect((await main.structured('runtime_status', {})).backend.kernel_id).toBe(kernelId);
      await expect(connectHttp(`${http.url}/other`, http.token)).rejects.toThrow(/namespace other cannot be served: --kernel .* names one kernel/);
      await main.close();
    } finally {
      await http.stop();
    }
    expect(await kernelIds(jupyter)).toContain(kernelId);
  });
});

describe('the kernel dying under a cell', () => {
  it('an owned kernel: worker_crashed, then a fresh kernel serves (the epoch advances), the dead one is gone', async () => {
    const agent = await startKernelServer(jupyter, ['--kernel-name', 'python3']);
    try {
      await agent.structured('execute', { code: 'before = 1' });
      const first = (await agent.structured('runtime_status', {})).backend.kernel_id as string;
      const crashed = await agent.call('execute', { code: 'import os\nos._exit(1)' });
      expect((crashed.structuredContent as any).error.code).toBe('worker_crashed');
      const after = await agent.structured('execute', { code: '"before" in globals()' });
      expect(after.result.value).toBe(false);
      const status = await agent.structured('runtime_status', {});
      expect(status.epoch).toBeGreaterThan(1);
      expect(status.backend.kernel_id).not.toBe(first);
      await expect.poll(async () => kernelIds(jupyter), { timeout: 15_000 }).not.toContain(first);
    } finally {
      await agent.close();
    }
  });

  it('an attached kernel: the server restarts it, ipython-mcp attaches again and says the namespace was reset', async () => {
    const kernelId = await startHumanKernel(jupyter);
    const agent = await startKernelServer(jupyter, ['--kernel', kernelId]);
    try {
      humanExecute(jupyter, kernelId, 'df = 1');
      const crashed = await agent.call('execute', { code: 'import os\nos._exit(1)' });
      expect((crashed.structuredContent as any).error.code).toBe('worker_crashed');
      const after = await agent.structured('execute', { code: '"df" in globals()' });
      expect(after.result.value).toBe(false);
      const status = await agent.structured('runtime_status', {});
      expect(status.backend.kernel_id).toBe(kernelId);
      expect(status.epoch).toBeGreaterThan(1);
    } finally {
      await agent.close();
    }
    expect(await kernelIds(jupyter)).toContain(kernelId);
  });
});

describe('a cell that swallows the interrupt, on an attached kernel', () => {
  it('is never restarted: the call times out, the runtime says the kernel is stuck, the kernel and its names live on', async () => {
    const kernelId = await startHumanKernel(jupyter);
    const agent = await startKernelServer(jupyter, ['--kernel', kernelId]);
    try {
      humanExecute(jupyter, kernelId, 'kept = "still here"');
      const swallow = [
        'import time',
        'end = time.time() + 15',
        'while time.time() < end:',
        '    try:',
        '        time.sleep(0.05)',
        '    except KeyboardInterrupt:',
        '        pass',
      ].join('\n');
      const stuck = await agent.call('execute', { code: swallow, timeout_seconds: 1 });
      expect((stuck.structuredContent as any).error.code).toBe('operation_timeout');
      const status = await agent.structured('runtime_status', {});
      expect(status.state).toBe('unavailable');
      expect(status.error).toContain('the kernel is stuck running a cell; ipython-mcp does not restart a kernel it did not start');
      expect(status.backend).toMatchObject({ kernel_id: kernelId, policy: 'attached', stuck: true });
      // Put off, not given up: runtime_busy with when to try again (jupyter-recovery.e2e has the kernel come back).
      const refused = await agent.call('execute', { code: '1' });
      expect((refused.structuredContent as any).error.code).toBe('runtime_busy');
      expect((refused.structuredContent as any).error.retry_after_ms).toBeGreaterThan(0);
    } finally {
      await agent.close();
    }
    // The human's kernel was not restarted: once the cell ends, their names are there.
    expect(await kernelIds(jupyter)).toContain(kernelId);
    expect(humanExecute(jupyter, kernelId, 'print(kept)')).toBe('ok\nstill here\n\n');
  });
});

describe('a JupyterLab notebook (--notebook)', () => {
  it("attaches to the kernel of the open notebook session and shares the human's names", async () => {
    writeFileSync(join(jupyter.rootDir, 'analysis.ipynb'), JSON.stringify({ cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    const session = await jupyter.rest('POST', 'api/sessions', { path: 'analysis.ipynb', type: 'notebook', name: '', kernel: { name: 'python3' } });
    expect(session.status).toBe(201);
    const kernelId = (session.body as { kernel: { id: string } }).kernel.id;
    humanExecute(jupyter, kernelId, 'rows = 7');
    const agent = await startKernelServer(jupyter, ['--notebook', 'analysis.ipynb']);
    try {
      expect((await agent.structured('execute', { code: 'rows * 6' })).result.value).toBe(42);
      expect((await agent.structured('runtime_status', {})).backend).toMatchObject({ kernel_id: kernelId, notebook: 'analysis.ipynb', policy: 'attached' });
    } finally {
      await agent.close();
    }
    expect(await kernelIds(jupyter)).toContain(kernelId);
  });

  it('a notebook with no open session: one clear error', async () => {
    const agent = await startKernelServer(jupyter, ['--notebook', 'nobody-has-this.ipynb']);
    try {
      const result = await agent.call('execute', { code: '1' });
      expect((result.structuredContent as any).error.code).toBe('runtime_unavailable');
      expect((result.structuredContent as any).error.message).toContain('No open notebook session has this path');
    } finally {
      await agent.close();
    }
  });
});
