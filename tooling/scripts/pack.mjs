#!/usr/bin/env node
// `npm run pack [-- DIRECTORY]`: build the server and pack it into a tarball that `npm install -g` takes, in
// one command from a source checkout (pnpm is the pinned one bootstrap.sh keeps in .tooling/, so it need not be
// on PATH). The set-up's output goes to .tooling/bootstrap.log and is shown only on failure; stdout gets the
// tarball's path.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const destination = resolve(process.argv[2] ?? root);
const log = join(root, '.tooling', 'bootstrap.log');
mkdirSync(join(root, '.tooling'), { recursive: true });
mkdirSync(destination, { recursive: true });

process.stderr.write(`pack: installing Node dependencies and building (log: ${log})\n`);
const bootstrap = spawnSync('bash', ['-c', `bash tooling/scripts/bootstrap.sh --node > "$0" 2>&1`, log], { cwd: root, stdio: 'inherit' });
if (bootstrap.status !== 0) {
  process.stderr.write(`pack: the build failed; its output follows\n${readFileSync(log, 'utf8')}`);
  process.exit(1);
}
const pnpm = join(root, '.tooling', 'node_modules', '.bin', 'pnpm');
const app = join(root, 'apps', 'ipython-mcp');
const packed = spawnSync(pnpm, ['pack', '--pack-destination', destination], {
  cwd: app,
  encoding: 'utf8',
  env: { ...process.env, npm_config_update_notifier: 'false' },
});
if (packed.status !== 0) {
  process.stderr.write(`pack: pnpm pack failed\n${packed.stdout}${packed.stderr}`);
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
const tarball = join(destination, `${manifest.name}-${manifest.version}.tgz`);
process.stdout.write(`${tarball}\n`);
