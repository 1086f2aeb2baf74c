// README command 1, `bash tooling/serve.sh`, as a user meets it on a checkout that is already set up: one set-up
// line and the server's one-line banner on stderr, nothing on stdout but MCP, no "update available" advice; and
// on a failing set-up, the set-up's own output after all.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testPython } from './harness.js';
import { REPO_ROOT, runBounded } from './fixtures/processes.js';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-serve-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The user's environment: no CI flag (which forces a fresh `pnpm install`), no inherited interpreter choice. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.CI;
  for (const key of Object.keys(env)) if (key.startsWith('IPYTHON_MCP_') && !(key in extra)) delete env[key];
  return env;
}

describe('tooling/serve.sh', () => {
  it('prints one set-up line and the ready banner, then serves (the set-up output stays in its log)', async () => {
    // A managed environment that is already there (the test environment has IPython and msgpack), so `setup`
    // inside the bootstrap has nothing to install.
    const home = join(scratch, 'home');
    mkdirSync(home);
    symlinkSync(join(testPython(), '..', '..'), join(home, 'venv'));
    const result = await runBounded('bash', [join(REPO_ROOT, 'tooling', 'serve.sh')], { env: userEnv({ IPYTHON_MCP_HOME: home }), timeoutMs: 300_000 });
    expect(result.timedOut).toBe(false);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n').filter((line) => line.length > 0);
    expect(lines, result.stderr).toHaveLength(2);
    expect(lines[0]).toMatch(/^ipython-mcp: setting up the checkout .*log: .*bootstrap\.log\)$/);
    expect(lines[1]).toMatch(/^ipython-mcp \S+ ready on stdio/);
    expect(result.stderr).not.toMatch(/update available/i);
  }, 320_000);

  it('shows the set-up output and exits non-zero when the set-up fails', async () => {
    // A managed-environment home that cannot be created: `ipython-mcp setup` inside the bootstrap fails.
    const result = await runBounded('bash', [join(REPO_ROOT, 'tooling', 'serve.sh')], {
      env: userEnv({ IPYTHON_MCP_HOME: '/dev/null/ipython-mcp-home' }),
      timeoutMs: 300_000,
    });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('ipython-mcp: set-up failed; its output follows');
    expect(result.stderr).toContain('bootstrap: building');
    expect(result.stderr).not.toContain('ready on stdio');
  }, 320_000);
});
