// The opt-in sandbox through a real SDK client: every escape below fails inside --sandbox with a Python
// error and the namespace kept, and the very same cell succeeds without --sandbox (so each test can fail).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, childPids, eventually, startServer, survivors, testPython, type TestServer } from './harness.js';

/** A HOME of the test's own, with a fake SSH key in it. */
const home = mkdtempSync(join(tmpdir(), 'ipython-mcp-sandbox-home-'));
const KEY = 'FAKE-PRIVATE-KEY-FOR-THE-SANDBOX-TEST';
mkdirSync(join(home, '.ssh'), { recursive: true });
writeFileSync(join(home, '.ssh', 'id_ed25519'), KEY);
/** Files outside the allowed set that a cell tries to create. */
const outsideTmp = mkdtempSync(join(tmpdir(), 'ipython-mcp-sandbox-outside-'));

let tcp: TcpServer;
let tcpPort = 0;
/** Stand-ins for an allowed and a denied domain: two loopback addresses, so no traffic leaves the machine. */
const ALLOWED = '127.0.0.2';
const DENIED = '127.0.0.3';
let http: HttpServer[] = [];
let httpPort = 0;

beforeAll(async () => {
  tcp = createTcpServer((socket) => socket.end());
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  tcpPort = (tcp.address() as { port: number }).port;
  const first = createHttpServer((_request, response) => response.end('stand-in'));
  await new Promise<void>((resolve) => first.listen(0, ALLOWED, resolve));
  httpPort = (first.address() as { port: number }).port;
  const second = createHttpServer((_request, response) => response.end('stand-in'));
  await new Promise<void>((resolve) => second.listen(httpPort, DENIED, resolve));
  http = [first, second];
});

afterAll(async () => {
  tcp.close();
  for (const server of http) server.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(outsideTmp, { recursive: true, force: true });
});

// HTTP(S)_PROXY from the test's own environment must not decide the unsandboxed runs.
const ENV = { HOME: home, http_proxy: '', https_proxy: '', HTTP_PROXY: '', HTTPS_PROXY: '', no_proxy: '', NO_PROXY: '' };

/** One escape: a cell that raises unless it got out. */
interface Escape {
  name: string;
  code: () => string;
  /** What the Python error inside the sandbox looks like (its type). */
  error: RegExp;
}

const readKey = `open(${JSON.stringify(join(home, '.ssh', 'id_ed25519'))}).read()`;
const keyPath = join(home, '.ssh', 'id_ed25519');

const ESCAPES: Escape[] = [
  { name: 'TCP connect to a listener on 127.0.0.1 outside', code: () => `import socket\nsocket.create_connection(("127.0.0.1", ${tcpPort}), timeout=5).close()`, error: /ConnectionRefusedError|OSError|PermissionError/ },
  { name: 'DNS lookup', code: () => 'import socket\nsocket.getaddrinfo("pypi.org", 443)', error: /gaierror/ },
  {
    name: 'urllib to a domain that is not allowed',
    code: () => `import urllib.request\nurllib.request.urlopen("http://${DENIED}:${httpPort}/", timeout=10).read()`,
    error: /HTTPError|URLError|RemoteDisconnected|OSError/,
  },
  { name: 'write to $HOME', code: () => `open(${JSON.stringify(join(home, 'escaped.txt'))}, "w").write("x")`, error: /OSError|PermissionError/ },
  { name: 'write to /tmp outside the allowed set', code: () => `open(${JSON.stringify(join(outsideTmp, 'escaped.txt'))}, "w").write("x")`, error: /OSError|PermissionError/ },
  { name: 'read ~/.ssh/id_ed25519', code: () => `assert ${readKey} == ${JSON.stringify(KEY)}`, error: /FileNotFoundError|PermissionError|AssertionError|OSError/ },
  {
    name: 'read the key through os.system',
    code: () => `import os\nstatus = os.system("grep -q ${KEY} ${keyPath}")\nif status != 0: raise RuntimeError(f"os.system exit status {status}")`,
    error: /RuntimeError/,
  },
  {
    name: 'read the key through subprocess',
    code: () => `import subprocess\nsubprocess.run(["grep", "-q", ${JSON.stringify(KEY)}, ${JSON.stringify(keyPath)}], check=True)`,
    error: /CalledProcessError/,
  },
  {
    name: 'read the key through a ! escape',
    code: () => `!grep -q ${KEY} ${keyPath}\nif _exit_code != 0: raise RuntimeError(f"! exit status {_exit_code}")`,
    error: /RuntimeError/,
  },
  {
    name: 'write $HOME through a ! escape',
    code: () => `!touch ${join(home, 'escaped-by-shell.txt')}\nif _exit_code != 0: raise RuntimeError(f"! exit status {_exit_code}")`,
    error: /RuntimeError/,
  },
  {
    // The write after the unshare fails; the unshare itself succeeds inside sandbox-runtime 0.0.78 (see the test
    // "a new user namespace can be made" below for why, and what would forbid it).
    name: 'ctypes unshare (new user and mount namespace), then write $HOME',
    code: () =>
      [
        'import subprocess, sys',
        'child = r"""',
        'import ctypes, os',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'if libc.unshare(0x10000000 | 0x00020000) != 0:',
        '    raise OSError(ctypes.get_errno(), "unshare")',
        `open(${JSON.stringify(join(home, 'escaped-after-unshare.txt'))}, "w").write("x")`,
        '"""',
        'subprocess.run([sys.executable, "-c", child], check=True, capture_output=True)',
      ].join('\n'),
    error: /CalledProcessError/,
  },
  { name: "signal the server's pid", code: () => `import os\nos.kill(__SERVER_PID__, 0)`, error: /ProcessLookupError|PermissionError/ },
];

function cell(escape: Escape, server: TestServer): string {
  return escape.code().replace('__SERVER_PID__', String(server.serverPid));
}

describe.each([
  { sandboxed: true, args: ['--sandbox'] },
  { sandboxed: false, args: [] as string[] },
])("the server's own files work with sandboxed=$sandboxed", ({ sandboxed, args }) => {
  // The worker writes the output spill (a truncated stream's whole text) and the --state snapshot itself: both must
  // be writable inside the sandbox, which otherwise allows writes only under the cwd and its own directories.
  const stateDirectory = mkdtempSync(join(tmpdir(), 'ipython-mcp-sandbox-state-'));
  const stateFile = join(stateDirectory, 'namespace.state');
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(ENV, [...args, '--state', stateFile]);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    rmSync(stateDirectory, { recursive: true, force: true });
  });

  it('a truncated stream is spilled, and a later cell reads the whole of it', async () => {
    const out = await server.structured('execute', { code: "print('s' * 100_000); print('END-OF-LOG')" });
    expect(out.stdout.endsWith('END-OF-LOG\n')).toBe(true);
    expect(typeof out.stdout_spill, JSON.stringify(out).slice(0, 400)).toBe('string');
    expect(out.stdout_spill.startsWith(stateDirectory)).toBe(false);
    const read = await server.structured('execute', { code: `text = open(${JSON.stringify(out.stdout_spill)}).read()\n(len(text), text[-11:])` });
    expect(read.result?.value, JSON.stringify(read.error)).toEqual([100_012, 'END-OF-LOG\n']);
  });

  it('%ipython_mcp_save writes the snapshot beside --state', async () => {
    const saved = await server.structured('execute', { code: 'snapshot_me = 42\n%ipython_mcp_save' });
    expect(saved.error, JSON.stringify(saved).slice(0, 600)).toBeUndefined();
    expect(existsSync(stateFile)).toBe(true);
  });
});

describe.each([
  { sandboxed: true, args: ['--sandbox', '--sandbox-allow-domain', ALLOWED] },
  { sandboxed: false, args: [] as string[] },
])('escapes with sandboxed=$sandboxed', ({ sandboxed, args }) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(ENV, args);
    await server.structured('execute', { code: 'kept = 41 + 1' });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('runtime_status says whether the sandbox is on', async () => {
    const status = await server.structured('runtime_status');
    if (sandboxed) {
      expect(status.sandbox).toMatchObject({ engine: expect.stringContaining('@anthropic-ai/sandbox-runtime'), network: [ALLOWED] });
      expect(status.sandbox.writes).toContain(process.cwd());
    } else {
      expect(status).not.toHaveProperty('sandbox');
    }
  });

  it('urllib to an allowed domain works', async () => {
    const result = await server.structured('execute', { code: `import urllib.request\nurllib.request.urlopen("http://${ALLOWED}:${httpPort}/", timeout=10).read().decode()` });
    expect(result.result?.value, JSON.stringify(result.error)).toBe('stand-in');
  });

  // A known limit of the pinned engine, held here so that it is seen to change. sandbox-runtime 0.0.78 cannot forbid
  // new user namespaces: its seccomp helper (apply-seccomp) makes a nested user namespace of its own and its filter
  // blocks only socket(AF_UNIX); the bwrap arguments it builds are fixed (no --disable-userns, which would also stop
  // the helper's own namespace), and no option of its configuration changes either. 0.0.80 refuses them by default
  // (a seccomp refusal and user.max_user_namespaces = 0 in the helper's namespace), but needs Node 22.12. When the
  // engine is upgraded this test fails inside: then make the unshare escape above expect the failure itself.
  it('a new user namespace can be made, inside the sandbox too (engine 0.0.78)', async () => {
    const code = [
      'import subprocess, sys',
      'child = "import ctypes; libc = ctypes.CDLL(None, use_errno=True); print(libc.unshare(0x10000000), ctypes.get_errno())"',
      'subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout.split()',
    ].join('\n');
    const result = await server.structured('execute', { code });
    expect(result.result?.value, JSON.stringify(result.error)).toEqual(['0', '0']);
  });

  it.each(ESCAPES)('$name', async (escape) => {
    const result = await server.call('execute', { code: cell(escape, server) });
    const body = result.structuredContent as Record<string, any>;
    if (sandboxed) {
      expect(result.isError, JSON.stringify(body).slice(0, 400)).toBe(true);
      expect(body.error).toMatchObject({ kind: 'exception' });
      expect(body.error.type).toMatch(escape.error);
    } else {
      expect(result.isError, JSON.stringify(body.error ?? {}).slice(0, 600)).not.toBe(true);
    }
    expect((await server.structured('execute', { code: 'kept' })).result.value).toBe(42);
  });

  it('nothing was written outside the allowed set', () => {
    for (const name of ['escaped.txt', 'escaped-by-shell.txt', 'escaped-after-unshare.txt']) {
      expect(existsSync(join(home, name))).toBe(!sandboxed);
    }
    expect(existsSync(join(outsideTmp, 'escaped.txt'))).toBe(!sandboxed);
  });

  it('writes under the working directory work', async () => {
    const path = join(process.cwd(), `.sandbox-write-${sandboxed ? 'in' : 'out'}-${process.pid}.txt`);
    try {
      const result = await server.structured('execute', { code: `open(${JSON.stringify(path)}, "w").write("ok")` });
      expect(result.result?.value, JSON.stringify(result.error)).toBe(2);
    } finally {
      rmSync(path, { force: true });
    }
  });
});

function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of childPids(queue.pop()!)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

describe('nothing is left behind', () => {
  it('server SIGKILL with --sandbox: the engine, the workers and every child a cell started are gone', async () => {
    const server = await startServer(ENV, ['--sandbox']);
    try {
      const ready = await eventually(() => server.structured('runtime_status'), (value) => value.standby === 'ready', 30_000);
      const ownTemporary = ready.sandbox.writes.find((path: string) => path.includes('ipython-mcp-sandbox-')) as string;
      expect(existsSync(ownTemporary)).toBe(true);
      const started = await server.structured('execute', {
        code: [
          'import os, subprocess',
          'subprocess.Popen(["sleep", "1000"])',
          '_background = !sleep 1000 > /dev/null 2>&1 & echo $!',
          'if os.fork() == 0:',
          '    os.setsid()',
          '    if os.fork() == 0:',
          '        os.execvp("sleep", ["sleep", "1000"])',
          '    os._exit(0)',
          '"started"',
        ].join('\n'),
      });
      expect(started.result?.value, JSON.stringify(started.error)).toBe('started');
      // Host pids, walked from the server down (the worker's own pids are its namespace's): two engines with their
      // layers (bwrap, bash, socat...), two workers and three sleeps, the double-forked one reparented to the
      // namespace's init.
      const before = descendants(server.serverPid);
      expect(before.length).toBeGreaterThanOrEqual(12);
      process.kill(server.serverPid, 'SIGKILL');
      expect(await survivors(before, 10_000)).toEqual([]);
      // The engine's host-side helpers went too (they are among `before`), and so did the worker's temporary directory.
      expect(await eventually(() => existsSync(ownTemporary), (exists) => !exists, 5_000)).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('--sandbox where the engine cannot run', () => {
  it('bubblewrap off PATH: exit 2, one line naming what is missing and how to add it, no worker started', () => {
    const emptyBin = mkdtempSync(join(tmpdir(), 'ipython-mcp-no-bwrap-'));
    // The worker's interpreter is a script that leaves a mark before it becomes the test Python: no mark, no worker.
    const marker = join(emptyBin, 'worker-started');
    const python = join(emptyBin, 'python-that-marks');
    writeFileSync(python, `#!/bin/sh\n: > '${marker}'\nexec '${testPython()}' "$@"\n`, { mode: 0o755 });
    try {
      const run = spawnSync(process.execPath, [CLI, '--sandbox'], {
        env: { ...process.env, HOME: home, PATH: emptyBin, IPYTHON_MCP_PYTHON: python },
        input: '',
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/bubblewrap/);
      expect(lines[0]).toMatch(/apt-get install bubblewrap/);
      expect(run.stderr).not.toMatch(/ready on stdio/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(emptyBin, { recursive: true, force: true });
    }
  });

  it('a sandbox flag without --sandbox is a usage error (exit 2), never ignored', () => {
    const run = spawnSync(process.execPath, [CLI, '--sandbox-allow-domain', 'pypi.org'], { env: { ...process.env, HOME: home }, input: '', encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/only apply with --sandbox/);
  });

  it('a malformed domain is a usage error (exit 2)', () => {
    const run = spawnSync(process.execPath, [CLI, '--sandbox', '--sandbox-allow-domain', 'https://pypi.org/simple'], { env: { ...process.env, HOME: home }, input: '', encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/is not a domain/);
  });
});
