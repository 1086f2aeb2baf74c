// `ipython-mcp code-mode --servers FILE` through a real MCP client: real upstream servers (the fixture server and
// the project's own ipython-mcp), a real kernel. Upstream tools are Python functions inside one run_code tool. The
// first suite runs on each backend: the local worker, a `jupyter server` kernel and a Kernel Gateway kernel
// (`--jupyter URL --kernel-name python3`, nested calls on the kernel's stdin channel).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, childPids, eventually, isAlive, startServer, survivors, testPython, type TestServer } from './harness.js';
import { startJupyter, type JupyterServerKind, type RunningJupyter } from './jupyter-harness.js';

const UPSTREAM = fileURLToPath(new URL('./fixtures/upstream-server.mjs', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'code-mode-servers-'));

/** Writes a servers file and returns its path. */
function serversFile(name: string, content: unknown): string {
  const path = join(directory, `${name}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

function fixture(label: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [UPSTREAM], env: { UPSTREAM_LABEL: label }, ...extra };
}

/** A trusted test run: every upstream tool runs without asking (code-mode-consent.e2e.test.ts tests the asking). */
async function startCodeMode(file: string, jupyter?: RunningJupyter): Promise<TestServer> {
  if (jupyter === undefined) return startServer({}, ['code-mode', '--servers', file, '--consent', 'run']);
  return startServer({ JUPYTER_TOKEN: jupyter.token }, ['code-mode', '--servers', file, '--consent', 'run', '--jupyter', jupyter.url, '--kernel-name', 'python3']);
}

/** Where run_code's kernel lives: the local worker, or a kernel ipython-mcp starts on a Jupyter server or gateway. */
const BACKENDS: Array<'local' | JupyterServerKind> = ['local', 'server', 'gateway'];

function text(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : `<${part.type}>`)).join('\n');
}

/** Runs code and returns the JSON value run_code answered with; fails the test on an error result. */
async function value(server: TestServer, code: string): Promise<any> {
  const result = await server.call('run_code', { code });
  if (result.isError === true) throw new Error(`run_code failed: ${text(result)}`);
  // The value is the first block; a summary of the nested calls' consent decisions may follow it.
  const first = result.content[0];
  return JSON.parse(first?.type === 'text' ? first.text : '');
}

async function description(server: TestServer): Promise<string> {
  const { tools } = await server.client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(['run_code']);
  return tools[0]?.description ?? '';
}

describe.each(BACKENDS)('code-mode over the fixture server and ipython-mcp (%s)', (backend) => {
  let server: TestServer;
  let jupyter: RunningJupyter | undefined;
  let listChanged = 0;
  beforeAll(async () => {
    if (backend !== 'local') jupyter = await startJupyter(backend);
    const file = serversFile('main', {
      mcpServers: {
        a: fixture('a'),
        b: fixture('b', { tools: ['echo', 'pid', 'get_*'] }),
        ipython: { command: process.execPath, args: [CLI], env: { IPYTHON_MCP_PYTHON: testPython() } },
        broken: { command: join(directory, 'no-such-server'), args: [] },
      },
      codeMode: { maxToolCalls: 250, timeoutSeconds: 3 },
    });
    server = await startCodeMode(file, jupyter);
    server.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged += 1;
    });
  });
  afterAll(async () => {
    await server?.close();
    await jupyter?.stop();
  });

  it('lists one run_code whose description has every function, prefixes for shared names, and the broken server', async () => {
    const text = await description(server);
    expect(text).toContain('def a_get_weather(*, city: str, days: int = 1) -> dict[str, Any]:');
    expect(text).toContain('def b_get_weather(');
    expect(text).toContain('def echo_json(*, value: Any) -> Any:');
    expect(text).toContain('def a_echo(*, text: str)');
    expect(text).not.toContain('def b_fail(');
    // ipython-mcp's twelve tools; `list` is a builtin, so it is `list_`.
    for (const name of ['execute', 'call_function', 'list_', 'search', 'inspect', 'reload', 'remove', 'reset', 'register_tool', 'unregister_tool', 'job', 'runtime_status']) {
      expect(text).toContain(`def ${name}(`);
    }
    expect(text).toMatch(/- broken: NOT AVAILABLE \(it did not start/);
    expect(text).toContain('- a: ready, 8 tools');
  });

  it('returns structuredContent, parsed JSON text and plain text', async () => {
    expect(await value(server, 'a_get_weather(city="Oslo", days=2)')).toEqual({ city: 'Oslo', temperature: 21.5, days: 2 });
    expect(await value(server, 'echo_json(value=[1, {"x": None}])')).toEqual({ label: 'a', value: [1, { x: null }] });
    expect(await value(server, 'b_echo(text="hi")')).toBe('b:hi');
  });

  it('raises an isError result as ToolCallError, which code can catch, and a missing argument as the upstream says', async () => {
    const caught = await value(server, 'try:\n    fail(message="boom")\nexcept ToolCallError as error:\n    caught = str(error)\ncaught');
    expect(caught).toContain('failed: boom');
    const uncaught = await server.call('run_code', { code: 'fail(message="loud")' });
    expect(uncaught.isError).toBe(true);
    expect(text(uncaught)).toContain('ToolCallError');
    expect(text(uncaught)).toContain('failed: loud');
  });

  it('returns images as MCP image content, and an upstream image as its content items', async () => {
    const items = await value(server, 'image()');
    expect(items).toEqual([expect.objectContaining({ type: 'image', mimeType: 'image/png' })]);
    const shown = await server.call('run_code', {
      code: 'import base64\nfrom IPython.display import Image, display\ndisplay(Image(data=base64.b64decode(image()[0]["data"])))\n"shown"',
    });
    expect(shown.isError).toBeFalsy();
    expect(shown.content.some((part) => part.type === 'image' && part.mimeType === 'image/png')).toBe(true);
  });

  it('makes 200 upstream ipython-mcp calls in one run_code, and stops at max_tool_calls', async () => {
    const total = await value(server, 'sum(execute(code=f"{i} * 2")["result"]["value"] for i in range(200))');
    expect(total).toBe(2 * ((199 * 200) / 2));
    const capped = await value(server, 'n = 0\ntry:\n    for _ in range(300):\n        b_echo(text="x"); n += 1\nexcept ToolCallError as error:\n    message = str(error)\n[n, message]');
    expect(capped[0]).toBe(250);
    expect(capped[1]).toMatch(/250/);
  });

  it('does not count tool time against the timeout, but interrupts code that runs past it', async () => {
    expect(await value(server, '[slow(ms=2000), slow(ms=2000)]')).toEqual(['done', 'done']);
    const late = await server.call('run_code', { code: 'import time\ntime.sleep(30)' });
    expect(late.isError).toBe(true);
    expect(text(late)).toMatch(/3 s timeout/);
    expect(await value(server, '1 + 1')).toBe(2);
  });

  it('passes tools/list_changed on: a tool added upstream becomes a function', async () => {
    const before = listChanged;
    expect(await value(server, 'add_tool(name="late-tool")')).toBe('added');
    await eventually(() => listChanged, (count) => count > before, 10_000);
    expect(await description(server)).toContain('def late_tool() -> Any:');
    expect(await value(server, 'late_tool()')).toBe('late-tool from a');
  });

  it('an upstream killed mid-run: its later calls raise ToolCallError, the others still work', async () => {
    const code = [
      'import os, signal, time',
      'os.kill(a_pid(), signal.SIGKILL)',
      'time.sleep(0.5)',
      'try:',
      '    a_echo(text="after")',
      '    outcome = "no error"',
      'except ToolCallError as error:',
      '    outcome = str(error)',
      '[outcome, b_echo(text="still"), execute(code="40 + 2")["result"]["value"]]',
    ].join('\n');
    const before = listChanged;
    const [outcome, still, answer] = await value(server, code);
    expect(outcome).toMatch(/MCP server "a" (is not available|went away)/);
    expect(still).toBe('b:still');
    expect(answer).toBe(42);
    // The description changed (a's status line), so the client was told to list again.
    await eventually(() => listChanged, (count) => count > before, 10_000);
    expect(await description(server)).toMatch(/- a: NOT AVAILABLE \(the process exited/);
    const later = await value(server, 'try:\n    a_get_weather(city="x")\nexcept ToolCallError as error:\n    later = str(error)\nlater');
    expect(later).toContain('is not available');
  });
});

describe('code-mode lifecycle and bad input', () => {
  it('ends every upstream server on stdin EOF, SIGTERM and SIGINT (no orphans)', async () => {
    const file = serversFile('lifecycle', { mcpServers: { one: fixture('one'), two: fixture('two') } });
    for (const how of ['eof', 'sigterm', 'sigint'] as const) {
      const server = await startCodeMode(file);
      const pids = await value(server, '[one_pid(), two_pid()]');
      expect(pids.every((pid: number) => isAlive(pid))).toBe(true);
      if (how === 'eof') await server.close();
      else {
        process.kill(server.serverPid, how === 'sigterm' ? 'SIGTERM' : 'SIGINT');
        await server.close();
      }
      expect(await survivors([server.serverPid, ...pids], 10_000)).toEqual([]);
    }
  });

  it('leaves no upstream or kernel behind even when the server itself is SIGKILLed', async () => {
    const file = serversFile('killed', {
      mcpServers: { one: fixture('one'), ipython: { command: process.execPath, args: [CLI], env: { IPYTHON_MCP_PYTHON: testPython() } } },
    });
    const server = await startCodeMode(file);
    const [upstreamPid, kernelPid, ipythonWorkerPid] = await value(
      server,
      'import os\n[pid(), os.getpid(), execute(code="import os; os.getpid()")["result"]["value"]]',
    );
    const family = [server.serverPid, upstreamPid, kernelPid, ipythonWorkerPid, ...childPids(server.serverPid)];
    process.kill(server.serverPid, 'SIGKILL');
    await server.close();
    expect(await survivors(family, 15_000)).toEqual([]);
  });

  it('refuses a missing or invalid servers file with exit code 2 and a clear message', async () => {
    const { spawnSync } = await import('node:child_process');
    const missing = spawnSync(process.execPath, [CLI, 'code-mode', '--servers', join(directory, 'absent.json')], { encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('cannot read the servers file');
    const invalid = spawnSync(process.execPath, [CLI, 'code-mode', '--servers', serversFile('invalid', { mcpServers: { x: { args: [] } } })], {
      encoding: 'utf8',
    });
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toContain('invalid at mcpServers.x.command');
    const noFile = spawnSync(process.execPath, [CLI, 'code-mode'], { encoding: 'utf8' });
    expect(noFile.status).toBe(2);
    expect(noFile.stderr).toContain('--servers');
  });

  it('serves run_code with no upstream tools, and answers bad run_code input as an error result', async () => {
    const server = await startCodeMode(serversFile('empty', { mcpServers: {} }));
    try {
      expect(await value(server, 'x = 5\nx * 2')).toBe(10);
      expect(await value(server, 'x')).toBe(5);
      const bad = await server.call('run_code', { code: 42 });
      expect(bad.isError).toBe(true);
      expect(await value(server, 'x')).toBe(5);
      // A client that cancels run_code interrupts the cell; the kernel keeps its state.
      const controller = new AbortController();
      const cancelled = server.client.callTool({ name: 'run_code', arguments: { code: 'import time\ny = 1\ntime.sleep(60)' } }, undefined, {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 1000);
      await expect(cancelled).rejects.toThrow();
      const started = Date.now();
      expect(await value(server, '[x, y]')).toEqual([5, 1]);
      expect(Date.now() - started).toBeLessThan(30_000);
      // restart: a fresh kernel, without the old names.
      const fresh = await server.call('run_code', { code: 'x', restart: true });
      expect(fresh.isError).toBe(true);
      expect(text(fresh)).toContain('NameError');
    } finally {
      await server.close();
    }
  });
});
