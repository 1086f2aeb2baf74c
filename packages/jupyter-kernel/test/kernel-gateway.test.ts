// @ipython-mcp/jupyter-kernel against a real Jupyter Kernel Gateway (3.x): kernels by id or kernelspec, a
// human-side client, interrupt, and the errors that apply to a server without sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JupyterKernelError, openJupyterKernel } from '../src/index.js';
import type { JupyterKernel, JupyterKernelTarget } from '../src/index.js';
import { humanExecute, startJupyter } from './jupyter-servers.js';
import type { RunningJupyter } from './jupyter-servers.js';

let gateway: RunningJupyter;

beforeAll(async () => {
  gateway = await startJupyter('gateway');
});

afterAll(async () => {
  const kernels = gateway.descendants();
  await gateway.stop();
  for (const pid of kernels) expect(() => process.kill(pid, 0)).toThrow();
});

function open(target: JupyterKernelTarget, token = gateway.token): Promise<JupyterKernel> {
  return openJupyterKernel({ server: { url: gateway.url, token, requestTimeoutMs: 5_000 }, target });
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

describe('a kernel on a Kernel Gateway', () => {
  it('starts one by kernelspec, keeps state, interrupts, and shuts it down on close', async () => {
    const kernel = await open({ kernelName: 'python3' });
    await kernel.execute('x = 1');
    expect(plain(await kernel.execute('x + 1'))).toEqual(['2']);
    const sleeping = kernel.execute('import time; time.sleep(1e6)');
    await new Promise((resolve) => setTimeout(resolve, 700));
    await kernel.interrupt();
    expect((await sleeping).error?.ename).toBe('KeyboardInterrupt');
    expect(plain(await kernel.execute('x'))).toEqual(['1']);
    await kernel.close();
    // A gateway forbids listing kernels by default; asking for this one says whether it is gone.
    expect((await gateway.rest('GET', `api/kernels/${kernel.kernelId}`)).status).toBe(404);
  });

  it('attaches by id to a kernel a human-side client filled', async () => {
    const started = await gateway.rest('POST', 'api/kernels', { name: 'python3' });
    expect(started.status).toBe(201);
    const kernelId = (started.body as { id: string }).id;
    humanExecute(gateway, kernelId, 'import pandas as pd\ndf = pd.DataFrame({"a": [1, 2, 3]})');
    const kernel = await open({ kernelId });
    try {
      expect(plain(await kernel.execute('int(df["a"].sum())'))).toEqual(['6']);
    } finally {
      await kernel.close();
    }
    expect((await gateway.rest('GET', `api/kernels/${kernelId}`)).status).toBe(200);
    await gateway.rest('DELETE', `api/kernels/${kernelId}`);
  });
});

describe('errors on a Kernel Gateway', () => {
  it('a wrong token is jupyter_unauthorized', async () => {
    expect((await rejection(open({ kernelName: 'python3' }, 'wrong'))).code).toBe('jupyter_unauthorized');
  });

  it('an unknown kernel id is jupyter_kernel_not_found', async () => {
    expect((await rejection(open({ kernelId: '00000000-0000-4000-8000-000000000000' }))).code).toBe('jupyter_kernel_not_found');
  });

  it('an unknown kernelspec is jupyter_unknown_kernelspec', async () => {
    expect((await rejection(open({ kernelName: 'no-such-kernel' }))).code).toBe('jupyter_unknown_kernelspec');
  });

  it('a notebook path is jupyter_sessions_unsupported: the gateway has no sessions', async () => {
    expect((await rejection(open({ notebookPath: 'analysis.ipynb' }))).code).toBe('jupyter_sessions_unsupported');
  });
});
