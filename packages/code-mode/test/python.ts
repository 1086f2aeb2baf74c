import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The Python the tests run kernels with: IPYTHON_MCP_TEST_PYTHON, else the repo's .venv. */
export function testPython(): string {
  const fromEnv = process.env.IPYTHON_MCP_TEST_PYTHON;
  if (fromEnv) return fromEnv;
  const local = `${repoRoot}.venv/bin/python`;
  if (existsSync(local)) return local;
  throw new Error('no test Python: create /work/main/.venv (bash tooling/test.sh) or set IPYTHON_MCP_TEST_PYTHON');
}

/** Whether a process is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until every pid has exited (up to `timeoutMs`), then returns the ones still alive. */
export async function survivors(pids: readonly number[], timeoutMs = 5000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    alive = alive.filter(isAlive);
  }
  return alive;
}
