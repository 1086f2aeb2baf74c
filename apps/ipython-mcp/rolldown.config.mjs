// Bundles the server for publication, in two builds.
//
// - dist/index.js, the library entry: the @ipython-mcp/* workspace packages are not published, so their code is
//   inlined; every other bare import stays external and must be listed in this package's `dependencies`
//   (test/packaging.e2e.test.ts checks that, and installs the packed tarball outside the repository), so a program
//   that embeds the server shares its MCP SDK and zod with it.
// - dist/cli.js, the binary: one file with the pure-JavaScript dependencies inlined too (the MCP SDK, zod, ajv,
//   p-queue). Start-up then compiles one module instead of resolving and loading a few hundred files, which cuts
//   spawn → `initialize` by about a third (bench/RESULTS.md, cold start). msgpackr stays external: it loads an
//   optional native decoder relative to its own install location.
//
// Chunks stay directly in dist/: @ipython-mcp/worker-supervisor finds the worker's Python source relative to the
// module that holds its code (`<that directory>/python`), and the build copies it to dist/python.
import { builtinModules } from 'node:module';
import { defineConfig } from 'rolldown';

const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
const isBuiltin = (id) => builtins.has(id) || id.startsWith('node:');
const isBare = (id) => !(id.startsWith('.') || id.startsWith('/') || id.startsWith('\0'));

/** Library build: a bare specifier that is neither a workspace package nor relative is left to npm. */
function isLibraryExternal(id) {
  return isBuiltin(id) || (isBare(id) && !id.startsWith('@ipython-mcp/'));
}

/**
 * Binary build: only Node built-ins, msgpackr (with its optional native part), the sandbox engine (which finds
 * its seccomp helpers relative to its own install location, and is loaded only for --sandbox) and the Jupyter
 * client (loaded only for --jupyter) are left to npm.
 */
function isBinaryExternal(id) {
  return (
    isBuiltin(id) ||
    id === 'msgpackr' ||
    id.startsWith('msgpackr/') ||
    id.startsWith('@anthropic-ai/sandbox-runtime') ||
    // The Jupyter client (loaded only for --jupyter) and its WebSocket: large, and left to npm like the sandbox engine.
    id.startsWith('@jupyterlab/') ||
    id === 'ws' ||
    // The notebook's shared document (loaded only for --notebook): one yjs for @jupyter/ydoc and y-websocket alike.
    id.startsWith('@jupyter/') ||
    id === 'yjs' ||
    id.startsWith('y-websocket') ||
    id.startsWith('y-protocols')
  );
}

export default defineConfig([
  {
    input: { index: 'src/index.ts' },
    platform: 'node',
    external: isLibraryExternal,
    output: { dir: 'dist', format: 'esm', cleanDir: true, entryFileNames: '[name].js', chunkFileNames: 'shared-[hash].js', sourcemap: true },
  },
  {
    input: { cli: 'src/cli.ts' },
    platform: 'node',
    external: isBinaryExternal,
    // Legal comments stay; the inlined packages' JSDoc goes (it would only be parsed).
    output: { dir: 'dist', format: 'esm', entryFileNames: '[name].js', codeSplitting: false, sourcemap: true, comments: { legal: true, annotation: false, jsdoc: false } },
  },
]);
