// Python environments and wheels for the package-install tests, made offline: a tiny pure-Python wheel written
// by hand, and environments that borrow IPython from the test .venv through a .pth file (so no PyPI download is
// needed to host a worker) without borrowing its pip.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { testPython } from './harness.js';

/** Runs a command and throws with its output when it fails. */
export function mustRun(command: string, args: string[], env?: Record<string, string>): string {
  const result = spawnSync(command, args, { encoding: 'utf8', env: env ?? (process.env as Record<string, string>), timeout: 300_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${String(result.status)}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

const WHEEL_WRITER = `
import base64, hashlib, sys, zipfile
directory, name, version = sys.argv[1:4]
dist = f"{name}-{version}.dist-info"
files = {
    f"{name}.py": f"VERSION = {version!r}\\n",
    f"{dist}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
    f"{dist}/WHEEL": "Wheel-Version: 1.0\\nGenerator: ipython-mcp-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
def digest(text):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
record = "".join(f"{path},{digest(text)},{len(text.encode())}\\n" for path, text in files.items()) + f"{dist}/RECORD,,\\n"
path = f"{directory}/{name}-{version}-py3-none-any.whl"
with zipfile.ZipFile(path, "w") as archive:
    for item, text in {**files, f"{dist}/RECORD": record}.items():
        archive.writestr(item, text)
print(path)
`;

/** Writes `<name>-<version>-py3-none-any.whl` (one module, `<name>.VERSION`) into `directory`; returns its path. */
export function buildWheel(directory: string, name: string, version = '1.0'): string {
  mkdirSync(directory, { recursive: true });
  return mustRun(testPython(), ['-c', WHEEL_WRITER, directory, name, version]).trim();
}

/** The uv executable of the test environment; installed there from PyPI when a machine lacks it. */
export function testUv(): string {
  const uv = join(dirname(testPython()), 'uv');
  if (!existsSync(uv)) mustRun(testPython(), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', 'uv']);
  return uv;
}

/** The test .venv's site-packages, whose IPython (and friends) the new environments borrow. */
function testSitePackages(): string {
  return mustRun(testPython(), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).trim();
}

/**
 * A directory of links to everything in the test .venv's site-packages except pip, uv and this project's own
 * editable install: enough to host a worker, while the environment stays without pip when it was made so.
 */
function borrowedPackages(scratch: string): string {
  const target = join(scratch, 'borrowed-site-packages');
  if (existsSync(target)) return target;
  mkdirSync(target, { recursive: true });
  const site = testSitePackages();
  for (const entry of readdirSync(site)) {
    if (/^(pip|uv|_virtualenv|__editable__|ipython_mcp_worker|__pycache__)/.test(entry) || entry.endsWith('.pth')) continue;
    symlinkSync(join(site, entry), join(target, entry));
  }
  return target;
}

/** A fresh environment: `python -m venv` (with pip) or `uv venv` (no pip, as uv makes them). Returns its python. */
export function makeEnvironment(scratch: string, directory: string, kind: 'venv' | 'uv'): string {
  const base = mustRun(testPython(), ['-c', 'import sys, os; print(os.path.join(sys.base_prefix, "bin", "python3"))']).trim();
  if (kind === 'venv') mustRun(base, ['-m', 'venv', directory]);
  else mustRun(testUv(), ['venv', '--quiet', '--python', base, directory]);
  const python = join(directory, 'bin', 'python');
  const site = mustRun(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).trim();
  writeFileSync(join(site, 'ipython-mcp-test-borrowed.pth'), `${borrowedPackages(scratch)}\n`);
  return python;
}

/** PATH with no uv on it (and so no way to install into an environment without pip). */
export function pathWithoutUv(): string {
  return (process.env.PATH ?? '').split(delimiter).filter((entry) => entry !== '' && !existsSync(join(entry, 'uv'))).join(delimiter);
}
