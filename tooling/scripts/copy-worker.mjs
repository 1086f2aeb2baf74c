// Copies the Python worker package into a package's dist/, so the built JS can spawn it from anywhere
// (a source checkout, a packed tarball, a global install) without the repository around it.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const source = join(root, 'python', 'ipython_mcp_worker');
const target = resolve(process.argv[2] ?? 'dist/python', 'ipython_mcp_worker');
rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
// Every .py of the package and its subpackages, at the same relative path (no caches, no stray files).
for (const name of readdirSync(source, { recursive: true, encoding: 'utf8' })) {
  if (!name.endsWith('.py') || name.split('/').includes('__pycache__')) continue;
  mkdirSync(dirname(join(target, name)), { recursive: true });
  cpSync(join(source, name), join(target, name));
}
