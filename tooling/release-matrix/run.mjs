#!/usr/bin/env node
// Release matrix: the worker against the lowest supported IPython (8.12) and the newest on PyPI, each with the
// msgpack codec and with the JSON fallback (a venv without msgpack, so the real negotiation picks JSON). Every
// cell gets its own virtual environment, runs the worker's pytest suite with that Python, and a short MCP smoke
// through the built server (execute 6 * 7 -> 42, runtime_status names the expected codec and IPython).
//
//   node tooling/release-matrix/run.mjs                 every cell, then a table; exit 1 if any cell failed
//   node tooling/release-matrix/run.mjs --cell default  one cell (repeatable); --list names them
//   options: --fresh (rebuild the cells' venvs), --python-lowest PATH, --python-newest PATH, --python-default PATH
//
// Venvs are cached in $IPYTHON_MCP_MATRIX_CACHE, else $XDG_CACHE_HOME/ipython-mcp/release-matrix, else
// ~/.cache/ipython-mcp/release-matrix, keyed by cell and Python version, and rebuilt when the requirement set
// changes (for example when a newer IPython appears on PyPI).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const serverCli = join(root, 'apps', 'ipython-mcp', 'dist', 'cli.js');
const LOWEST_IPYTHON = '8.12';
const LOWEST_MSGPACK = '1.0';
const INSTALL_TIMEOUT_MS = 600_000;
const PYTEST_TIMEOUT_MS = 900_000;
const SMOKE_TIMEOUT_MS = 90_000;

/**
 * The cells: which IPython, which codec, which base Python. The lowest IPython runs on the oldest Python found
 * (3.10 is the oldest supported), the newest on the newest Python found; `default` is what `ipython-mcp setup`
 * builds for a user (python3 on PATH, newest IPython, msgpack) and is the one CI runs.
 */
const CELLS = {
  default: { ipython: 'newest', codec: 'msgpack', python: 'default' },
  'lowest-msgpack': { ipython: 'lowest', codec: 'msgpack', python: 'lowest' },
  'lowest-json': { ipython: 'lowest', codec: 'json', python: 'lowest' },
  'newest-msgpack': { ipython: 'newest', codec: 'msgpack', python: 'newest' },
  'newest-json': { ipython: 'newest', codec: 'json', python: 'newest' },
};

const { values } = parseArgs({
  options: {
    cell: { type: 'string', multiple: true },
    fresh: { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    'python-lowest': { type: 'string' },
    'python-newest': { type: 'string' },
    'python-default': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  const header = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1);
  const comment = header.slice(0, header.findIndex((line) => !line.startsWith('//')));
  process.stdout.write(`${comment.map((line) => line.replace(/^\/\/ ?/, '')).join('\n')}\n`);
  process.exit(0);
}
if (values.list) {
  for (const [name, cell] of Object.entries(CELLS)) process.stdout.write(`${name}: IPython ${cell.ipython}, ${cell.codec} codec, ${cell.python} Python\n`);
  process.exit(0);
}
const requested = values.cell ?? Object.keys(CELLS);
for (const name of requested) {
  if (!(name in CELLS)) {
    process.stderr.write(`release-matrix: unknown cell ${name} (cells: ${Object.keys(CELLS).join(', ')})\n`);
    process.exit(2);
  }
}
if (!existsSync(serverCli)) {
  process.stderr.write(`release-matrix: ${serverCli} is missing; build first: pnpm exec turbo run build --filter=ipython-mcp...\n`);
  process.exit(2);
}

const cacheRoot =
  process.env.IPYTHON_MCP_MATRIX_CACHE ?? join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ipython-mcp', 'release-matrix');

function log(message) {
  process.stderr.write(`release-matrix: ${message}\n`);
}

/** Runs a command to completion, output captured; never throws. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: options.timeoutMs ?? 120_000, cwd: options.cwd, env: options.env ?? process.env, maxBuffer: 64 * 1024 * 1024 });
  return { ok: result.status === 0, status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '', error: result.error };
}

function pythonVersion(python) {
  const result = run(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { timeoutMs: 30_000 });
  return result.ok ? result.stdout.trim() : undefined;
}

/** Working interpreters for each minor version found on PATH or in pyenv's versions directory. */
function findInterpreters() {
  const found = new Map();
  const candidates = ['python3.10', 'python3.11', 'python3.12', 'python3.13', 'python3.14', 'python3'];
  const pyenvRoot = process.env.PYENV_ROOT ?? join(homedir(), '.pyenv');
  if (existsSync(join(pyenvRoot, 'versions'))) {
    for (const name of readdirSync(join(pyenvRoot, 'versions'))) {
      if (/^3\.\d+\.\d+$/.test(name)) candidates.push(join(pyenvRoot, 'versions', name, 'bin', 'python3'));
    }
  }
  for (const candidate of candidates) {
    const version = pythonVersion(candidate);
    if (!version) continue;
    const [major, minor] = version.split('.').map(Number);
    if (major !== 3 || minor < 10) continue;
    const key = `3.${minor}`;
    if (!found.has(key)) found.set(key, { python: candidate, version });
  }
  return [...found.entries()].sort((a, b) => Number(a[0].split('.')[1]) - Number(b[0].split('.')[1])).map(([, value]) => value);
}

/** The worker's test requirements, read from python/pyproject.toml's `test` extra (linters, the type checker and msgpack removed). */
function testRequirements() {
  const text = readFileSync(join(root, 'python', 'pyproject.toml'), 'utf8');
  const match = /^test\s*=\s*\[([^\]]*)\]/m.exec(text);
  if (!match) throw new Error('python/pyproject.toml has no `test` extra');
  return [...match[1].matchAll(/"([^"]+)"/g)].map((item) => item[1]).filter((requirement) => !/^(msgpack|ruff|mypy)\b/.test(requirement));
}

/** The newest IPython on PyPI that installs on `python` (one `pip index` look-up). */
function newestIPython(python) {
  const result = run(python, ['-m', 'pip', 'index', 'versions', 'ipython', '--disable-pip-version-check'], { timeoutMs: 120_000 });
  const match = /^ipython \(([^)]+)\)/m.exec(result.stdout);
  if (!match) throw new Error(`could not ask PyPI for the newest IPython:\n${result.stderr || result.stdout}`);
  return match[1];
}

/** Creates (or reuses) the cell's venv; returns its Python and the IPython version installed in it. */
function ensureEnvironment(name, cell, base) {
  const directory = join(cacheRoot, `${name}-py${base.version}`);
  const python = join(directory, 'bin', 'python');
  if (values.fresh) rmSync(directory, { recursive: true, force: true });
  if (!existsSync(python)) {
    log(`${name}: creating ${directory} from Python ${base.version}`);
    mkdirSync(dirname(directory), { recursive: true });
    const created = run(base.python, ['-m', 'venv', directory], { timeoutMs: 120_000 });
    if (!created.ok) throw new Error(`python -m venv failed:\n${created.stderr}`);
  }
  const ipython = cell.ipython === 'lowest' ? `ipython==${LOWEST_IPYTHON}.*` : `ipython==${newestIPython(python)}`;
  const msgpack = cell.ipython === 'lowest' ? `msgpack==${LOWEST_MSGPACK}.*` : 'msgpack';
  const requirements = [ipython, ...(cell.codec === 'msgpack' ? [msgpack] : []), ...testRequirements()];
  const stampFile = join(directory, '.release-matrix-requirements');
  const stamp = requirements.join('\n');
  if (!existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== stamp) {
    log(`${name}: installing ${requirements.join(' ')}`);
    const installed = run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...requirements], { timeoutMs: INSTALL_TIMEOUT_MS });
    if (!installed.ok) throw new Error(`pip install failed:\n${installed.stderr.slice(-4000)}`);
    if (cell.codec === 'json') {
      // A test dependency may have pulled msgpack in; the JSON cells must not have it.
      run(python, ['-m', 'pip', 'uninstall', '--yes', '--quiet', 'msgpack'], { timeoutMs: 120_000 });
    }
    writeFileSync(stampFile, stamp);
  }
  const versions = run(python, ['-c', 'import IPython, importlib.util; print(IPython.__version__, importlib.util.find_spec("msgpack") is not None)'], { timeoutMs: 60_000 });
  if (!versions.ok) throw new Error(`the cell's Python cannot import IPython:\n${versions.stderr}`);
  const [ipythonVersion, hasMsgpack] = versions.stdout.trim().split(' ');
  if ((hasMsgpack === 'True') !== (cell.codec === 'msgpack')) throw new Error(`msgpack is ${hasMsgpack === 'True' ? 'present' : 'missing'} in a ${cell.codec} cell`);
  return { python, ipythonVersion };
}

/**
 * The worker's pytest suite with the cell's Python. A JSON cell deselects the cases whose id names msgpack (the
 * msgpack codec's own tests: they cannot run where msgpack is absent); everything else runs as it is.
 */
function runPytest(python, codec) {
  const selection = codec === 'json' ? ['-k', 'not msgpack'] : [];
  const result = run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', '--color=no', ...selection], { cwd: join(root, 'python'), timeoutMs: PYTEST_TIMEOUT_MS });
  const lines = result.stdout.trim().split('\n');
  const summary = lines.filter((line) => /\d+ (passed|failed|errors?|deselected)\b.* in [\d.]+s/.test(line)).at(-1) ?? '';
  const cleaned = summary.replace(/^=+\s*|\s*=+$/g, '').replace(/ in [\d.]+s.*$/, '');
  return { ok: result.ok, summary: cleaned || `exit ${String(result.status)}`, output: `${result.stdout}\n${result.stderr}` };
}

/** A minimal MCP client over newline-delimited JSON-RPC on the server's stdio. */
function smoke(python, codec, ipythonVersion) {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [serverCli], {
      env: { ...process.env, IPYTHON_MCP_PYTHON: python },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
    let buffer = '';
    let stderr = '';
    const pending = new Map();
    let nextId = 1;
    let settled = false;
    const finish = (ok, detail) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin.end();
      // Closing stdin ends the server and its workers; SIGKILL only if it does not go within 10 s.
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      void exited.then(() => {
        clearTimeout(killer);
        resolvePromise({ ok, detail: ok ? detail : `${detail}${stderr ? ` (server stderr: ${stderr.trim().split('\n').slice(-3).join(' | ')})` : ''}` });
      });
    };
    const timer = setTimeout(() => finish(false, `timed out after ${SMOKE_TIMEOUT_MS} ms`), SMOKE_TIMEOUT_MS);
    child.on('error', (error) => finish(false, error.message));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.trim()) continue;
        const message = JSON.parse(line);
        if (message.id !== undefined && pending.has(message.id)) {
          pending.get(message.id)(message);
          pending.delete(message.id);
        }
      }
    });
    const request = (method, params) =>
      new Promise((resolveRequest) => {
        const id = nextId++;
        pending.set(id, resolveRequest);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    (async () => {
      const init = await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'release-matrix', version: '1' } });
      if (!init.result) return finish(false, `initialize failed: ${JSON.stringify(init.error)}`);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      const executed = await request('tools/call', { name: 'execute', arguments: { code: 'answer = 6 * 7\nanswer' } });
      const value = executed.result?.structuredContent?.result?.value;
      if (value !== 42) return finish(false, `execute returned ${JSON.stringify(executed.result ?? executed.error).slice(0, 300)}`);
      const status = (await request('tools/call', { name: 'runtime_status', arguments: {} })).result?.structuredContent ?? {};
      if (status.codec !== codec) return finish(false, `runtime_status.codec is ${status.codec}, expected ${codec}`);
      if (status.ipython_version !== ipythonVersion) return finish(false, `runtime_status.ipython_version is ${status.ipython_version}, expected ${ipythonVersion}`);
      return finish(true, `execute -> 42, codec ${status.codec}`);
    })().catch((error) => finish(false, error.message));
  });
}

function pad(text, width) {
  return String(text).padEnd(width);
}

function printTable(rows) {
  const headers = ['cell', 'python', 'ipython', 'codec', 'pytest', 'mcp smoke', 'result', 'seconds'];
  const table = rows.map((row) => [row.cell, row.python, row.ipython, row.codec, row.pytest, row.smoke, row.ok ? 'PASS' : 'FAIL', row.seconds]);
  const widths = headers.map((header, index) => Math.max(header.length, ...table.map((cells) => String(cells[index]).length)));
  const line = (cells) => `| ${cells.map((cell, index) => pad(cell, widths[index])).join(' | ')} |`;
  process.stdout.write(`${line(headers)}\n|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|\n${table.map(line).join('\n')}\n`);
}

const interpreters = findInterpreters();
if (interpreters.length === 0) {
  log('no Python 3.10+ found (tried python3.10 … python3.14, python3 and pyenv versions)');
  process.exit(2);
}
const defaultPython = values['python-default'] ?? 'python3';
const bases = {
  default: { python: defaultPython, version: pythonVersion(defaultPython) },
  lowest: values['python-lowest'] ? { python: values['python-lowest'], version: pythonVersion(values['python-lowest']) } : interpreters[0],
  newest: values['python-newest'] ? { python: values['python-newest'], version: pythonVersion(values['python-newest']) } : interpreters.at(-1),
};
for (const [which, base] of Object.entries(bases)) {
  if (!base?.version) {
    log(`--python-${which} does not run`);
    process.exit(2);
  }
}

const rows = [];
for (const name of requested) {
  const cell = CELLS[name];
  const base = bases[cell.python];
  const started = Date.now();
  const row = { cell: name, python: base.version, ipython: '?', codec: cell.codec, pytest: '-', smoke: '-', ok: false, seconds: 0 };
  try {
    const { python, ipythonVersion } = ensureEnvironment(name, cell, base);
    row.ipython = ipythonVersion;
    log(`${name}: pytest with ${python}`);
    const tests = runPytest(python, cell.codec);
    row.pytest = tests.summary;
    if (!tests.ok) process.stderr.write(`${tests.output.split('\n').slice(-60).join('\n')}\n`);
    log(`${name}: MCP smoke`);
    const smoked = await smoke(python, cell.codec, ipythonVersion);
    row.smoke = smoked.ok ? 'ok' : `FAIL: ${smoked.detail}`;
    row.ok = tests.ok && smoked.ok;
  } catch (error) {
    row.smoke = `FAIL: ${error.message.split('\n')[0]}`;
    process.stderr.write(`${error.message}\n`);
  }
  row.seconds = Math.round((Date.now() - started) / 1000);
  rows.push(row);
}
printTable(rows);
process.exit(rows.every((row) => row.ok) ? 0 : 1);
