#!/usr/bin/env node
// Writes the license notices of every npm package inlined into a bundle (read from its source map), since the
// single-file dist/cli.js carries their code: `node scripts/bundled-licenses.mjs dist/cli.js.map dist/THIRD_PARTY_LICENSES.txt`.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const [mapPath, outPath] = process.argv.slice(2);
if (!mapPath || !outPath) throw new Error('usage: bundled-licenses.mjs <bundle.js.map> <output>');
const map = JSON.parse(readFileSync(mapPath, 'utf8'));
const roots = new Map();
for (const source of map.sources) {
  const absolute = resolve(dirname(mapPath), source);
  const index = absolute.lastIndexOf('/node_modules/');
  if (index < 0) continue;
  const parts = absolute.slice(index + '/node_modules/'.length).split('/');
  const name = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  roots.set(name, join(absolute.slice(0, index), 'node_modules', name));
}
const sections = [];
for (const [name, root] of [...roots].sort(([a], [b]) => a.localeCompare(b))) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const file = existsSync(root) ? readdirSync(root).find((entry) => /^(licen[cs]e|copying)(\.|$)/i.test(entry)) : undefined;
  const text = file ? readFileSync(join(root, file), 'utf8').trim() : `License: ${manifest.license ?? 'see the package'}`;
  sections.push(`${name}@${manifest.version} (${manifest.license ?? 'unknown'})\n\n${text}\n`);
}
writeFileSync(outPath, `dist/cli.js inlines these packages; their notices follow.\n\n${sections.join('\n---\n\n')}`);
