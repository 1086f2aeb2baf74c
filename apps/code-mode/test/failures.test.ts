import { jsonSchema, tool } from 'ai';
import { jupyterKernelBackend, type JupyterBackend } from '@ipython-mcp/jupyter-kernel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startJupyter, type RunningJupyter } from '../../../packages/jupyter-kernel/test/jupyter-servers.js';
import { ipythonCodeMode, type IPythonCodeMode, type IPythonCodeModeOptions, type IPythonKernelOptions } from '../src/index.js';
import { isAlive, only, runScript, survivors, testPython } from './harness.js';

// The checks run on the local worker and on a kernel of a real `jupyter server` that the backend starts (nested
// calls on the kernel's stdin channel); the ones that watch local processes (the memory guard, the kernel's pid)
// run on the local worker only (docs/jupyter.md, "What holds where").
const BACKENDS = ['local', 'jupyter'] as const;
let jupyter: RunningJupyter | undefined;
const backends: JupyterBackend[] = [];

function kernelOptions(): IPythonKernelOptions {
  if (jupyter === undefined) return { python: testPython() };
  const backend = jupyterKernelBackend({ server: { url: jupyter.url, token: jupyter.token }, target: { kernelName: 'python3' } });
  backends.push(backend);
  return { backend, warmStandby: false };
}

const opened: IPythonCodeMode[] = [];
const seenPids = new Set<number>();
let executions = 0;

const sleepy = tool({
  description: 'Waits, then answers.',
  inputSchema: jsonSchema<{ ms: number }>({ type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] }),
  execute: async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return 'rested';
  },
});

/** Set by a test: after each answer of `quick`, the host's event loop is held this long (the host busy elsewhere). */
let holdLoopMs = 0;

const quick = tool({
  description: 'Answers at once.',
  inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
  execute: () => {
    const hold = holdLoopMs;
    if (hold > 0) {
      // A timer, so the answer has been written first: the next call waits unread while the loop is held.
      setTimeout(() => {
        const until = performance.now() + hold;
        while (performance.now() < until);
      }, 0);
    }
    return 'ok';
  },
});

const counter = tool({
  description: 'Counts its calls.',
  inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
  execute: () => {
    executions += 1;
    return executions;
  },
});

const transfer = tool({
  description: 'Moves money; large amounts need approval.',
  inputSchema: jsonSchema<{ amount: number }>(
    { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    {
      validate: (value) =>
        typeof value === 'object' && value !== null && typeof (value as { amount?: unknown }).amount === 'number'
          ? { success: true, value: value as { amount: number } }
          : { success: false, error: new Error('amount must be a number') },
    },
  ),
  needsApproval: async ({ amount }) => amount > 100,
  execute: ({ amount }) => {
    if (amount < 0) throw new Error('cannot move a negative amount');
    return `moved ${amount}`;
  },
});

const wipe = tool({
  description: 'Always needs approval.',
  inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
  needsApproval: true,
  execute: () => 'wiped',
});

async function open(options: IPythonCodeModeOptions = {}): Promise<IPythonCodeMode> {
  const codeMode = await ipythonCodeMode({
    tools: { sleepy, counter, transfer, wipe },
    kernelOptions: kernelOptions(),
    ...options,
  });
  opened.push(codeMode);
  return codeMode;
}

/** The kernel's current pid, remembered for the leak check. */
function pidOf(codeMode: IPythonCodeMode): number {
  const [pid] = codeMode.codeMode.kernel?.workerPids() ?? [];
  if (pid === undefined) throw new Error('the kernel is not running');
  seenPids.add(pid);
  return pid;
}

afterEach(async () => {
  for (const codeMode of opened) for (const pid of codeMode.codeMode.kernel?.workerPids() ?? []) seenPids.add(pid);
  await Promise.all(opened.splice(0).map((codeMode) => codeMode.close()));
  await Promise.all(backends.splice(0).map((backend) => backend.close()));
  expect(await survivors([...seenPids])).toEqual([]);
  seenPids.clear();
  executions = 0;
});

describe.each(BACKENDS)('failures the model is told about (%s)', (backend) => {
  const local = backend === 'local';
  beforeAll(async () => {
    if (!local) jupyter = await startJupyter('server');
  });
  afterAll(async () => {
    await jupyter?.stop();
    jupyter = undefined;
  });

  it('reports code that raises with its output and traceback, and keeps state', async () => {
    const codeMode = await open({ maxCodeRetries: 1 });
    const run = await runScript(codeMode.tools, [[{ code: "y = 5\nprint('before')\n1 / 0" }], [{ code: 'y' }], [{ code: "raise ValueError('again')" }], [{ code: "print('after')" }]]);
    const first = only(run, 0);
    expect(first.type).toBe('error-text');
    expect(first.value).toContain('The code raised ZeroDivisionError: division by zero');
    expect(first.value).toContain('Printed output:\nbefore');
    expect(first.value).toContain('----> 3 1 / 0');
    expect(only(run, 1)).toEqual({ type: 'json', value: 5 });
    // Failures count in a row: the success between them started the count again, so the run goes on.
    expect(only(run, 2).value).toContain('ValueError: again');
    expect(only(run, 3)).toEqual({ type: 'json', value: { output: 'after\n' } });
    expect(codeMode.codeMode.retriesExhausted).toBe(false);
  });

  it("reads a library's error as execute gives it: the user's line, library frames one line each, the exception", async () => {
    const codeMode = await open();
    const run = await runScript(codeMode.tools, [[{ code: "import pandas as pd\nframe = pd.DataFrame({'a': [1]})\nframe['nope']" }]]);
    const seen = only(run, 0);
    expect(seen.type).toBe('error-text');
    const text = String(seen.value);
    expect(text).toMatch(/^----> 3 frame\['nope'\]$/m);
    expect(text).toMatch(/^pandas\/core\/frame\.py:\d+ in __getitem__$/m);
    expect(text).toMatch(/^KeyError: 'nope'$/m);
    expect(text).not.toContain('site-packages');
    expect(text).not.toContain('Could not get source');
    expect(text.length, text).toBeLessThanOrEqual(900);
  });

  it('does not count time spent in tool calls against the timeout, and interrupts code that runs too long', async () => {
    const codeMode = await open({ timeout: 1000 });
    const run = await runScript(codeMode.tools, [
      [{ code: 'import time\nstarted = time.monotonic()\nanswers = [sleepy(ms=800), sleepy(ms=800)]\n[answers, time.monotonic() - started]' }],
      [{ code: 'z = 1\nimport time\ntime.sleep(30)' }],
      [{ code: 'z' }],
    ]);
    const [answers, seconds] = only(run, 0).value as [string[], number];
    expect(answers).toEqual(['rested', 'rested']);
    expect(seconds).toBeGreaterThan(1.5);
    const timedOut = only(run, 1);
    expect(timedOut.type).toBe('error-text');
    expect(timedOut.value).toContain('was still running after the 1 s timeout (time spent in tool calls does not count) and was interrupted with KeyboardInterrupt');
    expect(only(run, 2)).toEqual({ type: 'json', value: 1 });
  });

  it("does not count the calls' transit either (a host busy between calls), and still counts the code's own time", async () => {
    const codeMode = await open({ timeout: 1000, tools: { quick } });
    holdLoopMs = 25;
    try {
      const run = await runScript(codeMode.tools, [
        [{ code: 'import time\nstarted = time.monotonic()\nanswers = [quick() for _ in range(80)]\n[len(answers), time.monotonic() - started]' }],
        [{ code: 'import time\nfor _ in range(40):\n    quick()\n    time.sleep(0.03)' }],
      ]);
      const [count, seconds] = only(run, 0).value as [number, number];
      expect(count).toBe(80);
      // Each next call waited unread while the host was held: 80 × 25 ms, twice the timeout, none of it the code's.
      expect(seconds).toBeGreaterThan(1.9);
      const timedOut = only(run, 1);
      expect(timedOut.type).toBe('error-text');
      expect(timedOut.value).toContain('was still running after the 1 s timeout (time spent in tool calls does not count)');
    } finally {
      holdLoopMs = 0;
    }
  });

  it.runIf(local)('tells the model its cell was stopped for memory, and whether the kernel kept its state', async () => {
    // Bounded: each loop stops itself at 1.5 GiB, and the 2 GiB allocation is refused by the backstop untouched.
    const grow = (local: boolean): string => {
      const loop = ['chunks = []', 'while len(chunks) < 192:', "    chunks.append(b'x' * 2**23)"];
      return local ? ['def grow():', ...loop.map((line) => `    ${line}`), 'grow()'].join('\n') : loop.join('\n');
    };
    const codeMode = await open({ kernelOptions: { python: testPython(), memoryLimitMb: 400 } });
    expect(codeMode.codeMode.kernel).toBeUndefined();
    const run = await runScript(codeMode.tools, [
      [{ code: 'keep = 41' }],
      [{ code: grow(true) }],
      [{ code: "big = b'x' * 2**31" }],
      [{ code: 'keep' }],
      [{ code: grow(false) }],
      [{ code: "'keep' in dir()" }],
    ]);
    for (const step of [1, 2]) {
      const stopped = only(run, step);
      expect(stopped.type).toBe('error-text');
      expect(stopped.value).toContain("The code used more memory than the kernel's 400 MB memory limit and was stopped. The kernel kept its state");
    }
    expect(only(run, 3)).toEqual({ type: 'json', value: 41 });
    const restarted = only(run, 4);
    expect(restarted.type).toBe('error-text');
    expect(restarted.value).toContain('the memory stayed in use, so the kernel was restarted. All its state');
    expect(only(run, 5)).toEqual({ type: 'json', value: false });
    expect(codeMode.codeMode.kernel?.memoryLimitMb).toBe(400);
  });

  it.runIf(local)('replaces a kernel that ignores KeyboardInterrupt for 5 s, and says its state is gone', async () => {
    const codeMode = await open({ timeout: 500 });
    const stubborn = 'import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass';
    const first = await runScript(codeMode.tools, [[{ code: 'lost = 1' }]]);
    expect(only(first, 0)).toEqual({ type: 'json', value: {} });
    const before = pidOf(codeMode);
    const started = Date.now();
    const run = await runScript(codeMode.tools, [[{ code: stubborn }], [{ code: "'lost' in dir()" }]]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
    const escalated = only(run, 0);
    expect(escalated.type).toBe('error-text');
    expect(escalated.value).toContain('did not stop within 5 s of KeyboardInterrupt, so its kernel was shut down. All its state');
    expect(only(run, 1)).toEqual({ type: 'json', value: false });
    expect(pidOf(codeMode)).not.toBe(before);
    expect(isAlive(before)).toBe(false);
  });

  it.runIf(local)('tells the model when the kernel process exits, and starts a fresh one', async () => {
    const codeMode = await open();
    const run = await runScript(codeMode.tools, [[{ code: 'gone = 1' }], [{ code: 'import os\nos._exit(3)' }], [{ code: "['gone' in dir(), counter()]" }]]);
    const before = [...seenPids];
    const died = only(run, 1);
    expect(died.type).toBe('error-text');
    expect(died.value).toContain('The kernel process exited while running the code (exit code 3). All its state');
    // The fresh kernel has the tool functions again.
    expect(only(run, 2)).toEqual({ type: 'json', value: [false, 1] });
    expect(before.every((pid) => pid !== pidOf(codeMode))).toBe(true);
  });

  it('bounds tool calls per run_code call with ToolCallError', async () => {
    const codeMode = await open({ maxToolCalls: 3 });
    const code = 'made = []\ntry:\n    for _ in range(5):\n        made.append(counter())\nexcept ToolCallError as error:\n    print(error)\nmade';
    const run = await runScript(codeMode.tools, [[{ code }], [{ code: 'counter()' }]]);
    expect(only(run, 0)).toEqual({
      type: 'json',
      value: { output: 'tool call limit reached: one run may make at most 3 tool calls\n', result: [1, 2, 3] },
    });
    expect(only(run, 1)).toEqual({ type: 'json', value: 4 });
    expect(executions).toBe(4);
  });

  it('runs nested calls through validation, approval and the tool, raising ToolCallError on failure', async () => {
    const codeMode = await open();
    expect(Object.keys(codeMode.tools).sort()).toEqual(['run_code', 'transfer', 'wipe']);
    expect(codeMode.codeMode.functions.map((fn) => fn.pythonName)).toEqual(['sleepy', 'counter', 'transfer']);
    const attempt = (call: string): string =>
      `try:\n    print(${call})\nexcept ToolCallError as error:\n    print('ToolCallError:', error)`;
    const run = await runScript(codeMode.tools, [
      [{ code: [attempt('transfer(amount=5)'), attempt('transfer(amount=500)'), attempt("transfer(amount='lots')"), attempt('transfer(amount=-1)'), attempt("sleepy(ms='x')")].join('\n') }],
    ]);
    expect(only(run, 0)).toEqual({
      type: 'json',
      value: {
        output: [
          'moved 5',
          'ToolCallError: transfer needs approval before it runs, and calls from code cannot ask for it; call transfer as a regular tool instead',
          'ToolCallError: invalid arguments for transfer: amount must be a number',
          'ToolCallError: cannot move a negative amount',
          'ToolCallError: invalid arguments for sleepy: ms must be integer, got a string',
          '',
        ].join('\n'),
      },
    });
  });

  it("asks the host's approval callback where needsApproval says so: no, yes, and yes for the session", async () => {
    const asked: Array<{ toolName: string; input: unknown }> = [];
    const answers: Array<boolean | 'session'> = [false, true, 'session'];
    const codeMode = await open({
      consent: {
        approve: ({ toolName, input }) => {
          asked.push({ toolName, input });
          return answers.shift() ?? false;
        },
      },
    });
    const attempt = (call: string): string => `try:\n    print(${call})\nexcept ToolCallError as error:\n    print('ToolCallError:', error)`;
    const calls = ['transfer(amount=5)', 'transfer(amount=500)', 'transfer(amount=600)', 'transfer(amount=700)', 'transfer(amount=800)'];
    const run = await runScript(codeMode.tools, [[{ code: calls.map(attempt).join('\n') }]]);
    expect(only(run, 0)).toEqual({
      type: 'json',
      value: {
        output: ['moved 5', "ToolCallError: transfer was refused by the host's approval callback when asked; nothing ran", 'moved 600', 'moved 700', 'moved 800', ''].join('\n'),
      },
    });
    // 5 needs no approval; 500 refused, 600 allowed once, 700 allowed for the session (800 not asked).
    expect(asked).toEqual([
      { toolName: 'transfer', input: { amount: 500 } },
      { toolName: 'transfer', input: { amount: 600 } },
      { toolName: 'transfer', input: { amount: 700 } },
    ]);
  });
});
