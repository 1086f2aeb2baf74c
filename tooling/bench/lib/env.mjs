// Where things are: the repository, the built server, the worker's Python, the bench-only venv, the machine.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { run } from './procs.mjs';

export const ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
export const CLI = join(ROOT, 'apps/ipython-mcp/dist/cli.js');
export const PY_DIR = join(ROOT, 'tooling/bench/python');
export const RESULTS_DIR = join(ROOT, 'bench/results');

/**
 * Builds the workspace with the pinned pnpm's turbo (a cached no-op when dist/ is up to date), so the bench measures
 * the sources as they are: a stale dist/ would measure old code, or fail on an options shape the sources dropped.
 * Without the README set-up (no pinned pnpm) it leaves dist/ alone and says so.
 */
export function buildTree(log) {
  const bin = join(ROOT, '.tooling/node_modules/.bin');
  if (!existsSync(join(bin, 'pnpm'))) {
    log('no pinned pnpm in .tooling/ (run the README set-up): measuring dist/ as it is');
    return;
  }
  const started = performance.now();
  const built = spawnSync(join(bin, 'pnpm'), ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, TURBO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`the build failed (pnpm exec turbo run build):\n${(built.stdout + built.stderr).slice(-2000)}`);
  log(`build up to date (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

/** A file of the MCP SDK the app uses (its directory in the pnpm store), e.g. `sdkFile('package.json')`. */
export function sdkFile(path) {
  return join(realpathSync(join(ROOT, 'apps/ipython-mcp/node_modules/@modelcontextprotocol/sdk')), path);
}

/** Dynamic imports of the built workspace packages and the MCP SDK (resolved through the app that uses it). */
export async function loadModules() {
  const missing = [CLI, join(ROOT, 'packages/worker-supervisor/dist/index.js'), join(ROOT, 'packages/protocol/dist/index.js')].filter(
    (path) => !existsSync(path),
  );
  if (missing.length > 0) {
    throw new Error(
      `not built: ${missing.map((path) => path.slice(ROOT.length + 1)).join(', ')}\n` +
        'run the README setup first (`bash tooling/test.sh` or `bash tooling/serve.sh`), or `pnpm build`',
    );
  }
  const load = (path) => import(pathToFileURL(path).href);
  const [client, stdio, supervisor, protocol, http] = await Promise.all([
    load(sdkFile('dist/esm/client/index.js')),
    load(sdkFile('dist/esm/client/stdio.js')),
    load(join(ROOT, 'packages/worker-supervisor/dist/index.js')),
    load(join(ROOT, 'packages/protocol/dist/index.js')),
    load(sdkFile('dist/esm/client/streamableHttp.js')),
  ]);
  const sdkVersion = JSON.parse(readFileSync(sdkFile('package.json'), 'utf8')).version;
  return { Client: client.Client, StdioClientTransport: stdio.StdioClientTransport, StreamableHTTPClientTransport: http.StreamableHTTPClientTransport, supervisor, protocol, sdkVersion };
}

/**
 * The worker's Python, chosen like the test suite does: --python, IPYTHON_MCP_PYTHON, the repository's .venv (made
 * by `bash tooling/test.sh`), the managed environment (made by `ipython-mcp setup`), then python3. The floor
 * measurement runs on the same interpreter so the comparison is like for like.
 */
export function chooseWorkerPython(flag) {
  const managedHome = process.env.IPYTHON_MCP_HOME
    ? join(process.env.IPYTHON_MCP_HOME, 'venv')
    : join(process.env.XDG_DATA_HOME || join(homedir(), '.local/share'), 'ipython-mcp/venv');
  const candidates = [
    [flag, '--python'],
    [process.env.IPYTHON_MCP_PYTHON, 'IPYTHON_MCP_PYTHON'],
    [join(ROOT, '.venv/bin/python'), '.venv'],
    [join(managedHome, 'bin/python'), 'managed venv'],
  ];
  for (const [python, source] of candidates) {
    if (python && existsSync(python)) return { python, source };
  }
  return { python: 'python3', source: 'PATH' };
}

/** Versions of an interpreter's Python, IPython and msgpack. */
export function pythonFacts(python) {
  const code =
    'import json, platform, sys\n' +
    'facts = {"python": platform.python_version(), "executable": sys.executable, "base": getattr(sys, "_base_executable", sys.executable)}\n' +
    'try:\n import IPython; facts["ipython"] = IPython.__version__\nexcept Exception: facts["ipython"] = None\n' +
    'try:\n import msgpack; facts["msgpack"] = ".".join(map(str, msgpack.version))\nexcept Exception: facts["msgpack"] = None\n' +
    'print(json.dumps(facts))';
  const result = spawnSync(python, ['-c', code], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`cannot run the worker Python ${python}: ${(result.stderr || result.error?.message || '').trim()}`);
  return JSON.parse(result.stdout);
}

const BENCH_REQUIREMENTS = ['ipykernel', 'jupyter_client', 'py-spy'];
const HARNESS_REQUIREMENT = 'pydantic-ai-harness[ipython]';

/**
 * Creates (first run) the bench-only venv with ipykernel + jupyter_client (+ py-spy) from PyPI, IPython pinned to
 * the worker's version when possible, and tries pydantic-ai-harness[ipython]. Idempotent (stamp file).
 */
export async function ensureBenchVenv(directory, workerFacts, log) {
  const python = join(directory, 'bin/python');
  const stampKey = [...BENCH_REQUIREMENTS, HARNESS_REQUIREMENT, `ipython==${workerFacts.ipython}`, 'v2'].join(' ');
  const stamp = join(directory, `.bench-stamp`);
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8').split('\n')[0] === stampKey) {
    return { python, created: false, harness: JSON.parse(readFileSync(stamp, 'utf8').split('\n')[1] || '{}') };
  }
  const started = performance.now();
  if (!existsSync(python)) {
    log(`creating the bench-only venv ${directory} (first run; PyPI)`);
    await run(workerFacts.base || 'python3', ['-m', 'venv', directory], { label: 'venv' });
  }
  const pip = (args, allowFailure = false) =>
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...args], { label: 'pip', allowFailure });
  log(`installing ${BENCH_REQUIREMENTS.join(', ')} into the bench venv`);
  const pinned = workerFacts.ipython ? [`ipython==${workerFacts.ipython}`] : [];
  const first = await pip([...BENCH_REQUIREMENTS, ...pinned], true);
  if (first.code !== 0) {
    log('pinning IPython to the worker version failed; installing the latest instead');
    await pip(BENCH_REQUIREMENTS);
  }
  // The alternative the Code Mode figure is compared with. Recorded precisely when it cannot be used.
  log(`trying ${HARNESS_REQUIREMENT} (the pydantic-ai-harness IPython Code Mode alternative)`);
  const harnessInstall = await pip([HARNESS_REQUIREMENT], true);
  const harness = { requirement: HARNESS_REQUIREMENT, installExit: harnessInstall.code, pipStderr: harnessInstall.stderr.trim().slice(-600) };
  const probe = spawnSync(
    python,
    [
      '-c',
      'import json\ntry:\n import importlib.metadata as m; v = m.version("pydantic-ai-harness")\nexcept Exception: v = None\n' +
        'try:\n import pydantic_ai_harness as h; has = hasattr(h, "IPythonCodeMode")\nexcept Exception as e: has = False\n' +
        'try:\n import pydantic_ai_harness.ipython_code_mode; mod = True\nexcept Exception as e: mod = repr(e)[:200]\n' +
        'print(json.dumps({"version": v, "has_IPythonCodeMode": has, "ipython_code_mode_module": mod}))',
    ],
    { encoding: 'utf8' },
  );
  try {
    Object.assign(harness, JSON.parse(probe.stdout));
  } catch {
    harness.probeError = probe.stderr.trim().slice(-300);
  }
  writeFileSync(stamp, `${stampKey}\n${JSON.stringify(harness)}\n`);
  log(`bench venv ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { python, created: true, harness };
}

/** nproc, memory, CPU model, kernel, Node, load average: what RESULTS.md records next to the numbers. */
export function machineFacts() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? 'unknown';
  const mhz = /^cpu MHz\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? null;
  let nproc = null;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    // unknown
  }
  let kernel = null;
  try {
    kernel = execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim();
  } catch {
    // unknown
  }
  return {
    nproc,
    memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
    cpuModel: model,
    cpuMHz: mhz ? Number(mhz) : null,
    kernel,
    node: process.version,
    loadAverageAtStart: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number),
  };
}
