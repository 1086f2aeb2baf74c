// What `pnpm pack` of this app ships, and that it works where a user installs it: `npm install -g` of the
// tarball into a temporary prefix outside the repository, then --version, doctor, an MCP session through the
// installed binary, a TypeScript consumer compiled against the shipped types, and uninstall. publint checks
// the tarball and the built workspace packages it bundles.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPython } from './harness.js';
import { docsBlock } from './fixtures/docs-blocks.js';
import { REPO_ROOT, killMarkedProcesses, newMarker, runBounded, runOk, toolingPath, waitForNoMarkedProcesses } from './fixtures/processes.js';

const APP = join(REPO_ROOT, 'apps', 'ipython-mcp');
const manifest = JSON.parse(readFileSync(join(APP, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'ipython-mcp-packaging-')));
const tarball = join(scratch, `${manifest.name}-${manifest.version}.tgz`);
let entries: string[] = [];
let packedManifest: Record<string, any>;

/** The environment of a user outside this repository: no repo tooling on PATH, no interpreter settings. */
function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of Object.keys(env)) if (key.startsWith('IPYTHON_MCP_') && !(key in extra)) delete env[key];
  delete env.NODE_PATH;
  env.PATH = (env.PATH ?? '').split(':').filter((part) => !part.startsWith(REPO_ROOT)).join(':');
  return env;
}

beforeAll(async () => {
  // The one documented command (docs/clients.md, block "pack"), with pnpm nowhere on PATH: it brings its own.
  expect(docsBlock('pack')).toMatch(/^npm run pack\b/);
  // Without CI in its environment, so the bootstrap inside reuses the installed dependencies rather than reinstall.
  const packEnv = outsideEnv();
  delete packEnv.CI;
  const packed = await runOk('npm', ['run', '--silent', 'pack', '--', scratch], { cwd: REPO_ROOT, env: packEnv, timeoutMs: 300_000 });
  expect(packed.stdout.trim().split('\n').at(-1)).toBe(tarball);
  expect(existsSync(tarball), `npm run pack did not write ${tarball}`).toBe(true);
  entries = (await runOk('tar', ['-tzf', tarball], { timeoutMs: 30_000 })).stdout.trim().split('\n');
  const extracted = join(scratch, 'extracted');
  mkdirSync(extracted);
  await runOk('tar', ['-xzf', tarball, '-C', extracted], { timeoutMs: 30_000 });
  packedManifest = JSON.parse(readFileSync(join(extracted, 'package', 'package.json'), 'utf8')) as Record<string, any>;
}, 180_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the packed tarball', () => {
  it('holds the bundled server, its types, the worker\'s Python source and the changelog, and nothing else', () => {
    for (const file of ['package/package.json', 'package/dist/cli.js', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/CHANGELOG.md']) {
      expect(entries).toContain(file);
    }
    const workerPrefix = 'package/dist/python/ipython_mcp_worker/';
    const workerFiles = entries.filter((entry) => entry.startsWith(workerPrefix));
    // Every .py of the worker package and its subpackages, at the same path inside the package.
    const sourceFiles = readdirSync(join(REPO_ROOT, 'python', 'ipython_mcp_worker'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.py'));
    expect(workerFiles.map((entry) => entry.slice(workerPrefix.length)).sort()).toEqual(sourceFiles.sort());
    expect(entries.filter((entry) => entry.endsWith('.map') || entry.includes('/src/') || entry.includes('/test/'))).toEqual([]);
  });

  it('depends on registry packages only: no workspace: ranges, no unpublished @ipython-mcp/* packages', () => {
    const text = JSON.stringify(packedManifest);
    expect(text).not.toContain('workspace:');
    const runtime = { ...packedManifest.dependencies, ...packedManifest.optionalDependencies, ...packedManifest.peerDependencies };
    expect(Object.keys(runtime).filter((name) => name.startsWith('@ipython-mcp/'))).toEqual([]);
    expect(packedManifest.bin).toEqual({ 'ipython-mcp': './dist/cli.js' });
  });

  it('imports at run time only Node built-ins and its declared dependencies', () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
    const declared = Object.keys(manifest.dependencies);
    const dist = join(APP, 'dist');
    const undeclared: string[] = [];
    for (const file of readdirSync(dist).filter((name) => name.endsWith('.js'))) {
      const text = readFileSync(join(dist, file), 'utf8');
      // A specifier is a package name (a bundled header list holds the word "from" in quotes, which is none).
      for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([@a-z0-9][^"'\s,]*)["']/g)) {
        const specifier = match[1]!;
        if (builtins.has(specifier)) continue;
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!declared.includes(name)) undeclared.push(`${file}: ${specifier}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  it('passes publint --strict on the tarball itself', async () => {
    const bytes = readFileSync(tarball);
    const { messages, pkg } = await publint({
      pkgDir: 'package',
      pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
      level: 'suggestion',
      strict: true,
    });
    expect(messages.map((message) => `${message.type}: ${formatMessage(message, pkg) ?? message.code}`)).toEqual([]);
  });

  it('builds on workspace packages that pass publint --strict on their built output', async () => {
    const problems: string[] = [];
    const path = process.env.PATH;
    process.env.PATH = toolingPath(); // publint runs `pnpm pack` to learn which files each package publishes
    try {
      for (const name of ['protocol', 'admission-queue', 'worker-supervisor', 'schema-fingerprint', 'session-journal', 'mcp-server']) {
        const pkgDir = join(REPO_ROOT, 'packages', name);
        const { messages, pkg } = await publint({ pkgDir, pack: 'pnpm', level: 'suggestion', strict: true });
        for (const message of messages) problems.push(`packages/${name}: ${message.type}: ${formatMessage(message, pkg) ?? message.code}`);
      }
    } finally {
      process.env.PATH = path;
    }
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('npm install -g of the tarball into a temporary prefix', () => {
  const prefix = join(scratch, 'prefix');
  const bin = join(prefix, 'bin', 'ipython-mcp');
  const installed = join(prefix, 'lib', 'node_modules', 'ipython-mcp');
  const marker = newMarker();

  let installOutput = '';
  beforeAll(async () => {
    const result = await runOk('npm', ['install', '-g', '--no-audit', '--no-fund', '--prefix', prefix, tarball], {
      cwd: scratch,
      env: outsideEnv(),
      timeoutMs: 300_000,
    });
    installOutput = result.stdout + result.stderr;
  }, 320_000);

  it('installs as many packages as docs/clients.md says (within registry drift)', () => {
    const added = Number(/added (\d+) packages?/.exec(installOutput)?.[1]);
    const docs = readFileSync(join(REPO_ROOT, 'docs', 'clients.md'), 'utf8');
    const documented = Number(/(\d+) packages in all/.exec(docs)?.[1]);
    expect(Math.abs(added - documented), installOutput).toBeLessThanOrEqual(15);
  });
  afterAll(() => killMarkedProcesses(marker));

  it('installs outside the repository and prints its version', async () => {
    expect(prefix.startsWith(REPO_ROOT)).toBe(false);
    expect(realpathSync(bin)).toBe(join(installed, 'dist', 'cli.js'));
    const version = await runOk(bin, ['--version'], { cwd: scratch, env: outsideEnv(), timeoutMs: 30_000 });
    expect(version.stdout).toBe(`${manifest.version}\n`);
  });

  it('passes doctor with a Python that has IPython, using the worker source inside the prefix', async () => {
    const doctor = await runBounded(bin, ['doctor'], { cwd: scratch, env: outsideEnv({ IPYTHON_MCP_PYTHON: testPython() }), timeoutMs: 60_000 });
    expect(doctor.stdout).toContain(`ok   worker: ${join(installed, 'dist', 'python')} imports`);
    expect(doctor.code, doctor.stdout).toBe(0);
  });

  it('serves execute to a real MCP client, with state kept between calls, and leaves nothing running', async () => {
    const transport = new StdioClientTransport({
      command: bin,
      args: [],
      cwd: scratch,
      env: outsideEnv({ IPYTHON_MCP_PYTHON: testPython(), [marker.name]: marker.value }) as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'tarball-install', version: '1.0.0' });
    await client.connect(transport);
    try {
      const call = async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })).structuredContent as Record<string, any>;
      expect((await call('execute', { code: 'import ipython_mcp_worker\nx = 41\nipython_mcp_worker.__file__' })).result.value).toBe(
        join(installed, 'dist', 'python', 'ipython_mcp_worker', '__init__.py'),
      );
      expect((await call('execute', { code: 'x + 1' })).result).toEqual({ value: 42 });
      const status = await call('runtime_status');
      expect(status).toMatchObject({ state: 'ready', epoch: 1 });
      expect(status).not.toHaveProperty('error'); // null, the default
    } finally {
      await client.close();
    }
    expect(await waitForNoMarkedProcesses(marker, 15_000)).toEqual([]);
  });

  it('ships types a TypeScript consumer compiles against (no unpublished workspace types)', async () => {
    const consumer = join(scratch, 'consumer');
    mkdirSync(consumer);
    symlinkSync(join(prefix, 'lib', 'node_modules'), join(consumer, 'node_modules'));
    writeFileSync(
      join(consumer, 'consumer.ts'),
      [
        "import { createIpythonMcpServer, resolveSettings, serveStdio, type IpythonMcpServerOptions, type Settings } from 'ipython-mcp';",
        "const settings: Settings = resolveSettings({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '5' });",
        'const seconds: number = settings.operationTimeoutSeconds;',
        '// @ts-expect-error a count is a number, so this must not type-check (it would if the types were `any`)',
        'const wrong: string = settings.maxPendingOperations;',
        'type Options = Parameters<typeof createIpythonMcpServer>[0];',
        'const same: Options extends IpythonMcpServerOptions ? true : false = true;',
        'export { seconds, wrong, same, serveStdio };',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(APP, 'node_modules', '@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(join(consumer, 'package.json'), '{ "type": "module" }\n');
    const compiled = await runBounded(join(APP, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: consumer, timeoutMs: 120_000 });
    expect(compiled.stdout + compiled.stderr).toBe('');
    expect(compiled.code).toBe(0);
  }, 150_000);

  it('uninstalls with `npm uninstall -g ipython-mcp`', async () => {
    await runOk('npm', ['uninstall', '-g', '--loglevel=error', '--prefix', prefix, 'ipython-mcp'], { cwd: scratch, env: outsideEnv(), timeoutMs: 120_000 });
    expect(existsSync(bin)).toBe(false);
    expect(existsSync(installed)).toBe(false);
  });
});
