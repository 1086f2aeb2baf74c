import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, childPids, eventually, isAlive, startServer, testPython, type TestServer } from './harness.js';

// The twenty-eight IPYTHON_MCP_* settings: each read from the environment and from its CLI flag (the flag wins),
// bad values refused with one stderr line and exit code 2 before any worker starts, and a failing preload
// leaving the runtime unavailable rather than half built.

const SETTINGS: { env: string; flag: string; envValue: string; flagValue: string; envParsed: unknown; flagParsed: unknown }[] = [
  { env: 'IPYTHON_MCP_LIBRARY_PATHS', flag: '--library-paths', envValue: `/tmp/a${delimiter}/tmp/b`, flagValue: '/tmp/c', envParsed: ['/tmp/a', '/tmp/b'], flagParsed: ['/tmp/c'] },
  { env: 'IPYTHON_MCP_PRELOAD_MODULES', flag: '--preload-modules', envValue: 'json, os.path', flagValue: 'math', envParsed: ['json', 'os.path'], flagParsed: ['math'] },
  { env: 'IPYTHON_MCP_MODULE_ALIASES', flag: '--module-aliases', envValue: '{"numpy": "np"}', flagValue: '{"pandas": "pd", "collections.abc": "cabc"}', envParsed: { numpy: 'np' }, flagParsed: { pandas: 'pd', 'collections.abc': 'cabc' } },
  { env: 'IPYTHON_MCP_MAX_TEXT_CHARS', flag: '--max-text-chars', envValue: '1001', flagValue: '2001', envParsed: 1001, flagParsed: 2001 },
  { env: 'IPYTHON_MCP_MAX_REPR_CHARS', flag: '--max-repr-chars', envValue: '1002', flagValue: '2002', envParsed: 1002, flagParsed: 2002 },
  { env: 'IPYTHON_MCP_MAX_TRACEBACK_CHARS', flag: '--max-traceback-chars', envValue: '1003', flagValue: '2003', envParsed: 1003, flagParsed: 2003 },
  { env: 'IPYTHON_MCP_MAX_RESULTS', flag: '--max-results', envValue: '1004', flagValue: '2004', envParsed: 1004, flagParsed: 2004 },
  { env: 'IPYTHON_MCP_MAX_DISPLAY_ITEMS', flag: '--max-display-items', envValue: '1005', flagValue: '2005', envParsed: 1005, flagParsed: 2005 },
  { env: 'IPYTHON_MCP_MAX_JSON_DEPTH', flag: '--max-json-depth', envValue: '7', flagValue: '8', envParsed: 7, flagParsed: 8 },
  { env: 'IPYTHON_MCP_MAX_TOOL_NAME_CHARS', flag: '--max-tool-name-chars', envValue: '30', flagValue: '40', envParsed: 30, flagParsed: 40 },
  { env: 'IPYTHON_MCP_MAX_TOOL_DESCRIPTION_CHARS', flag: '--max-tool-description-chars', envValue: '300', flagValue: '400', envParsed: 300, flagParsed: 400 },
  { env: 'IPYTHON_MCP_MAX_DYNAMIC_TOOLS', flag: '--max-dynamic-tools', envValue: '11', flagValue: '12', envParsed: 11, flagParsed: 12 },
  { env: 'IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS', flag: '--max-operation-timeout-seconds', envValue: '7200', flagValue: '90.5', envParsed: 7200, flagParsed: 90.5 },
  { env: 'IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS', flag: '--operation-timeout-seconds', envValue: '12.5', flagValue: '0.75', envParsed: 12.5, flagParsed: 0.75 },
  { env: 'IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS', flag: '--interruption-grace-seconds', envValue: '3', flagValue: '4', envParsed: 3, flagParsed: 4 },
  { env: 'IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS', flag: '--worker-startup-timeout-seconds', envValue: '15', flagValue: '16', envParsed: 15, flagParsed: 16 },
  { env: 'IPYTHON_MCP_MAX_PENDING_OPERATIONS', flag: '--max-pending-operations', envValue: '5', flagValue: '6', envParsed: 5, flagParsed: 6 },
  { env: 'IPYTHON_MCP_QUEUE_WAIT_TIMEOUT_SECONDS', flag: '--queue-wait-timeout-seconds', envValue: '1e1', flagValue: '20', envParsed: 10, flagParsed: 20 },
  { env: 'IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES', flag: '--max-ipc-message-bytes', envValue: '1048576', flagValue: '2097152', envParsed: 1048576, flagParsed: 2097152 },
  { env: 'IPYTHON_MCP_MEMORY_LIMIT_MB', flag: '--memory-limit-mb', envValue: '512', flagValue: 'off', envParsed: 512, flagParsed: null },
  { env: 'IPYTHON_MCP_OUTPUT_SPILL_MB', flag: '--output-spill-mb', envValue: '64', flagValue: '0', envParsed: 64, flagParsed: null },
  { env: 'IPYTHON_MCP_MAX_RESULT_TOKENS', flag: '--max-result-tokens', envValue: '40000', flagValue: 'off', envParsed: 40000, flagParsed: null },
  { env: 'IPYTHON_MCP_JOURNAL', flag: '--journal', envValue: '/tmp/from-env.ipynb', flagValue: 'relative/from-flag.ipynb', envParsed: '/tmp/from-env.ipynb', flagParsed: 'relative/from-flag.ipynb' },
  { env: 'IPYTHON_MCP_JOURNAL_MAX_BYTES', flag: '--journal-max-bytes', envValue: '100000', flagValue: '200000', envParsed: 100000, flagParsed: 200000 },
  { env: 'IPYTHON_MCP_STATE_FILE', flag: '--state', envValue: '/tmp/from-env.state', flagValue: 'relative/from-flag.state', envParsed: '/tmp/from-env.state', flagParsed: 'relative/from-flag.state' },
  { env: 'IPYTHON_MCP_STATE_MAX_MB', flag: '--state-max-mb', envValue: '10', flagValue: '20', envParsed: 10, flagParsed: 20 },
  { env: 'IPYTHON_MCP_STATE_SAVE_SECONDS', flag: '--state-save-seconds', envValue: '5', flagValue: '7.5', envParsed: 5, flagParsed: 7.5 },
  { env: 'IPYTHON_MCP_HTTP_MAX_SESSIONS', flag: '--http-max-sessions', envValue: '4', flagValue: '5', envParsed: 4, flagParsed: 5 },
  { env: 'IPYTHON_MCP_MAX_NAMESPACES', flag: '--max-namespaces', envValue: '2', flagValue: '3', envParsed: 2, flagParsed: 3 },
];

/** The environment without any IPYTHON_MCP_* setting the developer may have exported. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('IPYTHON_MCP_')) env[key] = value;
  }
  return { ...env, ...extra };
}

function runCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', timeout: 30_000, input: '' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

let scratch: string;
let marker: string;
let markingPython: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-config-'));
  marker = join(scratch, 'python-was-started');
  markingPython = join(scratch, 'marking-python');
  // A Python that leaves a marker behind whenever anything starts it.
  writeFileSync(markingPython, `#!/bin/sh\necho started >> '${marker}'\nexec '${testPython()}' "$@"\n`);
  chmodSync(markingPython, 0o755);
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('every setting is read from its environment variable and its flag', () => {
  it('has twenty-eight settings, all with defaults', () => {
    const result = runCli(['config'], cleanEnv());
    expect(result.status).toBe(0);
    const effective = JSON.parse(result.stdout);
    expect(Object.keys(effective).sort()).toEqual(SETTINGS.map((setting) => setting.env).sort());
    expect(effective.IPYTHON_MCP_MAX_TEXT_CHARS).toEqual({ value: 8192, source: 'default' });
    expect(effective.IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS).toEqual({ value: 30, source: 'default' });
    expect(effective.IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES).toEqual({ value: 4194304, source: 'default' });
    expect(effective.IPYTHON_MCP_MODULE_ALIASES).toEqual({ value: {}, source: 'default' });
    // Half of physical memory (or of a smaller cgroup limit), in MiB.
    const memoryDefault = effective.IPYTHON_MCP_MEMORY_LIMIT_MB.value;
    expect(Number.isSafeInteger(memoryDefault) && memoryDefault > 0 && memoryDefault <= totalmem() / 2 ** 21).toBe(true);
    expect(effective.IPYTHON_MCP_JOURNAL).toEqual({ value: null, source: 'default' });
    for (const setting of SETTINGS) expect(effective[setting.env].source).toBe('default');
  });

  it('reads every environment variable', () => {
    const env = cleanEnv(Object.fromEntries(SETTINGS.map((setting) => [setting.env, setting.envValue])));
    const result = runCli(['config'], env);
    expect(result.stderr).toBe('');
    const effective = JSON.parse(result.stdout);
    for (const setting of SETTINGS) expect(effective[setting.env], setting.env).toEqual({ value: setting.envParsed, source: 'env' });
  });

  it('lets every flag win over its environment variable', () => {
    const env = cleanEnv(Object.fromEntries(SETTINGS.map((setting) => [setting.env, setting.envValue])));
    const flags = SETTINGS.flatMap((setting, index) => (index % 2 === 0 ? [setting.flag, setting.flagValue] : [`${setting.flag}=${setting.flagValue}`]));
    const result = runCli(['config', ...flags], env);
    expect(result.stderr).toBe('');
    const effective = JSON.parse(result.stdout);
    for (const setting of SETTINGS) expect(effective[setting.env], setting.flag).toEqual({ value: setting.flagParsed, source: 'flag' });
  });

  it('takes 0 and off (any case) as the memory guard turned off', () => {
    for (const value of ['0', 'off', 'OFF', ' Off ']) {
      const result = runCli(['config'], cleanEnv({ IPYTHON_MCP_MEMORY_LIMIT_MB: value }));
      expect(result.status, value).toBe(0);
      expect(JSON.parse(result.stdout).IPYTHON_MCP_MEMORY_LIMIT_MB, value).toEqual({ value: null, source: 'env' });
    }
  });

  it('ignores a bad environment value that a flag overrides', () => {
    const result = runCli(['config', '--max-text-chars', '10'], cleanEnv({ IPYTHON_MCP_MAX_TEXT_CHARS: 'abc' }));
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).IPYTHON_MCP_MAX_TEXT_CHARS).toEqual({ value: 10, source: 'flag' });
  });
});

describe('a bad value stops the server before any worker starts', () => {
  const BAD: { env?: Record<string, string>; args?: string[]; names: string }[] = [
    { env: { IPYTHON_MCP_MAX_TEXT_CHARS: '0' }, names: 'IPYTHON_MCP_MAX_TEXT_CHARS' },
    { env: { IPYTHON_MCP_MAX_RESULTS: '-1' }, names: 'IPYTHON_MCP_MAX_RESULTS' },
    { env: { IPYTHON_MCP_MAX_JSON_DEPTH: 'abc' }, names: 'IPYTHON_MCP_MAX_JSON_DEPTH' },
    { env: { IPYTHON_MCP_MAX_PENDING_OPERATIONS: '1.5' }, names: 'IPYTHON_MCP_MAX_PENDING_OPERATIONS' },
    { env: { IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES: '' }, names: 'IPYTHON_MCP_MAX_IPC_MESSAGE_BYTES' },
    { env: { IPYTHON_MCP_MAX_DISPLAY_ITEMS: '0x10' }, names: 'IPYTHON_MCP_MAX_DISPLAY_ITEMS' },
    { env: { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: 'inf' }, names: 'IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS' },
    { env: { IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: 'Infinity' }, names: 'IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS' },
    { env: { IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS: '0' }, names: 'IPYTHON_MCP_WORKER_STARTUP_TIMEOUT_SECONDS' },
    { env: { IPYTHON_MCP_QUEUE_WAIT_TIMEOUT_SECONDS: '-0.5' }, names: 'IPYTHON_MCP_QUEUE_WAIT_TIMEOUT_SECONDS' },
    { env: { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1e12' }, names: 'IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS' },
    { env: { IPYTHON_MCP_MODULE_ALIASES: '{"numpy": ' }, names: 'IPYTHON_MCP_MODULE_ALIASES' },
    { env: { IPYTHON_MCP_MODULE_ALIASES: '["numpy"]' }, names: 'IPYTHON_MCP_MODULE_ALIASES' },
    { env: { IPYTHON_MCP_MODULE_ALIASES: '{"numpy": "not an identifier"}' }, names: 'IPYTHON_MCP_MODULE_ALIASES' },
    { env: { IPYTHON_MCP_MODULE_ALIASES: '{"json": "In"}' }, names: 'IPYTHON_MCP_MODULE_ALIASES' },
    { env: { IPYTHON_MCP_PRELOAD_MODULES: 'json,os..path' }, names: 'IPYTHON_MCP_PRELOAD_MODULES' },
    { env: { IPYTHON_MCP_MEMORY_LIMIT_MB: '-5' }, names: 'IPYTHON_MCP_MEMORY_LIMIT_MB' },
    { env: { IPYTHON_MCP_MEMORY_LIMIT_MB: '1.5' }, names: 'IPYTHON_MCP_MEMORY_LIMIT_MB' },
    { env: { IPYTHON_MCP_MEMORY_LIMIT_MB: '12GB' }, names: 'IPYTHON_MCP_MEMORY_LIMIT_MB' },
    { env: { IPYTHON_MCP_MEMORY_LIMIT_MB: '' }, names: 'IPYTHON_MCP_MEMORY_LIMIT_MB' },
    { env: { IPYTHON_MCP_MEMORY_LIMIT_MB: '99999999999' }, names: 'IPYTHON_MCP_MEMORY_LIMIT_MB' },
    { args: ['--memory-limit-mb', 'auto'], names: '--memory-limit-mb' },
    { env: { IPYTHON_MCP_JOURNAL: ' ' }, names: 'IPYTHON_MCP_JOURNAL' },
    { env: { IPYTHON_MCP_JOURNAL_MAX_BYTES: '0' }, names: 'IPYTHON_MCP_JOURNAL_MAX_BYTES' },
    { args: ['--max-tool-name-chars', '0'], names: '--max-tool-name-chars' },
    { args: ['--operation-timeout-seconds=inf'], names: '--operation-timeout-seconds' },
    { env: { IPYTHON_MCP_MAX_TEXT_CHARS: '100' }, args: ['--max-text-chars', 'lots'], names: '--max-text-chars' },
  ];

  for (const bad of BAD) {
    const label = [...Object.entries(bad.env ?? {}).map(([key, value]) => `${key}=${value}`), ...(bad.args ?? [])].join(' ');
    it(`refuses ${label}`, () => {
      rmSync(marker, { force: true });
      const result = runCli(bad.args ?? [], cleanEnv({ ...bad.env, IPYTHON_MCP_PYTHON: markingPython }));
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.split('\n').filter((line) => line.length > 0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(bad.names);
      expect(lines[0]).toMatch(/^ipython-mcp: /);
      expect(existsSync(marker)).toBe(false);
    });
  }
});

describe('settings reach the worker', () => {
  let server: TestServer;
  beforeAll(async () => {
    rmSync(marker, { force: true });
    server = await startServer(
      { IPYTHON_MCP_PYTHON: markingPython, IPYTHON_MCP_MAX_TEXT_CHARS: '50', IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '100', IPYTHON_MCP_MAX_RESULTS: '2' },
      ['--max-text-chars', '20', '--operation-timeout-seconds', '1'],
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it('uses the flag value over the environment value in the worker and the supervisor', async () => {
    const printed = await server.structured('execute', { code: 'print("p" * 100)' });
    expect(printed.stdout).toBe(`${'p'.repeat(19)}\n`); // head 5 + tail 15 of the 20-character budget
    expect(printed.stdout_omitted_chars).toBe(81);
    expect((await server.structured('execute', { code: 'list(range(10))' })).result.value).toEqual([0, 1]);
    const started = performance.now();
    const slow = await server.call('execute', { code: 'import time\ntime.sleep(30)' });
    expect((slow.structuredContent as any).error.code).toBe('operation_timeout');
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(existsSync(marker)).toBe(true); // the marking Python really starts workers when settings are good
  });
});

describe('a failing preload', () => {
  let library: string;
  beforeAll(() => {
    library = mkdtempSync(join(tmpdir(), 'ipython-mcp-preload-'));
    writeFileSync(join(library, 'ipymcp_raises_at_import.py'), 'import json\nraise RuntimeError("boom while importing")\n');
  });
  afterAll(() => {
    rmSync(library, { recursive: true, force: true });
  });

  for (const [label, module, reason] of [
    ['a missing module', 'ipymcp_no_such_module', /No module named 'ipymcp_no_such_module'/],
    ['a module that raises', 'ipymcp_raises_at_import', /RuntimeError: boom while importing/],
  ] as const) {
    it(`names ${label} and leaves the runtime unavailable`, async () => {
      const server = await startServer({
        IPYTHON_MCP_LIBRARY_PATHS: library,
        IPYTHON_MCP_PRELOAD_MODULES: `json,${module}`,
        IPYTHON_MCP_MODULE_ALIASES: '{"collections.abc": "cabc"}',
      });
      try {
        let status: Record<string, any> = {};
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline) {
          status = await server.structured('runtime_status');
          if (status.state !== 'starting') break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(status.state).toBe('unavailable');
        expect(status.error).toContain(module);
        expect(status.error).toMatch(reason);
        // The failure names the setting and the fix, and reaches the client as an MCP log message too.
        expect(status.error).toContain('IPYTHON_MCP_PRELOAD_MODULES');
        expect(status.error).toMatch(/Fix: install it into .*python/);
        await expectErrorLogMessage(server, 'IPYTHON_MCP_PRELOAD_MODULES');
        for (const [tool, args] of [
          ['execute', { code: 'cabc' }],
          ['search', { query: 'json' }],
          ['list', {}],
          ['reset', {}],
        ] as const) {
          const result = await server.call(tool, args);
          expect(result.isError, tool).toBe(true);
          const error = (result.structuredContent as any).error;
          expect(error.code, tool).toBe('runtime_unavailable');
          expect(error.message).toContain(module);
          expect(error.message).toContain('Fix: ');
        }
        // no worker, no standby: a worker that answered startup_failed may still be exiting (as in faults.e2e)
        expect(await eventually(() => childPids(server.serverPid).filter(isAlive), (pids) => pids.length === 0, 5_000)).toEqual([]);
        expect((await server.structured('runtime_status')).state).toBe('unavailable');
      } finally {
        await server.close();
      }
    });
  }
});

/** Waits for the server's `notifications/message` at level error, and checks it names `setting` and a fix. */
async function expectErrorLogMessage(server: TestServer, setting: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  const find = () => server.notifications.find((notification) => notification.method === 'notifications/message' && notification.params?.level === 'error');
  while (find() === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const message = find();
  expect(message, JSON.stringify(server.notifications)).toBeDefined();
  expect(String(message?.params?.data)).toContain(setting);
  expect(String(message?.params?.data)).toContain('Fix: ');
}

/** Polls runtime_status until the start-up has settled. */
async function settledStatus(server: TestServer): Promise<Record<string, any>> {
  let status: Record<string, any> = {};
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    status = await server.structured('runtime_status');
    if (status.state !== 'starting') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return status;
}

describe('a start-up failure shows where clients show server problems', () => {
  it('a missing library directory: unavailable, naming IPYTHON_MCP_LIBRARY_PATHS, in the log and every tool error', async () => {
    const missing = join(tmpdir(), 'ipython-mcp-no-such-library-dir');
    const server = await startServer({ IPYTHON_MCP_LIBRARY_PATHS: missing });
    try {
      const status = await settledStatus(server);
      expect(status.state).toBe('unavailable');
      expect(status.error).toContain(missing);
      expect(status.error).toContain('IPYTHON_MCP_LIBRARY_PATHS');
      await expectErrorLogMessage(server, 'IPYTHON_MCP_LIBRARY_PATHS');
      const result = await server.call('execute', { code: '1' });
      expect(result.isError).toBe(true);
      expect((result.structuredContent as any).error.code).toBe('runtime_unavailable');
      expect((result.structuredContent as any).error.message).toContain('Fix: create it, or correct IPYTHON_MCP_LIBRARY_PATHS');
      // no worker was started (or one that failed is already gone)
      expect(await eventually(() => childPids(server.serverPid).filter(isAlive), (pids) => pids.length === 0, 5_000)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a Python without IPython: the log message names IPYTHON_MCP_PYTHON and the fix', async () => {
    const venv = mkdtempSync(join(tmpdir(), 'ipython-mcp-no-ipython-'));
    try {
      expect(spawnSync('python3', ['-m', 'venv', '--without-pip', venv]).status).toBe(0);
      const server = await startServer({ IPYTHON_MCP_PYTHON: join(venv, 'bin', 'python') });
      try {
        expect((await settledStatus(server)).state).toBe('unavailable');
        await expectErrorLogMessage(server, 'IPYTHON_MCP_PYTHON');
        const result = await server.call('list', {});
        expect((result.structuredContent as any).error.message).toContain('ipython-mcp setup');
      } finally {
        await server.close();
      }
    } finally {
      rmSync(venv, { recursive: true, force: true });
    }
  });
});

describe('an interpreter that cannot start is a configuration error', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-badpy-'));
    writeFileSync(join(scratch, 'not-executable'), '#!/bin/sh\n');
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  for (const [label, env, args, names] of [
    ['a missing IPYTHON_MCP_PYTHON', { IPYTHON_MCP_PYTHON: '/nonexistent/python' }, [], 'IPYTHON_MCP_PYTHON=/nonexistent/python does not exist'],
    ['a non-executable IPYTHON_MCP_PYTHON', { IPYTHON_MCP_PYTHON: 'SCRATCH/not-executable' }, [], 'is not an executable file'],
    ['a directory as IPYTHON_MCP_PYTHON', { IPYTHON_MCP_PYTHON: 'SCRATCH' }, [], 'is not an executable file'],
    ['a --python command not on PATH', {}, ['--python', 'ipymcp-no-such-python'], '--python ipymcp-no-such-python: no such command on PATH'],
  ] as const) {
    it(`refuses ${label} with one line and exit code 2`, () => {
      const resolved = Object.fromEntries(Object.entries(env).map(([key, value]) => [key, value.replace('SCRATCH', scratch)]));
      const result = runCli([...args], cleanEnv(resolved));
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.split('\n').filter((line) => line.length > 0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(names);
      expect(lines[0]).toContain('Fix: point IPYTHON_MCP_PYTHON (or --python) at a Python 3.10+');
    });
  }

  it('still lets doctor report the interpreter (doctor is where to look)', () => {
    const result = runCli(['doctor'], cleanEnv({ IPYTHON_MCP_PYTHON: '/nonexistent/python' }));
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('/nonexistent/python');
  });
});
