// @ipython-mcp/jupyter-kernel against a real `jupyter server` (2.x): the three ways to name a kernel, a human-side
// client in the same namespace, interrupt, and one typed error per failure.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JupyterKernelError, openJupyterKernel } from '../src/index.js';
import type { JupyterKernel, JupyterKernelTarget } from '../src/index.js';
import { freePort, humanExecute, startJupyter } from './jupyter-servers.js';
import type { RunningJupyter } from './jupyter-servers.js';

let server: RunningJupyter;

beforeAll(async () => {
  server = await startJupyter('server');
});

afterAll(async () => {
  const kernels = server.descendants();
  await server.stop();
  for (const pid of kernels) expect(() => process.kill(pid, 0)).toThrow();
});

function open(target: JupyterKernelTarget, token = server.token, url = server.url): Promise<JupyterKernel> {
  return openJupyterKernel({ server: { url, token, requestTimeoutMs: 5_000 }, target });
}

async function rejection(promise: Promise<unknown>): Promise<JupyterKernelError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(JupyterKernelError);
  return error as JupyterKernelError;
}

function plain(result: { outputs: readonly { type: string; data?: Readonly<Record<string, unknown>> }[] }): string[] {
  return result.outputs.filter((output) => output.type === 'execute_result').map((output) => String(output.data?.['text/plain']));
}

async function startHumanKernel(): Promise<string> {
  const started = await server.rest('POST', 'api/kernels', { name: 'python3' });
  expect(started.status).toBe(201);
  return (started.body as { id: string }).id;
}

describe('a kernel it starts (kernelName)', () => {
  it('keeps state across cells, counts them, and is shut down on close', async () => {
    const kernel = await open({ kernelName: 'python3' });
    expect(kernel.owned).toBe(true);
    const first = await kernel.execute('x = 1');
    expect(first.status).toBe('ok');
    const second = await kernel.execute('x + 1');
    expect(plain(second)).toEqual(['2']);
    expect(second.executionCount).toBe((first.executionCount ?? 0) + 1);
    const printed = await kernel.execute('print("hello")');
    expect(printed.outputs).toEqual([{ type: 'stream', name: 'stdout', text: 'hello\n' }]);
    const failed = await kernel.execute('1/0');
    expect(failed.status).toBe('error');
    expect(failed.error?.ename).toBe('ZeroDivisionError');
    await kernel.close();
    await kernel.close();
    const listed = await server.rest('GET', 'api/kernels');
    expect((listed.body as { id: string }[]).map((model) => model.id)).not.toContain(kernel.kernelId);
    await expect(kernel.execute('x')).rejects.toMatchObject({ code: 'jupyter_closed' });
  });

  it('interrupts a running cell through the server and keeps the namespace', async () => {
    const kernel = await open({ kernelName: 'python3' });
    try {
      await kernel.execute('kept = 41');
      const sleeping = kernel.execute('import time; time.sleep(1e6)');
      await new Promise((resolve) => setTimeout(resolve, 700));
      await kernel.interrupt();
      const interrupted = await sleeping;
      expect(interrupted.status).toBe('error');
      expect(interrupted.error?.ename).toBe('KeyboardInterrupt');
      expect(plain(await kernel.execute('kept + 1'))).toEqual(['42']);
    } finally {
      await kernel.close();
    }
  });
});

describe('a kernel the human has', () => {
  it('reads what a human-side client set (kernelId) and leaves the kernel running on close', async () => {
    const kernelId = await startHumanKernel();
    expect(humanExecute(server, kernelId, 'import pandas as pd\ndf = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})')).toMatch(/^ok/);
    const kernel = await open({ kernelId });
    expect(kernel.owned).toBe(false);
    expect(plain(await kernel.execute('df.shape'))).toEqual(['(3, 2)']);
    await kernel.execute('def helper():\n    return int(df["b"].sum())');
    await kernel.close();
    // The human's next cell sees what the agent left.
    expect(humanExecute(server, kernelId, 'helper()')).toBe('ok\n15\n');
    // The agent's cells are the kernel's own: they are in its input history, as the human's are.
    expect(humanExecute(server, kernelId, 'print(_ih[-3])')).toContain('def helper():');
    expect((await server.rest('GET', `api/kernels/${kernelId}`)).status).toBe(200);
    await server.rest('DELETE', `api/kernels/${kernelId}`);
  });

  it('finds the kernel of an open notebook session (notebookPath)', async () => {
    writeFileSync(join(server.rootDir, 'analysis.ipynb'), JSON.stringify({ cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    const session = await server.rest('POST', 'api/sessions', { path: 'analysis.ipynb', type: 'notebook', name: '', kernel: { name: 'python3' } });
    expect(session.status).toBe(201);
    const kernelId = (session.body as { kernel: { id: string } }).kernel.id;
    humanExecute(server, kernelId, 'rows = 7');
    const kernel = await open({ notebookPath: '/analysis.ipynb' });
    try {
      expect(kernel.kernelId).toBe(kernelId);
      expect(plain(await kernel.execute('rows * 6'))).toEqual(['42']);
    } finally {
      await kernel.close();
      await server.rest('DELETE', `api/sessions/${(session.body as { id: string }).id}`);
    }
  });
});

describe('one typed error per failure, never a hang', () => {
  it('a wrong token is jupyter_unauthorized, and the token is not in the message', async () => {
    const error = await rejection(open({ kernelName: 'python3' }, 'not-the-token'));
    expect(error.code).toBe('jupyter_unauthorized');
    expect([403, 401]).toContain(error.status);
    expect(error.message).not.toContain(server.token);
    expect(error.message).not.toContain('not-the-token');
  });

  it('nothing listening is jupyter_unreachable', async () => {
    const error = await rejection(open({ kernelName: 'python3' }, server.token, `http://127.0.0.1:${await freePort()}/`));
    expect(error.code).toBe('jupyter_unreachable');
  });

  it('an unknown kernel id is jupyter_kernel_not_found', async () => {
    const error = await rejection(open({ kernelId: '00000000-0000-4000-8000-000000000000' }));
    expect(error.code).toBe('jupyter_kernel_not_found');
  });

  it('a notebook with no open session is jupyter_no_session', async () => {
    const error = await rejection(open({ notebookPath: 'nobody-has-this.ipynb' }));
    expect(error.code).toBe('jupyter_no_session');
  });

  it('an unknown kernelspec is jupyter_unknown_kernelspec and names the ones there are', async () => {
    const error = await rejection(open({ kernelName: 'no-such-kernel' }));
    expect(error.code).toBe('jupyter_unknown_kernelspec');
    expect(error.message).toContain('python3');
  });

  it('a token in the URL is refused before anything is sent', async () => {
    const error = await rejection(open({ kernelName: 'python3' }, server.token, `${server.url}?token=${server.token}`));
    expect(error.code).toBe('jupyter_invalid_options');
    expect(error.message).not.toContain(server.token);
  });

  it('a kernel shut down by someone else is jupyter_kernel_died, for the cell in flight and every later one', async () => {
    const kernelId = await startHumanKernel();
    const kernel = await open({ kernelId });
    try {
      // Its failure is taken at once: on a loaded machine it can come before the DELETE's answer.
      const sleeping = rejection(kernel.execute('import time; time.sleep(1e6)'));
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = Date.now();
      expect((await server.rest('DELETE', `api/kernels/${kernelId}`)).status).toBe(204);
      expect((await sleeping).code).toBe('jupyter_kernel_died');
      expect((await rejection(kernel.execute('1'))).code).toBe('jupyter_kernel_died');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await kernel.close();
    }
  });

  it('a kernel that dies mid-cell is jupyter_kernel_died for that cell', async () => {
    const kernel = await open({ kernelName: 'python3' });
    try {
      const error = await rejection(kernel.execute('import os; os._exit(1)'));
      expect(error.code).toBe('jupyter_kernel_died');
    } finally {
      await kernel.close();
    }
  });
});

describe('a comm to kernel-side code', () => {
  it('brings code in with a silent cell, then talks to it over a comm the human never sees as a cell', async () => {
    const kernel = await open({ kernelName: 'python3' });
    try {
      const before = await kernel.execute('1');
      // Kernel-side code, registered without a trace in In/Out or the execution count.
      const bootstrap = [
        'def _ipython_mcp_echo_target(comm, open_message):',
        '    @comm.on_msg',
        '    def _answer(message):',
        '        data = message["content"]["data"]',
        '        comm.send({"echo": data, "visible": sorted(k for k in globals() if not k.startswith("_"))[:5]})',
        'try:',
        '    from comm import get_comm_manager',
        '    get_comm_manager().register_target("ipython_mcp_echo", _ipython_mcp_echo_target)',
        'except ImportError:',
        '    get_ipython().kernel.comm_manager.register_target("ipython_mcp_echo", _ipython_mcp_echo_target)',
      ].join('\n');
      const registered = await kernel.execute(bootstrap, { silent: true, storeHistory: false });
      expect(registered.status).toBe('ok');
      const comm = await kernel.openComm('ipython_mcp_echo', { hello: true });
      const answer = new Promise<Readonly<Record<string, unknown>>>((resolve) => comm.onMessage(resolve));
      comm.send({ ask: 42 });
      expect(await answer).toMatchObject({ echo: { ask: 42 } });
      const after = await kernel.execute('2');
      expect(after.executionCount).toBe((before.executionCount ?? 0) + 1);
      let closed = false;
      comm.onClose(() => {
        closed = true;
      });
      await kernel.close();
      expect(closed).toBe(true);
      expect(comm.closed).toBe(true);
    } finally {
      await kernel.close();
    }
  });
});
