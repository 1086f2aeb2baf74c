// A client that sends `initialize` and goes away while the worker is still starting: the server exits 0, leaves no
// process behind and logs no error (issue "A client that disconnects during worker start-up gets a false error in
// the log"). The client is a raw stdio pipe, so stdin can close at any moment of the start-up.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CLI, childPids, eventually, processGroupMembers, survivors, taggedProcesses, testPython } from './harness.js';

const TAG = randomUUID();
const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'disconnecting-client', version: '0' } },
})}\n`;

interface Moment {
  name: string;
  /** Resolves when stdin should close. */
  wait: (probe: { stdout: () => string; stderr: () => string; workers: () => number[] }) => Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const until = async (condition: () => boolean, ms = 20_000): Promise<void> => {
  expect(await eventually(condition, (value) => value, ms)).toBe(true);
};

const MOMENTS: Moment[] = [
  { name: 'right after initialize is written (before the worker exists)', wait: async () => undefined },
  { name: 'after the initialize answer', wait: ({ stdout }) => until(() => stdout().includes('"id":1')) },
  { name: 'as soon as the worker process exists (before its handshake)', wait: ({ workers }) => until(() => workers().length > 0) },
  ...[100, 250, 500].map((ms) => ({
    name: `${ms} ms after the worker process appeared (during the handshake)`,
    wait: async ({ workers }: { workers: () => number[] }) => {
      await until(() => workers().length > 0);
      await sleep(ms);
    },
  })),
  { name: 'just after the worker is ready', wait: ({ stderr }) => until(() => stderr().includes('"event":"worker.ready"')) },
];

describe('a client that disconnects during worker start-up', () => {
  it.each(MOMENTS.map((moment) => [moment.name, moment] as const))('stdin closed %s: exit 0, nothing left, no error logged', async (_name, moment) => {
    const server = spawn(process.execPath, [CLI, '--log-level', 'debug'], {
      env: { ...process.env, IPYTHON_MCP_PYTHON: testPython(), IPYTHON_MCP_TEST_RUN_TAG: TAG },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    server.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const seen = new Set<number>();
    const workers = (): number[] => {
      const now = childPids(server.pid!);
      for (const pid of now) for (const member of [pid, ...processGroupMembers(pid)]) seen.add(member);
      return now;
    };
    try {
      server.stdin.write(INITIALIZE);
      await moment.wait({ stdout: () => stdout, stderr: () => stderr, workers });
      workers();
      server.stdin.end();
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(await survivors([...seen], 5_000)).toEqual([]);
      expect(await eventually(() => taggedProcesses(TAG), (pids) => pids.length === 0, 5_000)).toEqual([]);
      const logLines = stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: string; event: string });
      expect(logLines.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
      expect(logLines.filter((line) => line.event === 'runtime.unavailable')).toEqual([]);
      expect(logLines.filter((line) => line.event === 'runtime.startup_abandoned').length).toBeLessThanOrEqual(1);
      expect(stderr).not.toMatch(/fatal|Unhandled|protocol mismatch/);
      expect(stdout).toContain('"id":1'); // the initialize answer went out before the close
    } finally {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    }
  });
});
