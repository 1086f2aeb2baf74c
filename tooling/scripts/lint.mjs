// Project lint for one TypeScript package (run from the package directory):
//  - file names are kebab-case;
//  - library code never writes to stdout (the MCP channel) and never uses console;
//  - no relative import reaches into another package, and no package imports an app;
//  - no function takes more than MAX_POSITIONAL_PARAMETERS positional parameters (lint-rules.mjs);
//  - no import cycle between a package's own modules, type-only imports included (lint-rules.mjs).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { importCycles, positionalParameterProblems, relativeImports } from './lint-rules.mjs';

const root = process.cwd();
const isApp = root.includes('/apps/');
const problems = [];

function walk(directory) {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist') walk(path);
      continue;
    }
    if (!/\.(ts|mts|mjs)$/.test(name)) continue;
    const base = name.replace(/\.(test|e2e\.test)?\.?(ts|mts|mjs)$/, '').replace(/\.d$/, '');
    if (!/^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+)*$/.test(base)) problems.push(`${relative(root, path)}: file names are kebab-case`);
    const text = readFileSync(path, 'utf8');
    const isTest = /\.test\.ts$/.test(name) || path.includes('/test/');
    if (!isTest && !isApp) {
      if (/\bconsole\.(log|info|debug|warn|error)\(/.test(text)) problems.push(`${relative(root, path)}: no console in library code (use the stderr logger)`);
      if (/process\.stdout\.write/.test(text)) problems.push(`${relative(root, path)}: library code must not write to stdout`);
    }
    if (/from ['"]\.\.\/\.\.\/(packages|apps)\//.test(text)) problems.push(`${relative(root, path)}: import other packages by name, not by path`);
    if (!isApp && /from ['"](ipython-mcp|ipython-code-mode)['"]/.test(text)) problems.push(`${relative(root, path)}: packages must not import apps`);
    if (!name.endsWith('.d.ts')) problems.push(...positionalParameterProblems(relative(root, path), text));
  }
}

walk(join(root, 'src'));
findCycles(join(root, 'src'));

// Import cycles between a package's own modules are errors, type-only imports included (lint-rules.mjs).
function findCycles(sourceRoot) {
  const graph = new Map();
  const collect = (directory) => {
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (statSync(path).isDirectory()) {
        collect(path);
        continue;
      }
      if (!name.endsWith('.ts') || name.endsWith('.test.ts')) continue;
      const targets = relativeImports(path, readFileSync(path, 'utf8')).map((specifier) => join(dirname(path), specifier.replace(/\.js$/, '.ts')));
      graph.set(path, targets);
    }
  };
  collect(sourceRoot);
  for (const cycle of importCycles(graph)) problems.push(`import cycle: ${cycle.map((item) => relative(root, item)).join(' -> ')}`);
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
