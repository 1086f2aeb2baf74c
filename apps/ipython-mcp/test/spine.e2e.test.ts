import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPids, isAlive, startServer, waitForExit, workerPid, type TestServer } from './harness.js';

describe('execute and runtime_status over a real stdio client', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('keeps state between calls and returns the value as JSON', async () => {
    const first = await server.call('execute', { code: 'x = 41' });
    expect(first.isError).toBeFalsy();
    // Compact: only what is informative (no empty streams, false flags, null error, runtime metadata).
    expect(first.structuredContent).toEqual({ execution_count: expect.any(Number) });
    expect(first.content).toEqual([{ type: 'text', text: `In [${(first.structuredContent as any).execution_count}]: ok` }]);
    const call = await server.call('execute', { code: 'x + 1' });
    const second = call.structuredContent as any;
    expect(second).toEqual({ execution_count: (first.structuredContent as any).execution_count + 1, result: { value: 42 } });
    expect(call.content).toEqual([{ type: 'text', text: `Out[${second.execution_count}]: 42` }]);
  });

  it('runs the worker in its own process', async () => {
    const pid = await workerPid(server);
    expect(pid).not.toBe(server.serverPid);
    expect(childPids(server.serverPid)).toContain(pid);
  });

  it('captures stdout and stderr separately', async () => {
    const result = await server.structured('execute', { code: 'import sys\nprint("to out")\nprint("to err", file=sys.stderr)' });
    expect(result.stdout).toBe('to out\n');
    expect(result.stderr).toBe('to err\n');
    expect(result).not.toHaveProperty('truncated');
  });

  it('reports a raised exception as a structured error and keeps the namespace', async () => {
    const raised = await server.call('execute', { code: 'y = 5\n1 / 0' });
    expect(raised.isError).toBe(true);
    const error = (raised.structuredContent as any).error;
    expect(error).toMatchObject({ kind: 'exception', type: 'ZeroDivisionError', message: 'division by zero' });
    expect(error.traceback).toContain('ZeroDivisionError');
    expect(error.traceback).not.toContain('-----');
    expect((await server.structured('execute', { code: 'y' })).result.value).toBe(5);
  });

  it('tells syntax errors apart', async () => {
    const result = await server.call('execute', { code: 'def broken(:\n    pass' });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as any).error).toMatchObject({ kind: 'syntax', type: 'SyntaxError', lineno: 1 });
  });

  it('returns a non-JSON value as a flagged repr', async () => {
    const result = await server.structured('execute', { code: 'class Point:\n    def __repr__(self):\n        return "Point()"\nPoint()' });
    expect(result.result).toMatchObject({ kind: 'repr', repr: 'Point()' });
  });

  it('answers runtime_status with control-plane state only', async () => {
    const status = await server.structured('runtime_status');
    expect(status).toMatchObject({ state: 'ready', epoch: 1 });
    // idle: queue_depth 0 and active false are defaults, left out
    expect(status).not.toHaveProperty('queue_depth');
    expect(status).not.toHaveProperty('active');
    // Nothing of the namespace (x = 41) leaks into it: no value 41 and no name x anywhere in it. (A timing such as
    // worker_startup_ms 341 may contain the digits; only whole values count.)
    const leaves: unknown[] = [];
    const keys: string[] = [];
    const walk = (value: unknown): void => {
      if (value !== null && typeof value === 'object') {
        for (const [key, item] of Object.entries(value)) {
          keys.push(key);
          walk(item);
        }
      } else leaves.push(value);
    };
    walk(status);
    expect(leaves.filter((leaf) => leaf === 41 || leaf === '41' || (typeof leaf === 'string' && /\bx\b|\b41\b/.test(leaf)))).toEqual([]);
    expect(keys).not.toContain('x');
  });
});

describe('the MCP stdout carries protocol frames only', () => {
  it('survives fd-level, subprocess and C-level writes, then keeps serving', async () => {
    const server = await startServer();
    try {
      const code = [
        'import os, subprocess, sys, ctypes',
        'os.write(1, b"junk from os.write\\n")',
        'os.write(2, b"junk on fd 2\\n")',
        'subprocess.run([sys.executable, "-c", "print(\'from a subprocess\')"])',
        'libc = ctypes.CDLL(None)',
        'libc.printf(b"from C printf\\n")',
        'libc.fflush(None)',
        'sys.__stdout__.write("via sys.__stdout__\\n"); sys.__stdout__.flush()',
      ].join('\n');
      const result = await server.structured('execute', { code });
      expect(result.stdout).toContain('junk from os.write');
      expect(result.stdout).toContain('from a subprocess');
      expect(result.stdout).toContain('from C printf');
      expect(result.stderr).toContain('junk on fd 2');
      for (let index = 0; index < 3; index += 1) {
        expect((await server.structured('execute', { code: `${index} * 2` })).result.value).toBe(index * 2);
      }
      expect(server.transportErrors).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('bad input gets a clear error and loses nothing', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await server.call('execute', { code: 'kept = "still here"' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses a 5 MB code argument with message_too_large', async () => {
    const result = await server.call('execute', { code: `# ${'x'.repeat(5 * 1024 * 1024)}` });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as any).error.code).toBe('message_too_large');
    expect((await server.structured('execute', { code: 'kept' })).result.value).toBe('still here');
  });

  it('refuses code of the wrong JSON type with invalid_arguments', async () => {
    const result = await server.call('execute', { code: 42 });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as any).error).toMatchObject({ code: 'invalid_arguments' });
    expect((await server.structured('execute', { code: 'kept' })).result.value).toBe('still here');
  });

  it('answers an unknown tool with a JSON-RPC error and keeps serving', async () => {
    await expect(server.call('no_such_tool', {})).rejects.toThrow(/Unknown tool/);
    expect((await server.structured('execute', { code: 'kept' })).result.value).toBe('still here');
  });
});

describe('process lifetime', () => {
  it('SIGKILL of the server leaves no worker behind', async () => {
    const server = await startServer();
    const worker = await workerPid(server);
    const standbyAndWorker = childPids(server.serverPid);
    expect(standbyAndWorker).toContain(worker);
    process.kill(server.serverPid, 'SIGKILL');
    for (const pid of standbyAndWorker) expect(await waitForExit(pid, 2000)).toBe(true);
    await server.client.close().catch(() => undefined);
  });

  it('closing stdin ends the server and its workers', async () => {
    const server = await startServer();
    const worker = await workerPid(server);
    const children = childPids(server.serverPid);
    server.transport['_process']?.stdin?.end();
    expect(await waitForExit(server.serverPid, 10_000)).toBe(true);
    for (const pid of [worker, ...children]) expect(isAlive(pid)).toBe(false);
    await server.client.close().catch(() => undefined);
  });
});
