#!/usr/bin/env node
// Writes the README's settings table (between its markers) from the settings definitions:
//   node apps/ipython-mcp/scripts/settings-table.mjs           rewrite README.md
//   node apps/ipython-mcp/scripts/settings-table.mjs --check   write nothing; exit 1 when the table is stale
// The renderer is src/settings-table.ts, bundled here on the fly with rolldown (the workspace packages it reads must
// be built: `pnpm exec turbo run build`). src/settings-table.test.ts runs the same check in the test suite.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'rolldown';

const app = fileURLToPath(new URL('../', import.meta.url));
const readmePath = fileURLToPath(new URL('../../../README.md', import.meta.url));
// Inside the app's node_modules, so the bundle resolves the workspace packages as the app does.
const bundle = `${app}node_modules/.settings-table-${process.pid}.mjs`;
await build({
  input: `${app}src/settings-table.ts`,
  platform: 'node',
  external: (id) => !(id.startsWith('.') || id.startsWith('/') || id.startsWith('\0')),
  logLevel: 'silent',
  output: { file: bundle, format: 'esm' },
});
let withSettingsTable;
try {
  ({ withSettingsTable } = await import(pathToFileURL(bundle).href));
} finally {
  rmSync(bundle, { force: true });
}
const readme = readFileSync(readmePath, 'utf8');
const current = withSettingsTable(readme);
if (current === readme) process.exit(0);
if (process.argv.includes('--check')) {
  process.stderr.write('stale: the README settings table; run: node apps/ipython-mcp/scripts/settings-table.mjs\n');
  process.exit(1);
}
writeFileSync(readmePath, current);
process.stderr.write('wrote the README settings table\n');
