// tooling/scripts/test-summary.mjs: the closing line and the "where the time went" table of tooling/test.sh.
// Run by tooling/test.sh: node --test tooling/scripts/test-summary.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const SCRIPT = new URL('./test-summary.mjs', import.meta.url).pathname;

function summary(log, files = null) {
  const directory = mkdtempSync(join(tmpdir(), 'test-summary-'));
  try {
    writeFileSync(join(directory, 'test.log'), log);
    const args = [SCRIPT, join(directory, 'test.log')];
    if (files) {
      const timings = join(directory, 'timings');
      spawnSync('mkdir', [timings]);
      for (const [name, text] of Object.entries(files)) writeFileSync(join(timings, name), text);
      args.push(timings);
    }
    const run = spawnSync(process.execPath, args, { encoding: 'utf8' });
    return { code: run.status, out: run.stdout, err: run.stderr };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const LOG = [
  '@ipython-mcp/protocol:test:  \u001b[32m✓\u001b[39m src/a.test.ts (3 tests) 1234ms',
  '@ipython-mcp/protocol:test:       Tests  3 passed (3)',
  '@ipython-mcp/python-worker:test: 2 passed, 1 skipped in 4.20s',
].join('\n');

test('counts what vitest and pytest reported, and exits 0 when nothing failed', () => {
  const { code, out } = summary(LOG);
  assert.equal(code, 0);
  assert.equal(out, 'tests: 5 passed, 0 failed\n');
});

test('a failure or an error, or nothing passed at all, exits 1', () => {
  assert.equal(summary(`${LOG}\n@x:test:       Tests  1 failed | 2 passed (3)`).code, 1);
  assert.equal(summary(`${LOG}\n@y:test: 1 passed, 1 error in 1.00s`).code, 1);
  const none = summary('nothing here');
  assert.equal(none.code, 1);
  assert.equal(none.out, 'tests: 0 passed, 0 failed\n');
});

test('names each failed test (vitest, pytest) at the end, once, with its package', () => {
  const log = [
    LOG,
    'ipython-mcp:test:      \u001b[33m✓\u001b[39m doctor: ok at the hub, FAIL where upgrades are refused 3ms',
    'ipython-mcp:test: \u001b[41m\u001b[1m FAIL \u001b[22m\u001b[49m \u001b[30m\u001b[45m side by side \u001b[49m\u001b[39m test/a.e2e.test.ts\u001b[2m > \u001b[22mgroup\u001b[2m > \u001b[22mkeeps the namespace',
    'ipython-mcp:test: \u001b[41m\u001b[1m FAIL \u001b[22m\u001b[49m \u001b[30m\u001b[45m side by side \u001b[49m\u001b[39m test/a.e2e.test.ts\u001b[2m > \u001b[22mgroup\u001b[2m > \u001b[22mkeeps the namespace',
    '@ipython-mcp/python-worker:test: FAILED tests/test_x.py::test_y - AssertionError: 1 != 2',
    'ipython-mcp:test:       Tests  1 failed | 4 passed (5)',
    '@ipython-mcp/python-worker:test: 1 failed, 2 passed in 3.00s',
  ].join('\n');
  const { code, out } = summary(log);
  assert.equal(code, 1);
  assert.ok(out.endsWith(['Failed (2):', '  ipython-mcp: test/a.e2e.test.ts > group > keeps the namespace', '  @ipython-mcp/python-worker: tests/test_x.py::test_y', 'tests: 11 passed, 2 failed\n'].join('\n')), out);
});

test("the release matrix's cells are counted from its table, whether its pytest output is printed or not", () => {
  const table = '@ipython-mcp/release-matrix:test: | default | 3.11.7 | 9.19.1  | msgpack | 709 passed | ok        | PASS   | 374     |';
  assert.equal(summary(`${LOG}\n${table}`).out, "tests: 714 passed, 0 failed (709 of them the release matrix: the Python suite again on the release's pins)\n");
  const failing = [LOG, '@ipython-mcp/release-matrix:test: 1 failed, 708 passed in 300.00s', table.replace('709 passed', '1 failed, 708 passed')].join('\n');
  const { code, out } = summary(failing);
  assert.equal(code, 1);
  assert.equal(out, "tests: 713 passed, 1 failed (708 of them the release matrix: the Python suite again on the release's pins)\n");
});

test('the table: steps with their phases under them, each package under the step that ran it, files slowest first', () => {
  const { code, out } = summary(LOG, {
    'steps.tsv': ['  bootstrap: build (turbo)\t30.5', 'bootstrap (install, build, test environments)\t40', 'test suites, TypeScript lane (vitest)\t600', 'test suites, Python lane (pytest, release matrix)\t300', 'total\t700'].join('\n'),
    'turbo-steps.tsv': ['test suites, TypeScript lane (vitest)\tnode.json', 'test suites, Python lane (pytest, release matrix)\tpython.json'].join('\n'),
    'python.json': JSON.stringify({ tasks: [{ task: 'test', package: '@ipython-mcp/python-worker', execution: { startTime: 0, endTime: 250_000 } }] }),
    'node.json': JSON.stringify({
      tasks: [
        { task: 'test', package: '@ipython-mcp/protocol', execution: { startTime: 0, endTime: 61_000 } },
        { task: 'build', package: '@ipython-mcp/protocol', execution: { startTime: 0, endTime: 9_000 } },
      ],
    }),
    'vitest-app-1.json': JSON.stringify({
      runner: 'vitest',
      package: 'ipython-mcp',
      files: [{ file: 'test/slow.e2e.test.ts', ms: 90_000, importMs: 400, passed: 4, failed: 0, skipped: 1, slowest: [['starts a server', 30_000]] }],
    }),
    'pytest.xml': '<testsuite><testcase classname="tests.test_channel" name="test_a" time="100.4"/><testcase classname="tests.test_channel" name="test_b" time="20"/></testsuite>',
  });
  assert.equal(code, 0);
  const lines = out.split('\n');
  const at = (text) => lines.findIndex((line) => line.includes(text));
  assert.match(out, /total 11 min 40 s/);
  assert.ok(at('bootstrap (install') < at('bootstrap: build (turbo)'), 'a phase is listed under its step');
  assert.ok(at('TypeScript lane') < at('@ipython-mcp/protocol ') && at('@ipython-mcp/protocol ') < at('Python lane'));
  assert.ok(at('Python lane') < at('@ipython-mcp/python-worker'));
  assert.equal(lines.filter((line) => line.includes('@ipython-mcp/protocol')).length, 2, 'once as a task, once as a file from the log');
  assert.match(lines[at('1 min 01 s')], /@ipython-mcp\/protocol/);
  // Files: pytest's two cases add up per file; the vitest reporter's file; the log's line for a package without one.
  assert.ok(at('tests/test_channel.py') < at('test/slow.e2e.test.ts') && at('test/slow.e2e.test.ts') < at('src/a.test.ts'));
  assert.match(lines[at('tests/test_channel.py')], /2 min 00 s\s+2\s+python \(pytest\)\s+tests\/test_channel.py\s+test_a 100.4 s/);
  assert.match(lines[at('test/slow.e2e.test.ts')], /1 min 30 s\s+5\s+ipython-mcp/);
  assert.match(out, /3 of 3; 10 tests/);
});

test("a suite's groups (files side by side, files alone) under its package, and each file's group beside it", () => {
  const { code, out } = summary(`${LOG}\nipython-mcp:test:  ✓ test/a.e2e.test.ts (2 tests) 5000ms`, {
    'steps.tsv': ['test suites, TypeScript lane (vitest)\t600', 'total\t700'].join('\n'),
    'run.json': JSON.stringify({ tasks: [{ task: 'test', package: 'ipython-mcp', execution: { startTime: 0, endTime: 500_000 } }] }),
    'vitest-ipython-mcp-1.json': JSON.stringify({
      runner: 'vitest',
      package: 'ipython-mcp',
      groups: { 'side by side': { files: 2, wallMs: 300_000 }, alone: { files: 1, wallMs: 190_000 } },
      files: [
        { file: 'test/a.e2e.test.ts', group: 'side by side', ms: 5_000, importMs: 0, passed: 2, failed: 0, skipped: 0, slowest: [] },
        { file: 'test/b.e2e.test.ts', group: 'alone', ms: 190_000, importMs: 0, passed: 1, failed: 0, skipped: 0, slowest: [] },
      ],
    }),
  });
  assert.equal(code, 0);
  const lines = out.split('\n');
  const at = (text) => lines.findIndex((line) => line.includes(text));
  assert.ok(at('    ipython-mcp ') < at('side by side (2 files)') && at('side by side (2 files)') < at('alone (1 file)'));
  assert.match(lines[at('side by side (2 files)')], /5 min 00 s/);
  assert.match(lines[at('alone (1 file)')], /3 min 10 s/);
  assert.match(lines[at('test/b.e2e.test.ts')], /ipython-mcp \(alone\)/);
  assert.equal(lines.filter((line) => line.includes('test/a.e2e.test.ts')).length, 1, 'a reported package is not read again from the log');
});

test("one suite's groups run as two steps (side by side beside the other suites, then alone): each group under its own step", () => {
  const { code, out } = summary(`${LOG}\nipython-mcp:test:  ✓ test/a.e2e.test.ts (2 tests) 5000ms`, {
    'steps.tsv': ['test suites, the other TypeScript packages\t200', 'test suites, apps/ipython-mcp files side by side\t300', 'test suites, apps/ipython-mcp files alone\t190', 'total\t600'].join('\n'),
    'turbo-steps.tsv': ['test suites, the other TypeScript packages\trun-a.json', 'test suites, apps/ipython-mcp files side by side\trun-b.json', 'test suites, apps/ipython-mcp files alone\trun-c.json'].join('\n'),
    'run-a.json': JSON.stringify({ tasks: [{ task: 'test', package: '@ipython-mcp/protocol', execution: { startTime: 250_000, endTime: 260_000 } }] }),
    'run-b.json': JSON.stringify({ tasks: [{ task: 'test', package: 'ipython-mcp', execution: { startTime: 101_000, endTime: 399_000 } }] }),
    // The second run starts within a second of the first one's end (nothing between the steps).
    'run-c.json': JSON.stringify({ tasks: [{ task: 'test', package: 'ipython-mcp', execution: { startTime: 399_200, endTime: 589_000 } }] }),
    'vitest-ipython-mcp-1.json': JSON.stringify({
      runner: 'vitest',
      package: 'ipython-mcp',
      started: 102_000,
      groups: { 'side by side': { files: 2, wallMs: 290_000 } },
      files: [{ file: 'test/a.e2e.test.ts', group: 'side by side', ms: 5_000, importMs: 0, passed: 2, failed: 0, skipped: 0, slowest: [] }],
    }),
    'vitest-ipython-mcp-2.json': JSON.stringify({
      runner: 'vitest',
      package: 'ipython-mcp',
      started: 399_500,
      groups: { alone: { files: 1, wallMs: 180_000 } },
      files: [{ file: 'test/b.e2e.test.ts', group: 'alone', ms: 180_000, importMs: 0, passed: 1, failed: 0, skipped: 0, slowest: [] }],
    }),
  });
  assert.equal(code, 0);
  const lines = out.split('\n');
  const at = (text) => lines.findIndex((line) => line.includes(text));
  assert.ok(at('the other TypeScript packages') < at('    @ipython-mcp/protocol') && at('    @ipython-mcp/protocol') < at('files side by side'));
  assert.ok(at('files side by side') < at('side by side (2 files)') && at('side by side (2 files)') < at('files alone'));
  assert.ok(at('files alone') < at('alone (1 file)'));
  assert.equal(lines.filter((line) => /^\s+ipython-mcp\s/.test(line)).length, 2, 'the suite once under each step');
  assert.equal(lines.filter((line) => line.includes('side by side (2 files)')).length, 1, 'each group once, under its own run');
  assert.match(lines[at('test/b.e2e.test.ts')], /ipython-mcp \(alone\)/);
});

test('two runs of one suite side by side (its timing and pages groups): each group under the step its run names', () => {
  const step = (name, seconds) => `test suites, apps/ipython-mcp: ${name}\t${seconds}`;
  const run = (pid, stepName, group, files) =>
    JSON.stringify({ runner: 'vitest', package: 'ipython-mcp', step: `test suites, apps/ipython-mcp: ${stepName}`, started: 100_300, groups: { [group]: { files, wallMs: 200_000 } }, files: [] });
  const { code, out } = summary(LOG, {
    'steps.tsv': [step('timing files', 200), step('page files', 210), 'total\t300'].join('\n'),
    'turbo-steps.tsv': ['test suites, apps/ipython-mcp: timing files\trun-a.json', 'test suites, apps/ipython-mcp: page files\trun-b.json'].join('\n'),
    // Both runs start within the same second.
    'run-a.json': JSON.stringify({ tasks: [{ task: 'test', package: 'ipython-mcp', execution: { startTime: 100_000, endTime: 300_000 } }] }),
    'run-b.json': JSON.stringify({ tasks: [{ task: 'test', package: 'ipython-mcp', execution: { startTime: 100_100, endTime: 310_000 } }] }),
    'vitest-ipython-mcp-1.json': run(1, 'timing files', 'timing', 10),
    'vitest-ipython-mcp-2.json': run(2, 'page files', 'pages', 9),
  });
  assert.equal(code, 0);
  const lines = out.split('\n');
  const at = (text) => lines.findIndex((line) => line.includes(text));
  assert.equal(lines.filter((line) => line.includes('timing (10 files)')).length, 1);
  assert.equal(lines.filter((line) => line.includes('pages (9 files)')).length, 1);
  assert.ok(at(': timing files') < at('timing (10 files)') && at('timing (10 files)') < at(': page files') && at(': page files') < at('pages (9 files)'));
});
