#!/usr/bin/env node
// publint --strict on every publishable (non-private) workspace package, against its built output and the file
// list its package manager would pack: `exports`/`types`/`main` must point at files that exist and get
// published, in the right format and condition order. Run it after a build:
//
//   pnpm exec turbo run build && node tooling/release-matrix/check-packages.mjs
//
// One line per package; exit 1 when any package has a message.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
// publint asks pnpm which files each package publishes; prefer the repository's pinned pnpm.
process.env.PATH = `${join(root, '.tooling', 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;

const directories = ['packages', 'apps'].flatMap((group) =>
  readdirSync(join(root, group)).map((name) => join(root, group, name)).filter((directory) => existsSync(join(directory, 'package.json'))),
);
let failed = 0;
for (const directory of directories) {
  const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8'));
  if (manifest.private) continue;
  const { messages, pkg } = await publint({ pkgDir: directory, pack: 'pnpm', level: 'suggestion', strict: true });
  const label = `${manifest.name} (${directory.slice(root.length + 1)})`;
  if (messages.length === 0) {
    process.stdout.write(`ok   ${label}\n`);
    continue;
  }
  failed += 1;
  process.stdout.write(`FAIL ${label}\n`);
  for (const message of messages) process.stdout.write(`     ${message.type}: ${formatMessage(message, pkg) ?? message.code}\n`);
}
process.stdout.write(failed === 0 ? 'publint: every publishable package passes\n' : `publint: ${failed} package(s) have problems\n`);
process.exit(failed === 0 ? 0 : 1);
