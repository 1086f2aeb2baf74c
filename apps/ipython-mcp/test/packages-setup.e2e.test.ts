// `ipython-mcp setup --with`: packages added to the managed environment, as a user runs it, then used from a
// cell through a real MCP client. One managed environment made with venv + pip (borrowing IPython offline) and
// one that setup itself creates with uv (IPython from PyPI, as a new user gets it); the --with wheels are local.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, startServer } from './harness.js';
import { runBounded } from './fixtures/processes.js';
import { buildWheel, makeEnvironment, mustRun, pathWithoutUv, testUv } from './package-environments.js';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-packages-setup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const wheels = join(scratch, 'wheels');

/** The user's environment for a command: a managed home, no interpreter choice, and the given PATH. */
function userEnv(home: string, path: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, IPYTHON_MCP_HOME: home, IPYTHON_MCP_PYTHON: '', PATH: path };
  for (const key of Object.keys(env)) if (key.startsWith('IPYTHON_MCP_') && !['IPYTHON_MCP_HOME', 'IPYTHON_MCP_PYTHON'].includes(key)) delete env[key];
  return env;
}

function cli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000) {
  return runBounded(process.execPath, [CLI, ...args], { env, timeoutMs });
}

describe('setup --with on a ready venv + pip environment', () => {
  const home = join(scratch, 'home-pip');
  const venv = join(home, 'venv');
  const python = join(venv, 'bin', 'python');

  it('installs each --with package (repeatable, comma lists, wheel paths) with visible progress', async () => {
    makeEnvironment(scratch, venv, 'venv');
    const first = buildWheel(join(wheels, 'a'), 'mcp_setup_a');
    const second = buildWheel(join(wheels, 'b'), 'mcp_setup_b');
    const third = buildWheel(join(wheels, 'c'), 'mcp_setup_c');
    const env = userEnv(home, pathWithoutUv());
    const result = await cli(['setup', '--with', `${first},${second}`, '--with', third], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`ipython-mcp: installing ${first}, ${second}, ${third} into ${venv} with pip\n`);
    expect(result.stderr).toMatch(/Successfully installed mcp-setup-a-1\.0 mcp-setup-b-1\.0 mcp-setup-c-1\.0/);
    expect(result.stdout).toMatch(new RegExp(`^ipython-mcp: managed Python environment is ready at ${venv} \\(python: ${python}; IPython, msgpack, dill: \\S+ \\S+ \\S+; added: .*mcp_setup_c-1\\.0-py3-none-any\\.whl\\)\\n$`));
    expect(mustRun(python, ['-c', 'import mcp_setup_a, mcp_setup_b, mcp_setup_c; print("ok")']).trim()).toBe('ok');

    const doctor = await cli(['doctor'], env);
    expect(doctor.stdout).toContain(`ok   environment: ${venv} (virtual environment; interpreter ${python})\n`);
    expect(doctor.stdout).toMatch(new RegExp(`^ok {3}packages: %pip install works, through its pip: pip \\S+ from ${venv}/lib/`, 'm'));
    expect(doctor.code, doctor.stdout).toBe(0);

    const server = await startServer({ IPYTHON_MCP_PYTHON: '', IPYTHON_MCP_HOME: home, PATH: pathWithoutUv() });
    try {
      const imported = await server.structured('execute', { code: 'import mcp_setup_c, sys\nmcp_setup_c.VERSION, sys.executable' });
      expect(imported.result.value).toEqual(['1.0', python]);
    } finally {
      await server.close();
    }
  });

  it('a package that cannot be installed fails with exit code 1 and leaves the environment ready', async () => {
    const env = userEnv(home, pathWithoutUv());
    const failed = await cli(['setup', '--with', join(scratch, 'no-such-1.0-py3-none-any.whl')], env);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain('no-such-1.0-py3-none-any.whl failed (see the output above)');
    const again = await cli(['setup'], env);
    expect(again.code).toBe(0);
    expect(mustRun(python, ['-c', 'import mcp_setup_a; print("still")']).trim()).toBe('still');
  });

  it('--with is a usage error without package names or on another command', async () => {
    const env = userEnv(home, pathWithoutUv());
    const empty = await cli(['setup', '--with', ' , '], env);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--with needs package names');
    const elsewhere = await cli(['doctor', '--with', 'pandas'], env);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('--with only applies to `ipython-mcp setup`');
  });
});

describe('setup with uv on PATH', () => {
  it('creates an environment with pip seeded, so %pip, !pip and !python all reach it', async () => {
    const home = join(scratch, 'home-uv');
    const venv = join(home, 'venv');
    const python = join(venv, 'bin', 'python');
    const path = [dirname(testUv()), pathWithoutUv()].join(delimiter);
    const env = userEnv(home, path);
    const wheel = buildWheel(join(wheels, 'uv'), 'mcp_setup_uv');
    const created = await cli(['setup', '--with', wheel], env, 480_000);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`creating ${venv} with uv (installs ipython>=8.12, msgpack>=1.0, dill>=0.3.8, ${wheel} from PyPI)`);
    expect(created.stdout).toContain(`; added: ${wheel})`);

    const doctor = await cli(['doctor'], env);
    expect(doctor.stdout).toMatch(new RegExp(`^ok {3}packages: %pip install works, through its pip: pip \\S+ from ${venv}/lib/`, 'm'));

    const server = await startServer({ IPYTHON_MCP_PYTHON: '', IPYTHON_MCP_HOME: home, PATH: path });
    try {
      const call = async (code: string) => server.structured('execute', { code });
      expect((await call('import mcp_setup_uv\nmcp_setup_uv.VERSION')).result.value).toBe('1.0');
      expect((await call('!pip --version')).stdout).toContain(`from ${venv}/lib/`);
      expect((await call("!python -c 'import sys; print(sys.executable)'")).stdout.trim()).toBe(python);
      const later = buildWheel(join(wheels, 'uv-later'), 'mcp_setup_uv_later');
      const installed = await call(`%pip install --no-index ${later}`);
      expect(installed.stdout).toMatch(/Successfully installed mcp-setup-uv-later-1\.0/);
      expect((await call('import mcp_setup_uv_later\nmcp_setup_uv_later.VERSION')).result.value).toBe('1.0');
    } finally {
      await server.close();
    }
  }, 600_000);
});
