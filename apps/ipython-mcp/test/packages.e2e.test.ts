// Installing packages from a cell, as an agent does it, through a real MCP client: `%pip install` then `import`,
// `!pip` / `!python` / subprocesses reaching the worker's own environment, `reload` after an upgrade. Two user
// environments (IPYTHON_MCP_PYTHON): one made by `python -m venv` (has pip) and one made by `uv venv` (no pip).
// Wheels are built locally and installed with --no-index: no network.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';
import { buildWheel, makeEnvironment, pathWithoutUv, testUv } from './package-environments.js';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-packages-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const wheels = join(scratch, 'wheels');

async function execute(server: TestServer, code: string): Promise<Record<string, any>> {
  return server.structured('execute', { code });
}

/** What every environment must show: the shell escapes and subprocesses find the worker's own Python first. */
async function expectActivated(server: TestServer, environment: string): Promise<void> {
  const python = join(environment, 'bin', 'python');
  const shell = await execute(server, "!python -c 'import sys; print(sys.executable)'");
  expect(shell.stdout.trim()).toBe(python);
  const subprocess = await execute(server, "import os, subprocess\nsubprocess.run(['python', '-c', 'import sys; print(sys.prefix)'], capture_output=True, text=True).stdout.strip(), os.environ['VIRTUAL_ENV']");
  expect(subprocess.result.value).toEqual([environment, environment]);
}

describe('a venv + pip environment', () => {
  let environment: string;
  let server: TestServer;
  beforeAll(async () => {
    environment = join(scratch, 'venv-pip');
    makeEnvironment(scratch, environment, 'venv');
    server = await startServer({ IPYTHON_MCP_PYTHON: join(environment, 'bin', 'python'), PATH: pathWithoutUv() });
  }, 120_000);
  afterAll(async () => server?.close());

  it('%pip installs a local wheel into the worker environment and a new import works without a restart', async () => {
    const wheel = buildWheel(join(wheels, 'one'), 'mcp_probe_pip', '1.0');
    await execute(server, 'kept = 41');
    const before = await execute(server, 'import mcp_probe_pip');
    expect(before.error).toMatchObject({ type: 'ModuleNotFoundError' });

    const installed = await execute(server, `%pip install --no-index ${wheel}`);
    expect(installed, JSON.stringify(installed)).not.toHaveProperty('status');
    expect(installed.stdout).toMatch(/Successfully installed mcp-probe-pip-1\.0/);
    const imported = await execute(server, 'import mcp_probe_pip\nmcp_probe_pip.__file__, mcp_probe_pip.VERSION, kept + 1');
    expect(imported.result.value).toEqual([expect.stringContaining(join(environment, 'lib')), '1.0', 42]);
  });

  it('an upgrade reaches an already imported module through importlib.reload', async () => {
    const wheel = buildWheel(join(wheels, 'two'), 'mcp_probe_pip', '2.0');
    const upgraded = await execute(server, `%pip install --no-index --upgrade ${wheel}`);
    expect(upgraded.stdout).toMatch(/Successfully installed mcp-probe-pip-2\.0/);
    expect((await execute(server, 'mcp_probe_pip.VERSION')).result.value).toBe('1.0');
    expect((await execute(server, 'import importlib\nimportlib.reload(mcp_probe_pip).VERSION')).result.value).toBe('2.0');
  });

  it('!pip, !python and subprocesses resolve to the worker environment', async () => {
    const pip = await execute(server, '!pip --version');
    expect(pip.stdout).toContain(`from ${join(environment, 'lib')}`);
    await expectActivated(server, environment);
    // `!pip install` goes to the same place, and the import caches are refreshed after it too.
    const wheel = buildWheel(join(wheels, 'three'), 'mcp_probe_bang', '1.0');
    await execute(server, `!pip install --quiet --no-index ${wheel}`);
    expect((await execute(server, 'import mcp_probe_bang\nmcp_probe_bang.VERSION')).result.value).toBe('1.0');
  });

  it('a failed install says why and loses nothing', async () => {
    const failed = await execute(server, '%pip install --no-index mcp-probe-does-not-exist');
    expect(`${failed.stdout ?? ''}${failed.stderr ?? ''}`).toMatch(/No matching distribution found for mcp-probe-does-not-exist/);
    const unparsable = await execute(server, "%pip install 'unclosed");
    expect(unparsable.error).toMatchObject({ type: 'UsageError', message: expect.stringContaining('No closing quotation') });
    expect((await execute(server, 'kept, mcp_probe_pip.VERSION')).result.value).toEqual([41, '2.0']);
  });
});

describe('a uv environment without pip', () => {
  let environment: string;
  let server: TestServer;
  beforeAll(async () => {
    environment = join(scratch, 'uv-no-pip');
    makeEnvironment(scratch, environment, 'uv');
    server = await startServer({
      IPYTHON_MCP_PYTHON: join(environment, 'bin', 'python'),
      PATH: [dirname(testUv()), pathWithoutUv()].join(delimiter),
    });
  }, 120_000);
  afterAll(async () => server?.close());

  it('%pip installs through uv pip --python <the worker interpreter>, then imports', async () => {
    const wheel = buildWheel(join(wheels, 'uv-one'), 'mcp_probe_uv', '1.0');
    expect((await execute(server, 'import importlib.util\nimportlib.util.find_spec("pip") is None')).result.value).toBe(true);
    const installed = await execute(server, `%pip install --no-index ${wheel}`);
    expect(installed, JSON.stringify(installed)).not.toHaveProperty('status');
    expect(`${installed.stdout ?? ''}${installed.stderr ?? ''}`).toMatch(/^ \+ mcp-probe-uv==1\.0 \(from file:/m);
    expect(`${installed.stdout ?? ''}${installed.stderr ?? ''}`).not.toContain('\u001b['); // no colour codes or spinners for the model to read
    const imported = await execute(server, 'import mcp_probe_uv\nmcp_probe_uv.__file__.startswith(__import__("sys").prefix), mcp_probe_uv.VERSION');
    expect(imported.result.value).toEqual([true, '1.0']);
    const listed = await execute(server, '%pip list');
    expect(`${listed.stdout ?? ''}${listed.stderr ?? ''}`).toMatch(/mcp-probe-uv\s+1\.0/);
  });

  it('!pip is a shim that installs into the worker environment, not a pip further down PATH', async () => {
    const wheel = buildWheel(join(wheels, 'uv-two'), 'mcp_probe_uv_bang', '1.0');
    const installed = await execute(server, `!pip install --no-index ${wheel}`);
    expect(`${installed.stdout ?? ''}${installed.stderr ?? ''}`).toMatch(/\+ mcp-probe-uv-bang==1\.0/);
    expect((await execute(server, 'import mcp_probe_uv_bang\nmcp_probe_uv_bang.VERSION')).result.value).toBe('1.0');
    await expectActivated(server, environment);
  });

  it('!pip --version, !pip -V and %pip --version say what the stand-in is and which Python it installs into', async () => {
    const python = join(environment, 'bin', 'python');
    for (const code of ['!pip --version', '!pip -V', '!pip3 --version', '%pip --version']) {
      const answered = await execute(server, `${code}\nprint("exit", _exit_code if "${code}".startswith("!") else 0)`);
      expect(answered, code).not.toHaveProperty('status');
      expect(answered.stdout, code).toContain(`pip stand-in, installs into ${python} with`);
      expect(answered.stdout, code).toContain('exit 0');
      expect(`${answered.stdout}${answered.stderr ?? ''}`, code).not.toMatch(/unexpected argument/);
    }
  });

  it('without uv, %pip and !pip both say how to add packages and nothing is lost', async () => {
    const bare = await startServer({ IPYTHON_MCP_PYTHON: join(environment, 'bin', 'python'), PATH: pathWithoutUv() });
    try {
      await execute(bare, 'kept = 7');
      const magic = await execute(bare, '%pip install pandas');
      expect(magic.status).toBe('error');
      expect(magic.error).toMatchObject({ type: 'UsageError' });
      expect(magic.error.message).toContain(`the worker's Python (${join(environment, 'bin', 'python')}) has no pip and uv is not on PATH`);
      expect(magic.error.message).toContain('ipython-mcp setup --with PACKAGE');
      const bang = await execute(bare, '!pip install pandas\nprint("exit", _exit_code)');
      expect(bang.stdout).toContain('has no pip and uv is not on PATH');
      expect(bang.stdout).toMatch(/exit [1-9]/);
      const version = await execute(bare, '!pip --version');
      expect(version.stdout).toContain('cannot install (uv is not on PATH)');
      expect((await execute(bare, 'kept, mcp_probe_uv.VERSION if "mcp_probe_uv" in dir() else "fresh"')).result.value).toEqual([7, 'fresh']);
    } finally {
      await bare.close();
    }
  });
});
