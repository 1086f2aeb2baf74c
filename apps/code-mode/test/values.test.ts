import { jsonSchema, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { ipythonCodeMode, type IPythonCodeMode } from '../src/index.js';
import { only, runScript, survivors, testPython } from './harness.js';

const opened: IPythonCodeMode[] = [];

afterEach(async () => {
  const pids = opened.flatMap((codeMode) => codeMode.codeMode.kernel?.workerPids() ?? []);
  await Promise.all(opened.splice(0).map((codeMode) => codeMode.close()));
  expect(await survivors(pids)).toEqual([]);
});

describe('values through a real AI SDK loop', () => {
  it('returns big integers, NaN and undecodable text without breaking the next step, and tools get exact ints', async () => {
    const lookup = tool({
      description: 'Look a record up.',
      inputSchema: jsonSchema<{ id: number }>({ type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] }),
      execute: ({ id }) => ({ id, next: id + 1, ratio: Number.NaN, big: 2n ** 70n }),
    });
    const codeMode = await ipythonCodeMode({ tools: { lookup }, kernelOptions: { python: testPython() } });
    opened.push(codeMode);
    const run = await runScript(codeMode.tools, [
      [{ code: '2**40' }],
      [{ code: "{'n': 10**20}" }],
      [{ code: "r = lookup(id=5_000_000_000)\n[type(r['id']).__name__, r['id'], r['next'], repr(r['ratio']), r['big'] == 2**70]" }],
      [{ code: "import os, tempfile\nd = tempfile.mkdtemp()\nopen(os.path.join(d.encode(), b'caf\\xe9'), 'w').close()\nos.listdir(d)" }],
      [{ code: 'kept = 41\nkept + 1' }],
    ]);
    expect(only(run, 0)).toEqual({ type: 'json', value: 2 ** 40 });
    expect(only(run, 1)).toEqual({ type: 'json', value: "{'n': 100000000000000000000}" });
    expect(only(run, 2)).toEqual({ type: 'json', value: ['int', 5_000_000_000, 5_000_000_001, 'nan', true] });
    expect(only(run, 3)).toEqual({ type: 'json', value: "['caf\\udce9']" });
    expect(only(run, 4)).toEqual({ type: 'json', value: 42 });
    expect(JSON.parse(JSON.stringify(run.result.steps.map((step) => step.toolResults)))).toBeTruthy();
  });
});
