// Runtime's unrefWhenIdle against real Python workers: an idle runtime that nobody closes does not keep Node alive.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { survivors, testPython } from '@ipython-mcp/test-support';
import { describe, expect, it } from 'vitest';

/** Runs `source` as an ES module in a child Node; resolves with its exit code (null past `boundMs`) and stdout. */
function runNode(source: string, boundMs: number): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal === 'SIGKILL' ? null : code, stdout });
    });
  });
}

function script(unrefWhenIdle: boolean): string {
  const runtime = JSON.stringify(fileURLToPath(new URL('./runtime.js', import.meta.url)).replace('/src/', '/dist/'));
  return `
    const { Runtime } = await import(${runtime});
    const runtime = new Runtime({ python: ${JSON.stringify(testPython())}, warmStandby: true, unrefWhenIdle: ${unrefWhenIdle} });
    const outcome = await runtime.run('execute', { code: '1 + 1' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the warm standby start too
    process.stdout.write(JSON.stringify({ ok: outcome.ok, pids: runtime.workerPids() }));
    // No close().
  `;
}

describe('Runtime unrefWhenIdle', () => {
  it('lets a program that never closes its runtime exit, and its workers (standby included) with it', async () => {
    const { code, stdout } = await runNode(script(true), 30_000);
    expect(code).toBe(0);
    const { ok, pids } = JSON.parse(stdout) as { ok: boolean; pids: number[] };
    expect(ok).toBe(true);
    expect(pids.length).toBeGreaterThanOrEqual(1);
    expect(await survivors(pids)).toEqual([]);
  });

  it('keeps the default: workers hold the event loop until close()', async () => {
    const { code, stdout } = await runNode(script(false), 4000);
    expect(code).toBeNull();
    const { pids } = JSON.parse(stdout) as { pids: number[] };
    expect(await survivors(pids)).toEqual([]);
  });
});
