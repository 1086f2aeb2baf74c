// The syntax-tree lint rules (lint-rules.mjs): run with `node --test tooling/scripts/lint-rules.test.mjs`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCycles, positionalParameterProblems, relativeImports } from './lint-rules.mjs';

test('five positional parameters pass; six fail, in every kind of function', () => {
  const five = 'function f(a, b, c, d, e) {}\nconst g = (a, b, c, d, e) => a;\nclass K { m(a, b, c, d, e) {} constructor(a, b, c, d, e) {} }';
  assert.deepEqual(positionalParameterProblems('five.ts', five), []);
  const six = [
    'function declared(a: number, b, c, d, e, f) {}',
    'const arrow = (a, b, c, d, e, f) => a;',
    'class Holder {',
    '  method(a, b, c, d, e, f) {}',
    '  constructor(private readonly a: number, b, c, d, e, f) {}',
    '}',
    'const holder = { property: function (a, b, c, d, e, f) {} };',
    'interface Shape { signature(a: 1, b: 2, c: 3, d: 4, e: 5, f: 6): void }',
  ].join('\n');
  const problems = positionalParameterProblems('six.ts', six);
  assert.equal(problems.length, 6, problems.join('\n'));
  assert.match(problems[0], /^six\.ts:1: declared takes 6 positional parameters/);
  assert.match(problems[1], /^six\.ts:2: arrow takes 6/);
  assert.match(problems[2], /^six\.ts:4: method takes 6/);
  assert.match(problems[3], /^six\.ts:5: the constructor of Holder takes 6/);
  assert.match(problems[4], /^six\.ts:7: property takes 6/);
  assert.match(problems[5], /^six\.ts:8: signature takes 6/);
});

test('`this` does not count, a rest parameter counts as one, an options object as one', () => {
  const text = 'function f(this: unknown, a, b, c, d, e) {}\nfunction g(a, b, c, d, ...rest) {}\nfunction h({ a, b, c, d, e, f }) {}';
  assert.deepEqual(positionalParameterProblems('ok.ts', text), []);
});

test('relative imports are found in every form, type-only ones included; package imports are not', () => {
  const text = [
    "import { a } from './a.js';",
    "import type { B } from './b.js';",
    "import { type C, d } from '../c.js';",
    "export type { E } from './e.js';",
    "export * from './f.js';",
    "import './g.js';",
    "import {",
    "  h,",
    "  type H,",
    "} from './h.js';",
    "type I = import('./i.js').I;",
    "const j = await import('./j.js');",
    "import { k } from '@scope/k';",
    "import l from 'node:fs';",
    "// import { m } from './m.js';",
    "const n = 'import { n } from \'./n.js\'';",
  ].join('\n');
  assert.deepEqual(relativeImports('x.ts', text), ['./a.js', './b.js', '../c.js', './e.js', './f.js', './g.js', './h.js', './i.js', './j.js']);
});

test('an import cycle is found once, through type-only edges too; edges out of the graph are ignored', () => {
  const graph = new Map([
    ['types', ['handle']],
    ['handle', ['types', 'outside']],
    ['leaf', []],
    ['user', ['leaf', 'types']],
  ]);
  assert.deepEqual(importCycles(graph), [['types', 'handle', 'types']]);
  assert.deepEqual(importCycles(new Map([['a', ['b']], ['b', ['c']], ['c', []]])), []);
  assert.deepEqual(importCycles(new Map([['self', ['self']]])), [['self', 'self']]);
});
