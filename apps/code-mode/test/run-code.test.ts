import { jsonSchema, tool } from 'ai';
import { jupyterKernelBackend, type JupyterBackend } from '@ipython-mcp/jupyter-kernel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startJupyter, type RunningJupyter } from '../../../packages/jupyter-kernel/test/jupyter-servers.js';
import { IPythonKernel, ipythonCodeMode, type IPythonCodeMode, type IPythonCodeModeOptions, type IPythonKernelOptions, type RunCodeOutput } from '../src/index.js';
import { only, runScript, survivors, testPython } from './harness.js';

// Every check runs on the local worker and on a kernel of a real `jupyter server` (a kernel the backend starts:
// run_code is the kernel's own cell, its nested calls travel on the kernel's stdin channel).
const BACKENDS = ['local', 'jupyter'] as const;
let jupyter: RunningJupyter | undefined;
const backends: JupyterBackend[] = [];
let where: (typeof BACKENDS)[number] = 'local';

function kernelOptions(): IPythonKernelOptions {
  if (where === 'local' || jupyter === undefined) return { python: testPython() };
  const backend = jupyterKernelBackend({ server: { url: jupyter.url, token: jupyter.token }, target: { kernelName: 'python3' } });
  backends.push(backend);
  return { backend, warmStandby: false };
}

const opened: IPythonCodeMode[] = [];
const kernels: IPythonKernel[] = [];
const salesCalls: string[] = [];

const getSales = tool({
  description: 'Monthly sales totals for a region.',
  inputSchema: jsonSchema<{ region: string }>({
    type: 'object',
    properties: { region: { type: 'string', enum: ['north', 'south'] } },
    required: ['region'],
    additionalProperties: false,
  }),
  execute: ({ region }) => {
    salesCalls.push(region);
    return region === 'north' ? [{ month: 1, total: 100 }, { month: 2, total: 150 }] : [{ month: 1, total: 80 }];
  },
});

async function open(options: IPythonCodeModeOptions = {}): Promise<IPythonCodeMode> {
  const codeMode = await ipythonCodeMode({ tools: { get_sales: getSales }, kernelOptions: kernelOptions(), ...options });
  opened.push(codeMode);
  return codeMode;
}

function sharedKernel(): IPythonKernel {
  const kernel = new IPythonKernel(kernelOptions());
  kernels.push(kernel);
  return kernel;
}

afterEach(async () => {
  const pids = [...opened.flatMap((codeMode) => codeMode.codeMode.kernel?.workerPids() ?? []), ...kernels.flatMap((kernel) => kernel.workerPids())];
  await Promise.all(opened.splice(0).map((codeMode) => codeMode.close()));
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
  await Promise.all(backends.splice(0).map((backend) => backend.close()));
  expect(await survivors(pids)).toEqual([]);
  salesCalls.length = 0;
});

describe.each(BACKENDS)('run_code in an AI SDK generateText loop (%s)', (backend) => {
  beforeAll(async () => {
    where = backend;
    if (backend === 'jupyter') jupyter = await startJupyter('server');
  });
  afterAll(async () => {
    await jupyter?.stop();
    jupyter = undefined;
    where = 'local';
  });

  it('keeps state across calls, and nested calls run the real TypeScript tools', async () => {
    const codeMode = await open();
    expect(Object.keys(codeMode.tools)).toEqual(['run_code']);
    expect(codeMode.runCode.description).toContain("def get_sales(*, region: Literal['north', 'south']) -> Any:");
    const run = await runScript(codeMode.tools, [
      [{ code: "north = get_sales(region='north')\nlen(north)" }],
      [{ code: "sum(row['total'] for row in north) + get_sales(region='south')[0]['total']" }],
    ]);
    expect(only(run, 0)).toEqual({ type: 'json', value: 2 });
    expect(only(run, 1)).toEqual({ type: 'json', value: 330 });
    expect(salesCalls).toEqual(['north', 'south']);
    const output = run.result.steps[1]?.toolResults[0]?.output as RunCodeOutput;
    expect(output.metadata).toEqual({
      // An AI SDK tool without needsApproval runs as the AI SDK would run it: allowed by the consent policy.
      toolCalls: [{ toolCallId: 'call-2-0:1', toolName: 'get_sales', functionName: 'get_sales', input: { region: 'south' }, decision: 'allowed by policy' }],
      toolReturns: [{ toolCallId: 'call-2-0:1', toolName: 'get_sales', output: [{ month: 1, total: 80 }] }],
    });
  });

  it('past the description budget lists names by group, and find_tools gives the stub to call from', async () => {
    const codeMode = await open({
      descriptionBudget: 0,
      groups: [{ name: 'sales', status: 'ready' }],
      definitions: [{ name: 'get_targets', group: 'sales', description: 'Sales targets.', inputSchema: { type: 'object' }, execute: () => [120] }],
    });
    expect(codeMode.runCode.description).toContain('get_sales');
    expect(codeMode.runCode.description).toContain('- sales: ready\n  get_targets');
    expect(codeMode.runCode.description).not.toContain('def get_sales');
    const run = await runScript(codeMode.tools, [[{ code: 'print(find_tools(query="get_sales"))' }], [{ code: "get_sales(region='north')[1]['total']" }]]);
    expect(only(run, 0)).toEqual({ type: 'json', value: { output: expect.stringContaining("def get_sales(*, region: Literal['north', 'south']) -> Any:") } });
    expect(only(run, 1)).toEqual({ type: 'json', value: 150 });
  });

  it('refuses a bad description budget before any kernel starts', async () => {
    await expect(ipythonCodeMode({ tools: { get_sales: getSales }, descriptionBudget: -5 })).rejects.toThrow(/descriptionBudget/);
  });

  it('shares one kernel across runs and runs its cells one at a time', async () => {
    const kernel = sharedKernel();
    const first = await open({ kernel });
    await runScript(first.tools, [[{ code: 'shared = 41' }]]);
    await first.close();
    expect(kernel.running).toBe(true);
    const second = await open({ kernel });
    const code = 'import time\nstart = time.monotonic()\ntime.sleep(0.4)\n[start, time.monotonic()]';
    const run = await runScript(second.tools, [[{ code: 'shared + 1' }], [{ code }, { code }]]);
    expect(only(run, 0)).toEqual({ type: 'json', value: 42 });
    const spans = run.seen[1]!.map((seen) => seen.output.value as [number, number]).sort((a, b) => a[0] - b[0]);
    expect(spans).toHaveLength(2);
    expect(spans[1]![0]).toBeGreaterThanOrEqual(spans[0]![1]);
  });

  it('returns every shape of the return table', async () => {
    const codeMode = await open();
    const plot = "import matplotlib.pyplot as plt\nprint('plotted')\nplt.plot([1, 2, 3])\nplt.show()";
    const run = await runScript(codeMode.tools, [
      [{ code: '1 + 1' }],
      [{ code: 'x = 1' }],
      [{ code: "print('hi')" }],
      [{ code: "print('hi')\n{'a': [1, 2]}" }],
      [{ code: 'from fractions import Fraction\nFraction(1, 3)' }],
      [{ code: `${plot}\n7` }],
      [{ code: "from PIL import Image\nprint('made')\nImage.new('RGB', (4, 4), 'red')" }],
      [{ code: "Image.new('RGB', (2, 2))" }],
      [{ code: "import sys\nfrom IPython.display import display, Markdown\nprint('one')\nprint('two', file=sys.stderr)\ndisplay(Markdown('three'))\nprint('four')" }],
      [{ code: 'None' }],
    ]);
    expect(only(run, 0)).toEqual({ type: 'json', value: 2 });
    expect(only(run, 1)).toEqual({ type: 'json', value: {} });
    expect(only(run, 2)).toEqual({ type: 'json', value: { output: 'hi\n' } });
    expect(only(run, 3)).toEqual({ type: 'json', value: { output: 'hi\n', result: { a: [1, 2] } } });
    expect(only(run, 4)).toEqual({ type: 'json', value: 'Fraction(1, 3)' });
    const plotted = only(run, 5);
    expect(plotted.type).toBe('content');
    expect(shapeOf(plotted.value)).toEqual(['text:plotted\n', 'image/png', 'text:7']);
    expect(shapeOf(only(run, 6).value)).toEqual(['text:made\n', 'image/png']);
    expect(shapeOf(only(run, 7).value)).toEqual(['image/png']);
    expect(only(run, 8)).toEqual({ type: 'json', value: { output: 'one\ntwo\nthree\nfour\n' } });
    expect(only(run, 9)).toEqual({ type: 'json', value: {} });
  });

  it('caps printed output at 10 MiB and says exactly how much was dropped', async () => {
    const codeMode = await open();
    const run = await runScript(codeMode.tools, [[{ code: "print('x' * (11 * 1024 * 1024))\nprint('tail')" }]]);
    const value = only(run, 0).value as { output: string };
    const kept = 10 * 1024 * 1024;
    expect(value.output.slice(0, kept)).toBe('x'.repeat(kept));
    const dropped = 11 * 1024 * 1024 + 1 - kept + 'tail\n'.length;
    expect(value.output.slice(kept)).toBe(
      `\n[output truncated: ${dropped.toLocaleString('en-US')} more characters were dropped; run_code keeps the first 10,485,760 characters (10 MiB) of printed output]\n`,
    );
  });

  it('bounds results by bytes, not items: 50,000 ints come back whole, a result over 10 MiB is cut with exact counts', async () => {
    const codeMode = await open();
    const run = await runScript(codeMode.tools, [[{ code: 'list(range(50_000))' }], [{ code: "{'rows': ['xxx'] * 3_000_000, 'total': 3}" }]]);
    expect(only(run, 0)).toEqual({ type: 'json', value: Array.from({ length: 50_000 }, (_, index) => index) });
    const cut = only(run, 1).value as { output: string; result: { rows: string[]; total?: number } };
    // {"rows":[...]} spends 10 bytes on the braces, key and brackets; each "xxx" then takes 6 with its comma.
    const fit = Math.floor((10 * 1024 * 1024 - 10 + 1) / 6);
    expect(cut.result).toEqual({ rows: Array.from({ length: fit }, () => 'xxx') });
    expect(cut.output).toBe(
      `[result cut: it is larger than the 10,485,760 bytes (10 MiB) of JSON run_code returns; dropped: ${(3_000_000 - fit + 1).toLocaleString('en-US')} ` +
        'more list items or dict entries. Return a slice, a summary, or the nested part itself to see the rest.]\n',
    );
  });

  it('restarts the kernel on request, and input() reads an empty string', async () => {
    const codeMode = await open();
    const run = await runScript(codeMode.tools, [
      [{ code: 'kept = 1' }],
      [{ code: "'kept' in dir()" }],
      [{ code: "'kept' in dir()", restart: true }],
      [{ code: "answer = input('name? ')\nanswer" }],
      [{ code: "get_sales(region='south')[0]['total']" }],
    ]);
    expect(only(run, 1)).toEqual({ type: 'json', value: true });
    expect(only(run, 2)).toEqual({ type: 'json', value: false });
    expect(only(run, 3)).toEqual({ type: 'json', value: { output: 'name? ', result: '' } });
    expect(only(run, 4)).toEqual({ type: 'json', value: 80 });
  });

  it('supports IPython syntax: magics, shell escapes and top-level await', async () => {
    const codeMode = await open();
    const run = await runScript(codeMode.tools, [
      [{ code: "import asyncio\nawait asyncio.sleep(0.01)\nlines = !echo shell-escape\n%alias_magic t timeit\nlines[0]" }],
    ]);
    expect(only(run, 0)).toEqual({ type: 'json', value: { output: 'Created `%t` as an alias for `%timeit`.\nCreated `%%t` as an alias for `%%timeit`.\n', result: 'shell-escape' } });
  });
});

function shapeOf(parts: unknown): string[] {
  return (parts as Array<{ type: string; text?: string; mediaType?: string; data?: string }>).map((part) => {
    if (part.type === 'text') return `text:${part.text ?? ''}`;
    expect(part.data).toMatch(/^[A-Za-z0-9+/]+=*$/);
    return part.mediaType ?? part.type;
  });
}
