import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context as otelContext } from '@opentelemetry/api';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type OnToolCallFinishEvent, type OnToolCallStartEvent, type ToolSet } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IPythonKernel, MaxRetriesExceededError, ipythonCodeMode, type IPythonCodeMode, type IPythonCodeModeOptions } from '../src/index.js';
import { isAlive, only, runScript, scriptedModel, survivors, testPython } from './harness.js';
import { AsyncContextManager, InMemoryTracer } from './in-memory-tracer.js';

const opened: IPythonCodeMode[] = [];
const kernels: IPythonKernel[] = [];
const seenPids = new Set<number>();
const contextManager = new AsyncContextManager();

const lookup = tool({
  description: 'Looks a key up; fails for "missing".',
  inputSchema: jsonSchema<{ key: string }>({ type: 'object', properties: { key: { type: 'string' } }, required: ['key'] }),
  execute: ({ key }) => {
    if (key === 'missing') throw new Error('no such key');
    return `value of ${key}`;
  },
});

async function open(options: IPythonCodeModeOptions = {}): Promise<IPythonCodeMode> {
  const codeMode = await ipythonCodeMode({ tools: { lookup }, kernelOptions: { python: testPython() }, ...options });
  opened.push(codeMode);
  return codeMode;
}

beforeAll(() => {
  otelContext.setGlobalContextManager(contextManager);
});

afterAll(() => {
  otelContext.disable();
});

afterEach(async () => {
  for (const codeMode of opened) for (const pid of codeMode.codeMode.kernel?.workerPids() ?? []) seenPids.add(pid);
  for (const kernel of kernels) for (const pid of kernel.workerPids()) seenPids.add(pid);
  await Promise.all(opened.splice(0).map((codeMode) => codeMode.close()));
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
  expect(await survivors([...seenPids])).toEqual([]);
  seenPids.clear();
});

describe('maxCodeRetries, as AI SDK and Pydantic AI users expect it', () => {
  it('counts failures in a row: failures between successes never end the run', async () => {
    const codeMode = await open({ maxCodeRetries: 1 });
    const steps = [[{ code: '1 / 0' }], [{ code: '1' }], [{ code: '1 / 0' }], [{ code: '2' }], [{ code: '1 / 0' }], [{ code: '3' }], [{ code: '1 / 0' }], [{ code: '4' }]];
    const run = await runScript(codeMode.tools, steps);
    expect(run.seen.map((outputs) => outputs[0]?.output.type)).toEqual(['error-text', 'json', 'error-text', 'json', 'error-text', 'json', 'error-text', 'json']);
    expect(run.result.text).toBe('done');
  });

  it('ends the run at the failure past maxCodeRetries with no stopWhen wired: generateText rejects', async () => {
    // The README's shared-kernel example: a kernel kept across runs, and only stepCountIs in stopWhen.
    const kernel = new IPythonKernel({ python: testPython() });
    kernels.push(kernel);
    const codeMode = await open({ kernel, maxCodeRetries: 2 });
    const model = scriptedModel([[{ code: 'ran = 0' }], [{ code: 'ran += 1\n1 / 0' }], [{ code: 'ran += 1\n1 / 0' }], [{ code: 'ran += 1\n1 / 0' }], [{ code: 'ran += 1' }]]);
    const run = generateText({ model, tools: codeMode.tools, stopWhen: stepCountIs(10), prompt: 'go' });
    await expect(run).rejects.toBeInstanceOf(MaxRetriesExceededError);
    await expect(run).rejects.toThrow(/run_code failed 3 times in a row, more than maxCodeRetries \(2\) allows; giving up\. The last failure: The code raised ZeroDivisionError/);
    // The model got no turn after the failure that ended the run, so no more code ran.
    expect(model.doGenerateCalls).toHaveLength(4);
    const after = await open({ kernel });
    expect(only(await runScript(after.tools, [[{ code: 'ran' }]]), 0)).toEqual({ type: 'json', value: 3 });
  });

  it('ends a streamText run the same way', async () => {
    const codeMode = await open({ maxCodeRetries: 1 });
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
    let turns = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        turns += 1;
        const input = JSON.stringify({ code: '1 / 0' });
        return {
          stream: convertArrayToReadableStream([
            { type: 'tool-call' as const, toolCallId: `c${turns}`, toolName: 'run_code', input },
            { type: 'finish' as const, finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' }, usage },
          ]),
        };
      },
    });
    const result = streamText({ model, tools: codeMode.tools, stopWhen: stepCountIs(10), prompt: 'go', onError: () => undefined });
    await expect(result.text).rejects.toBeInstanceOf(MaxRetriesExceededError);
    expect(turns).toBe(2);
  });

  it('keeps maxRetries as a deprecated name of maxCodeRetries', async () => {
    const codeMode = await open({ maxRetries: 0 });
    expect(codeMode.codeMode.maxCodeRetries).toBe(0);
    await expect(generateText({ model: scriptedModel([[{ code: 'raise ValueError("x")' }]]), tools: codeMode.tools, prompt: 'go' })).rejects.toThrow(
      /run_code failed 1 times in a row, more than maxCodeRetries \(0\) allows/,
    );
    await expect(ipythonCodeMode({ maxRetries: 1, maxCodeRetries: 2 })).rejects.toThrow(/old name of maxCodeRetries/);
  });
});

describe('nested calls in AI SDK telemetry and callbacks', () => {
  it('emits an ai.toolCall span per nested call, a child of run_code in the same trace, and calls the callbacks', async () => {
    const tracer = new InMemoryTracer();
    const telemetry = { isEnabled: true, tracer, functionId: 'analysis', metadata: { user: 'u1' } };
    const starts: Array<OnToolCallStartEvent<ToolSet>> = [];
    const finishes: Array<OnToolCallFinishEvent<ToolSet>> = [];
    const callbacks = { experimental_onToolCallStart: (event: OnToolCallStartEvent<ToolSet>) => void starts.push(event), experimental_onToolCallFinish: (event: OnToolCallFinishEvent<ToolSet>) => void finishes.push(event) };
    const codeMode = await open({ experimental_telemetry: telemetry, ...callbacks });
    const code = "first = lookup(key='a')\ntry:\n    lookup(key='missing')\nexcept ToolCallError as error:\n    failed = str(error)\n[first, failed]";
    const result = await generateText({
      model: scriptedModel([[{ code }]]),
      tools: codeMode.tools,
      prompt: 'go',
      stopWhen: stepCountIs(3),
      experimental_telemetry: telemetry,
      ...callbacks,
    });
    expect(result.steps[0]?.toolResults[0]?.output).toMatchObject({ return: { kind: 'value', value: ['value of a', 'no such key'] } });

    const runCode = tracer.spans.find((span) => span.name === 'ai.toolCall' && span.attributes['ai.toolCall.name'] === 'run_code');
    expect(runCode).toBeDefined();
    const nested = tracer.spans.filter((span) => span.name === 'ai.toolCall' && span.attributes['ai.toolCall.name'] === 'lookup');
    expect(nested).toHaveLength(2);
    for (const span of nested) {
      expect(span.parentSpanId).toBe(runCode!.spanId);
      expect(span.traceId).toBe(runCode!.traceId);
      expect(span.ended).toBe(true);
      expect(span.attributes).toMatchObject({
        'operation.name': 'ai.toolCall analysis',
        'ai.operationId': 'ai.toolCall',
        'ai.telemetry.functionId': 'analysis',
        'ai.telemetry.metadata.user': 'u1',
        'ipython_code_mode.run_code.id': 'call-1-0',
      });
    }
    expect(nested.map((span) => span.attributes['ai.toolCall.id'])).toEqual(['call-1-0:1', 'call-1-0:2']);
    expect(nested[0]!.attributes['ai.toolCall.args']).toBe('{"key":"a"}');
    expect(nested[0]!.attributes['ai.toolCall.result']).toBe('"value of a"');
    expect(nested[1]!.status).toMatchObject({ code: 2, message: 'no such key' });

    // The callbacks see run_code from the AI SDK and the nested calls from Code Mode, in the AI SDK's event shape.
    expect(starts.map((event) => [event.toolCall.toolName, event.toolCall.toolCallId])).toEqual([
      ['run_code', 'call-1-0'],
      ['lookup', 'call-1-0:1'],
      ['lookup', 'call-1-0:2'],
    ]);
    expect(finishes.map((event) => [event.toolCall.toolName, event.success])).toEqual([
      ['lookup', true],
      ['lookup', false],
      ['run_code', true],
    ]);
    const failed = finishes[1]!;
    expect(failed.success === false ? (failed.error as Error).message : undefined).toBe('no such key');
    expect(starts[1]).toMatchObject({ functionId: 'analysis', metadata: { user: 'u1' }, toolCall: { input: { key: 'a' } } });
  });

  it('records no spans when telemetry is off, and leaves inputs and outputs out when asked', async () => {
    const tracer = new InMemoryTracer();
    const off = await open({ experimental_telemetry: { isEnabled: false, tracer } });
    await runScript(off.tools, [[{ code: "lookup(key='a')" }]]);
    expect(tracer.spans).toEqual([]);
    const quiet = await open({ experimental_telemetry: { isEnabled: true, tracer, recordInputs: false, recordOutputs: false } });
    await runScript(quiet.tools, [[{ code: "lookup(key='a')" }]]);
    expect(tracer.spans).toHaveLength(1);
    expect(tracer.spans[0]!.attributes['ai.toolCall.args']).toBeUndefined();
    expect(tracer.spans[0]!.attributes['ai.toolCall.result']).toBeUndefined();
  });
});

describe('a per-run kernel someone forgot to close', () => {
  it('does not keep the program alive: the script exits on its own and leaves no Python process', async () => {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'forgets-close.mjs');
    const child = spawn(process.execPath, [script], { env: { ...process.env, CODE_MODE_TEST_PYTHON: testPython() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = Date.now();
    const exit = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 60_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect({ exit, stderr }).toEqual({ exit: 0, stderr: '' });
    expect(Date.now() - started).toBeLessThan(60_000);
    const { pid, pids } = JSON.parse(stdout) as { pid: number; pids: number[] };
    expect(pids).toEqual([pid]);
    expect(await survivors([pid])).toEqual([]);
    expect(isAlive(pid)).toBe(false);
  });
});

describe('a kernel that is slow to start', () => {
  it('tells the model the truth: the start timed out, and the next call does start a fresh kernel', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'code-mode-slow-'));
    const python = join(directory, 'python');
    writeFileSync(python, `#!/bin/sh\nif [ ! -e "${directory}/started" ]; then touch "${directory}/started"; sleep 30; fi\nexec "${testPython()}" "$@"\n`);
    chmodSync(python, 0o755);
    const codeMode = await open({ kernelOptions: { python, startupTimeoutMs: 1500 } });
    const run = await runScript(codeMode.tools, [[{ code: '1 + 1' }], [{ code: '2 + 2' }]]);
    const first = only(run, 0);
    expect(first.type).toBe('error-text');
    expect(first.value).toBe(
      'the IPython kernel could not start: the worker did not become ready within 1500 ms. Nothing was left running; the next run_code call (or start()) tries a fresh kernel.',
    );
    expect(only(run, 1)).toEqual({ type: 'json', value: 4 });
  });
});
