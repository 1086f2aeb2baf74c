import { existsSync, statSync } from 'node:fs';
import type { InterpreterChoice } from '@ipython-mcp/worker-supervisor';
import { probePython } from '@ipython-mcp/worker-supervisor';
import type { Settings } from '@ipython-mcp/protocol';

const MIN_IPYTHON = [8, 12];

interface Check {
  ok: boolean;
  optional?: boolean;
  line: string;
}

/** Prints one line per check (with a fix hint when it fails) and returns the exit code: 0 when all required checks pass. */
export function doctorCommand(choice: InterpreterChoice, settings: Settings): number {
  const checks: Check[] = [];
  const python = choice.python;
  const version = probePython(python, 'import sys; print("%d.%d.%d" % sys.version_info[:3])');
  if (!version.ok) {
    checks.push({ ok: false, line: `python: ${python} (${choice.source}) cannot run: ${version.error}. Fix: set IPYTHON_MCP_PYTHON or --python, or run \`ipython-mcp setup\`.` });
  } else {
    checks.push({ ok: true, line: `python: ${python} (${choice.source}), Python ${version.stdout}` });
    const ipython = probePython(python, 'import IPython; print(IPython.__version__)');
    if (!ipython.ok) {
      checks.push({ ok: false, line: `ipython: not importable with ${python}. Fix: \`${python} -m pip install ipython\` or run \`ipython-mcp setup\`.` });
    } else {
      const [major = 0, minor = 0] = ipython.stdout.split('.').map((part) => Number.parseInt(part, 10));
      const recent = major > MIN_IPYTHON[0]! || (major === MIN_IPYTHON[0] && minor >= MIN_IPYTHON[1]!);
      checks.push({
        ok: recent,
        line: recent ? `ipython: ${ipython.stdout}` : `ipython: ${ipython.stdout} is older than ${MIN_IPYTHON.join('.')}. Fix: \`${python} -m pip install -U ipython\`.`,
      });
    }
    const msgpack = probePython(python, 'import msgpack; print(".".join(map(str, msgpack.version)))');
    checks.push({
      ok: msgpack.ok,
      optional: true,
      line: msgpack.ok ? `msgpack: ${msgpack.stdout} (binary IPC codec)` : `msgpack: not installed; the JSON codec will be used (optional; \`${python} -m pip install msgpack\`).`,
    });
  }
  for (const path of settings.libraryPaths) {
    const ok = existsSync(path) && statSync(path).isDirectory();
    checks.push({ ok, line: ok ? `library path: ${path}` : `library path: ${path} is not a directory. Fix: correct IPYTHON_MCP_LIBRARY_PATHS.` });
  }
  const modules = [...settings.preloadModules, ...Object.keys(settings.moduleAliases)];
  if (version.ok && modules.length > 0) {
    for (const module of modules) {
      const code = `import sys, importlib; sys.path[:0] = ${JSON.stringify(settings.libraryPaths)}; importlib.import_module(${JSON.stringify(module)})`;
      const imported = probePython(python, code);
      checks.push({
        ok: imported.ok,
        line: imported.ok ? `preload: ${module} imports` : `preload: ${module} fails in a clean process: ${imported.ok ? '' : imported.error}. Fix: install it, or correct IPYTHON_MCP_PRELOAD_MODULES / IPYTHON_MCP_LIBRARY_PATHS.`,
      });
    }
  }
  for (const check of checks) process.stdout.write(`${check.ok ? 'ok  ' : check.optional ? 'warn' : 'FAIL'} ${check.line}\n`);
  const failed = checks.filter((check) => !check.ok && !check.optional).length;
  process.stdout.write(failed === 0 ? 'doctor: all required checks passed\n' : `doctor: ${failed} check(s) failed\n`);
  return failed === 0 ? 0 : 1;
}
