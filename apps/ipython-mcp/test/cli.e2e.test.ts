// The command line as a user meets it: --version, --help, doctor (failing and passing) and setup (a real
// managed environment built from PyPI in a temporary IPYTHON_MCP_HOME).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SETTING_DEFINITIONS } from '@ipython-mcp/mcp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startServer, testPython } from './harness.js';
import { docsBlock } from './fixtures/docs-blocks.js';
import { runBounded } from './fixtures/processes.js';

const packageVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The environment without any interpreter choice inherited from the developer's shell. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of Object.keys(env)) {
    if (key.startsWith('IPYTHON_MCP_') && !(key in extra)) delete env[key];
  }
  return env;
}

function cli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000) {
  return runBounded(process.execPath, [CLI, ...args], { env, timeoutMs });
}

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('--version and --help', () => {
  it('prints the package version and exits 0', async () => {
    for (const flag of ['--version', '-v']) {
      const result = await cli([flag], cleanEnv());
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${packageVersion}\n`);
    }
  });

  it('lists every setting with its flag, environment variable and default', async () => {
    const result = await cli(['--help'], cleanEnv());
    expect(result.code).toBe(0);
    for (const definition of SETTING_DEFINITIONS) {
      expect(result.stdout).toContain(definition.flag);
      expect(result.stdout).toContain(definition.env);
      expect(result.stdout).toContain(`Default: ${JSON.stringify(definition.defaultValue)}`);
    }
    for (const word of ['--python', 'IPYTHON_MCP_PYTHON', '--log-level', 'IPYTHON_MCP_LOG_LEVEL', 'setup', 'doctor']) {
      expect(result.stdout).toContain(word);
    }
  });

  it('gives each flag its value placeholder, names IPYTHON_MCP_HOME, shows two examples and where the docs are', async () => {
    const { stdout } = await cli(['--help'], cleanEnv());
    for (const definition of SETTING_DEFINITIONS) {
      expect(stdout).toMatch(new RegExp(`${definition.flag} (N|SECONDS|MB|FILE|JSON|DIR\\[:DIR\\.\\.\\.\\]|MOD\\[,MOD\\.\\.\\.\\]) `));
    }
    expect(stdout).toContain('--python PATH');
    expect(stdout).toContain('--with PKG[,PKG...]');
    expect(stdout).toMatch(/IPYTHON_MCP_HOME .*managed environment/);
    const examples = stdout.split('Examples:\n')[1]?.split('\n\n')[0]?.split('\n') ?? [];
    expect(examples).toHaveLength(2);
    const docs = /Docs: (\S+README\.md);/.exec(stdout)?.[1];
    expect(docs && existsSync(docs)).toBe(true);
    expect(stdout).toContain('docs/clients.md');
  });
});

describe('doctor', () => {
  let barePython: string;
  beforeAll(async () => {
    // A real interpreter with nothing installed: what a user gets from a fresh `python3 -m venv`.
    const bare = join(scratch, 'bare-venv');
    const made = await runBounded('python3', ['-m', 'venv', '--without-pip', bare], { timeoutMs: 60_000 });
    expect(made.code, made.stderr).toBe(0);
    barePython = join(bare, 'bin', 'python');
  });

  it('fails with a helpful line and a non-zero exit when the Python has no IPython', async () => {
    const result = await cli(['doctor'], cleanEnv({ IPYTHON_MCP_PYTHON: barePython }));
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^ok {3}python: ${barePython} \\(env\\), Python 3\\.\\d+\\.\\d+$`));
    const ipython = lines.find((line) => line.includes('ipython:'));
    expect(ipython).toBe(
      `FAIL ipython: not importable with ${barePython} (ModuleNotFoundError: No module named 'IPython'). ` +
        `Fix: \`${barePython} -m pip install "ipython>=8.12"\`, or run \`ipython-mcp setup\` (managed environment), ` +
        'or point --python / IPYTHON_MCP_PYTHON at a Python that has IPython.',
    );
    expect(lines.find((line) => line.startsWith('warn msgpack:'))).toContain('the JSON codec will be used');
    expect(lines.at(-1)).toBe('doctor: 1 check(s) failed');
  });

  it('--python wins over IPYTHON_MCP_PYTHON and a missing interpreter is named', async () => {
    const missing = join(scratch, 'no-such-python');
    const result = await cli(['doctor', '--python', missing], cleanEnv({ IPYTHON_MCP_PYTHON: testPython() }));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`FAIL python: ${missing} (flag) cannot run: not found: ${missing}. Fix:`);
  });

  it('checks library paths and preload imports in a clean process', async () => {
    const result = await cli(
      ['doctor', '--preload-modules', 'json,no_such_module_for_doctor', '--library-paths', join(scratch, 'missing-library')],
      cleanEnv({ IPYTHON_MCP_PYTHON: testPython() }),
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`FAIL library path: ${join(scratch, 'missing-library')} is not a directory. Fix:`);
    expect(result.stdout).toContain('ok   preload: json imports\n');
    expect(result.stdout).toContain(
      "FAIL preload: no_such_module_for_doctor fails in a clean process: ModuleNotFoundError: No module named 'no_such_module_for_doctor'. Fix:",
    );
    expect(result.stdout.trim().split('\n').at(-1)).toBe('doctor: 2 check(s) failed');
  });

  it('passes with the test environment', async () => {
    const result = await cli(['doctor'], cleanEnv({ IPYTHON_MCP_PYTHON: testPython() }));
    expect(result.stdout).toMatch(/^ok {3}ipython: \d+\.\d+/m);
    expect(result.stdout).toMatch(/^ok {3}msgpack: \d/m);
    expect(result.stdout).toMatch(/^ok {3}worker: .*\/dist\/python imports$/m);
    expect(result.stdout).not.toContain('FAIL');
    expect(result.stdout.trim().split('\n').at(-1)).toBe('doctor: all required checks passed');
    expect(result.code).toBe(0);
  });
});

describe('setup', () => {
  it('creates the managed environment in IPYTHON_MCP_HOME, which the server and doctor then use', async () => {
    const home = join(scratch, 'home');
    // An empty IPYTHON_MCP_PYTHON (as some client configs leave it) counts as unset.
    const env = cleanEnv({ IPYTHON_MCP_HOME: home, IPYTHON_MCP_PYTHON: '' });
    // uv is used when it is on PATH; this machine's PATH decides which branch runs (the output says which).
    const created = await cli(['setup'], env, 480_000);
    expect(created.code, created.stderr).toBe(0);
    const venv = join(home, 'venv');
    expect(created.stderr).toMatch(new RegExp(`creating ${venv} with (uv|venv \\+ pip)`));
    // Not silent while the installer works: a line per step, then the installer's own progress (plain lines
    // here, since stderr is not a terminal).
    expect(created.stderr).toContain('ipython-mcp: creating the virtual environment');
    expect(created.stderr).toContain('ipython-mcp: installing ipython>=8.12, msgpack>=1.0');
    expect(created.stderr).toMatch(/Collecting ipython|Successfully installed|Installed \d+ packages|Resolved \d+ packages/);
    expect(created.stdout).toMatch(
      new RegExp(`^ipython-mcp: managed Python environment is ready at ${venv} \\(python: ${venv}/bin/python; IPython, msgpack, dill: \\d+\\.\\d+\\S* \\d+\\.\\d+\\S* \\d+\\.\\d+\\S*\\)\\n$`),
    );
    expect(existsSync(join(venv, 'bin', 'python'))).toBe(true);

    // Without --python or IPYTHON_MCP_PYTHON, the managed environment is the interpreter, and it passes doctor.
    const doctor = await cli(['doctor'], env);
    expect(doctor.stdout).toContain(`ok   python: ${venv}/bin/python (managed), Python 3.`);
    expect(doctor.code, doctor.stdout).toBe(0);

    // The server picks it up the same way and runs a worker from it.
    const server = await startServer({ IPYTHON_MCP_PYTHON: '', IPYTHON_MCP_HOME: home });
    try {
      const executed = await server.structured('execute', { code: 'import sys\nsys.executable' });
      expect(executed.result).toEqual({ value: join(venv, 'bin', 'python') });
      expect(await server.structured('runtime_status')).toMatchObject({ state: 'ready', codec: 'msgpack' });
    } finally {
      await server.close();
    }

    // A second run is idempotent and fast: nothing to install.
    const again = await cli(['setup'], env, 60_000);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toContain(`managed Python environment is ready at ${venv}`);
  }, 600_000);
});

describe("IPython's own directory", () => {
  it('lives in ipython-mcp\'s home: the worker writes nothing into ~/.ipython', async () => {
    const home = join(scratch, 'user-home');
    // Empty XDG_DATA_HOME and IPYTHON_MCP_HOME count as unset; an IPYTHONDIR of the user's own is overridden.
    const server = await startServer({ HOME: home, XDG_DATA_HOME: '', IPYTHON_MCP_HOME: '', IPYTHONDIR: join(home, '.ipython') });
    try {
      const executed = await server.structured('execute', { code: 'get_ipython().ipython_dir' });
      expect(JSON.stringify(executed.result)).toContain(JSON.stringify(join(home, '.local', 'share', 'ipython-mcp', 'ipython')));
    } finally {
      await server.close();
    }
    expect(existsSync(join(home, '.local', 'share', 'ipython-mcp', 'ipython'))).toBe(true);
    expect(existsSync(join(home, '.ipython'))).toBe(false);

    // docs/clients.md's one line that removes everything ipython-mcp made (the last of its uninstall block).
    const removeAll = docsBlock('uninstall').split('\n').at(-1)!;
    const env = cleanEnv({ HOME: home });
    delete env.XDG_DATA_HOME;
    const removed = await runBounded('bash', ['-euc', removeAll], { env, timeoutMs: 30_000 });
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(join(home, '.local', 'share', 'ipython-mcp'))).toBe(false);
  });
});
