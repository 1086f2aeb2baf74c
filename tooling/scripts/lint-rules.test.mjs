// The syntax-tree lint rules (lint-rules.mjs): run with `node --test tooling/scripts/lint-rules.test.mjs`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { positionalParameterProblems } from './lint-rules.mjs';

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
