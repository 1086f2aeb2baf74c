// Bundles the server for publication. The @ipython-mcp/* workspace packages are not published, so their code is
// inlined here; every other bare import stays external and must be listed in this package's `dependencies`
// (test/packaging.e2e.test.ts checks that, and installs the packed tarball outside the repository).
//
// Chunks stay directly in dist/: @ipython-mcp/worker-supervisor finds the worker's Python source relative to the
// module that holds its code (`<that directory>/python`), and the build copies it to dist/python.
import { builtinModules } from 'node:module';
import { defineConfig } from 'rolldown';

const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);

/** A bare specifier that is neither a workspace package nor relative: left to npm. */
function isExternal(id) {
  if (builtins.has(id) || id.startsWith('node:')) return true;
  if (id.startsWith('.') || id.startsWith('/') || id.startsWith('\0')) return false;
  return !id.startsWith('@ipython-mcp/');
}

export default defineConfig({
  input: { cli: 'src/cli.ts', index: 'src/index.ts' },
  platform: 'node',
  external: isExternal,
  output: {
    dir: 'dist',
    format: 'esm',
    cleanDir: true,
    entryFileNames: '[name].js',
    chunkFileNames: 'shared-[hash].js',
    sourcemap: true,
  },
});
