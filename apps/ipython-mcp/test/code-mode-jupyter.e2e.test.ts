// `ipython-mcp code-mode --jupyter URL` on a real `jupyter server`: run_code runs as the kernel's own cell and its
// nested calls travel on the kernel's stdin channel. What only a kernel has: a person using the same kernel, whose
// input() prompts go to their own frontend and are never answered by the agent; the bounds of that channel; the
// flags. The Code Mode checks shared with the local worker run on every backend in code-mode-servers.e2e.test.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, testPython, type TestServer } from './harness.js';
import { connectionFileOf, kernelIds, runCli, startHumanKernel, startJupyter, type RunningJupyter } from './jupyter-harness.js';

const UPSTREAM = fileURLToPath(new URL('./fixtures/upstream-server.mjs', import.meta.url));
const HUMAN_INPUT = fileURLToPath(new URL('./fixtures/human-input.py', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'code-mode-jupyter-'));
const serversFile = join(directory, 'servers.json');
// A trusted test run: the fixture's tools run without asking (code-mode-consent.e2e.test.ts tests the asking).
writeFileSync(
  serversFile,
  JSON.stringify({ mcpServers: { a: { command: process.execPath, args: [UPSTREAM], env: { UPSTREAM_LABEL: 'a' } } }, codeMode: { consent: 'run' } }),
);

let jupyter: RunningJupyter;
beforeAll(async () => {
  jupyter = await startJupyter('server');
});
afterAll(async () => {
  await jupyter?.stop();
  rmSync(directory, { recursive: true, force: true });
});

function text(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : `<${part.type}>`)).join('\n');
}

async function value(server: TestServer, code: string): Promise<any> {
  const result = await server.call('run_code', { code });
  if (result.isError === true) throw new Error(`run_code failed: ${text(result)}`);
  // The value is the first block; a summary of the nested calls' consent decisions may follow it.
  const first = result.content[0];
  return JSON.parse(first?.type === 'text' ? first.text : '');
}

function codeMode(kernel: ['--kernel', string] | ['--kernel-name', string]): Promise<TestServer> {
  return startServer({ JUPYTER_TOKEN: jupyter.token }, ['code-mode', '--servers', serversFile, '--jupyter', jupyter.url, ...kernel]);
}

/** A person's cell calling input() from their own client; resolves with what their stdin channel saw. */
function personAsks(kernelId: string, pauseSeconds: number, lingerSeconds: number): { prompted: Promise<void>; done: Promise<{ prompts: string[]; output: string; status: string }> } {
  const child = spawn(testPython(), [HUMAN_INPUT, connectionFileOf(jupyter, kernelId), String(pauseSeconds), String(lingerSeconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let onPrompted: (() => void) | undefined;
  const prompted = new Promise<void>((resolve) => (onPrompted = resolve));
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('prompted\n')) onPrompted?.();
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const done = new Promise<{ prompts: string[]; output: string; status: string }>((resolve, reject) => {
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((each) => each.startsWith('{'));
      if (code !== 0 || line === undefined) reject(new Error(`human-input.py failed (${String(code)}): ${stderr}`));
      else resolve(JSON.parse(line) as { prompts: string[]; output: string; status: string });
    });
  });
  done.catch(() => undefined);
  return { prompted, done };
}

describe('Code Mode in a kernel a person also uses (--kernel ID)', () => {
  let kernelId: string;
  let server: TestServer;
  beforeAll(async () => {
    kernelId = await startHumanKernel(jupyter);
    server = await codeMode(['--kernel', kernelId]);
    expect(await value(server, 'echo(text="warm")')).toBe('a:warm');
  });
  afterAll(async () => {
    await server?.close();
  });

  it("never answers the person's input(), and never sends the agent's calls to the person's frontend", async () => {
    const person = personAsks(kernelId, 2, 6);
    await person.prompted;
    // The person's cell waits for its answer: the agent's run_code waits for that cell, then runs its calls.
    const code = 'calls = [echo(text=str(i)) for i in range(20)]\n[calls[-1], input(), answer]';
    const [last, agentInput, personAnswer] = await value(server, code);
    expect(last).toBe('a:19');
    // The agent's own input() reads an empty line; the person's answer is theirs, and it is in the shared namespace.
    expect(agentInput).toBe('');
    expect(personAnswer).toBe('from-person');
    const seen = await person.done;
    expect(seen.status).toBe('ok');
    expect(seen.output).toContain("person got 'from-person'");
    // Only the person's own prompt reached the person's client: none of the agent's 20 calls, nor its input().
    expect(seen.prompts).toEqual(['person> ']);
  });

  it('refuses a tool result too large for the stdin channel as ToolCallError, and the kernel goes on', async () => {
    const code = 'try:\n    echo(text="x" * 9_000_000)\n    outcome = "no error"\nexcept ToolCallError as error:\n    outcome = str(error)\noutcome';
    expect(await value(server, code)).toMatch(/over the 8388608-byte limit of an answer on a kernel's stdin channel/);
    expect(await value(server, 'len(echo(text="y" * 1_000_000))')).toBe(1_000_002);
  });

  it('refuses restart: true, and the namespace is as it was', async () => {
    const refused = await server.call('run_code', { code: 'answer', restart: true });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("restart is not available here: the kernel is someone else's");
    expect(await value(server, 'answer')).toBe('from-person');
  });

  it("is left running when code-mode exits: the kernel is the person's", async () => {
    // One ipython-mcp per kernel (docs/jupyter.md): the first one ends before the next attaches.
    await server.close();
    expect(await kernelIds(jupyter)).toContain(kernelId);
    server = await codeMode(['--kernel', kernelId]);
    expect(await value(server, 'answer')).toBe('from-person');
  });
});

describe('Code Mode in a kernel it starts (--kernel-name)', () => {
  it('shuts the kernel down when it exits', async () => {
    const before = await kernelIds(jupyter);
    const server = await codeMode(['--kernel-name', 'python3']);
    try {
      expect(await value(server, 'import os\n[type(get_ipython()).__name__, echo(text="k")]')).toEqual(['ZMQInteractiveShell', 'a:k']);
    } finally {
      await server.close();
    }
    await expect.poll(async () => (await kernelIds(jupyter)).filter((id) => !before.includes(id)), { timeout: 15_000 }).toEqual([]);
  });
});

describe('code-mode --jupyter: bad flag combinations exit 2 naming the flag', () => {
  it.each([
    [['code-mode', '--servers', '/dev/null', '--kernel-name', 'python3'], '--kernel-name needs --jupyter URL'],
    [['code-mode', '--servers', '/dev/null', '--jupyter', 'http://127.0.0.1:1/', '--kernel', 'a', '--notebook', 'b.ipynb'], '--kernel and --notebook cannot be combined'],
    [['code-mode', '--servers', '/dev/null', '--jupyter', 'http://127.0.0.1:1/', '--kernel', 'a', '--sandbox'], '--sandbox cannot be combined with --jupyter'],
    [['code-mode', '--servers', '/dev/null', '--jupyter', 'http://127.0.0.1:1/', '--kernel', 'a', '--http', '127.0.0.1:0'], '--http and its --http-* flags only apply to serving'],
  ])('%j', (args, message) => {
    const done = runCli(args);
    expect(done.status).toBe(2);
    expect(done.stderr).toContain(message);
    expect(done.stdout).toBe('');
  });
});
