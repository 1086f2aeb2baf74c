// The end of tooling/test.sh: where the run's time went, then one closing line "tests: N passed, N failed".
//   node tooling/scripts/test-summary.mjs TEST_LOG [TIMINGS_DIR]
// TEST_LOG is the turbo test log (vitest's "Tests ..." lines and pytest's "N passed in" lines are counted).
// TIMINGS_DIR (tooling/test.sh's IPYTHON_MCP_TEST_TIMINGS) holds: steps.tsv (each step's and bootstrap phase's wall
// seconds), turbo's run summary (.turbo/runs/*.json: each package's test task), vitest-*.json (the timing reporter
// of tooling/test-support: per test file) and pytest.xml (JUnit XML: per test). Without it, only the closing line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TOP_FILES = 20;
/** Counts from the runners' own closing lines in the log. */
function countTests(text) {
  let passed = 0;
  let failed = 0;
  let matrix = 0;
  for (const line of text.split('\n')) {
    // The release matrix prints pytest's own output only when something failed, but its table always: count its cells
    // from the table's pytest column ("| default | 3.11.7 | 9.19.1 | msgpack | 709 passed | ok | PASS | 374 |").
    const matrixCell = /^@ipython-mcp\/release-matrix:test: \|(?:[^|]*\|){4}\s*((?:\d+ \w+(?:, )?)+)\s*\|/.exec(line);
    if (line.startsWith('@ipython-mcp/release-matrix:test:') && !matrixCell) continue;
    const vitest = /\bTests\s+(.*)\(\d+\)\s*$/.exec(line);
    const pytest = /^(?:\S+:\s+)?(?:=+ )?((?:\d+ \w+(?:, )?)+) in [\d.]+s/.exec(line);
    const counts = matrixCell?.[1] ?? vitest?.[1] ?? pytest?.[1];
    if (!counts) continue;
    const cellPassed = Number(/(\d+) passed/.exec(counts)?.[1] ?? 0);
    passed += cellPassed;
    if (matrixCell) matrix += cellPassed;
    failed += Number(/(\d+) failed/.exec(counts)?.[1] ?? 0) + Number(/(\d+) errors?/.exec(counts)?.[1] ?? 0);
  }
  return { passed, failed, matrix };
}

/** steps.tsv: "name<TAB>seconds" lines; bootstrap phases are indented by two spaces. */
function readSteps(directory) {
  const file = join(directory, 'steps.tsv');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, seconds] = line.split('\t');
      return { name, seconds: Number(seconds) };
    });
}

/**
 * Each package's test task from turbo's run summaries (.turbo/runs/*.json, one per turbo run): { name, seconds, started,
 * ended, summary } (epoch ms; summary: the file's name).
 */
function readTurboTasks(directory) {
  const tasks = [];
  for (const name of readdirSync(directory).filter((entry) => entry.endsWith('.json') && !entry.startsWith('vitest-'))) {
    try {
      const summary = JSON.parse(readFileSync(join(directory, name), 'utf8'));
      for (const task of summary.tasks ?? []) {
        const { startTime, endTime } = task.execution ?? {};
        if (task.task === 'test' && Number.isFinite(startTime) && Number.isFinite(endTime)) tasks.push({ name: task.package, seconds: (endTime - startTime) / 1000, started: startTime, ended: endTime, summary: name });
      }
    } catch {
      // not a turbo summary
    }
  }
  return tasks.sort((a, b) => b.seconds - a.seconds);
}

/** The vitest groups (projects) from the timing reporter, of every run: [{ package, group, files, wallMs, started }]. */
function readGroups(directory) {
  const groups = [];
  for (const name of readdirSync(directory).filter((entry) => entry.startsWith('vitest-') && entry.endsWith('.json'))) {
    const run = JSON.parse(readFileSync(join(directory, name), 'utf8'));
    for (const [group, entry] of Object.entries(run.groups ?? {})) groups.push({ package: run.package, group, ...entry, started: run.started ?? null, step: run.step ?? null });
  }
  return groups;
}

/** turbo-steps.tsv: "step name<TAB>summary file" for each turbo run tooling/test.sh made: Map(step -> Set(file)). */
function readStepSummaries(directory) {
  const file = join(directory, 'turbo-steps.tsv');
  const byStep = new Map();
  if (!existsSync(file)) return byStep;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const [step, summary] = line.split('\t');
    if (!byStep.has(step)) byStep.set(step, new Set());
    byStep.get(step).add(summary);
  }
  return byStep;
}

/** Whether a run that started at a moment (epoch ms) falls in a task's span; an unknown moment counts as inside. */
function within(moment, started, ended) {
  return moment === null || (moment >= started && moment <= ended);
}

/**
 * Per test file: { package, file, seconds, tests, slowest } from the vitest reporter files and pytest's JUnit XML;
 * for a package whose vitest config has no timing reporter, from the default reporter's "✓ file (N tests) T" lines.
 */
function readFiles(directory, text) {
  const files = [];
  const reported = new Set();
  for (const name of readdirSync(directory).filter((entry) => entry.startsWith('vitest-') && entry.endsWith('.json'))) {
    const run = JSON.parse(readFileSync(join(directory, name), 'utf8'));
    reported.add(run.package);
    for (const file of run.files) {
      files.push({
        package: file.group ? `${run.package} (${file.group})` : run.package,
        file: file.file,
        seconds: (file.ms + file.importMs) / 1000,
        tests: file.passed + file.failed + file.skipped,
        slowest: file.slowest?.[0] ? `${file.slowest[0][0]} ${(file.slowest[0][1] / 1000).toFixed(1)} s` : '',
      });
    }
  }
  for (const line of text.split('\n')) {
    const match = /^(\S+):test:\s+[✓×]\s+(\S+)\s+\((\d+) tests?[^)]*\)\s+([\d.]+)\s*(ms|s)\b/.exec(line);
    if (!match || reported.has(match[1])) continue;
    files.push({ package: match[1], file: match[2], seconds: Number(match[4]) / (match[5] === 'ms' ? 1000 : 1), tests: Number(match[3]), slowest: '(from the log)' });
  }
  const junit = join(directory, 'pytest.xml');
  if (existsSync(junit)) {
    const byFile = new Map();
    for (const match of readFileSync(junit, 'utf8').matchAll(/<testcase\b([^>]*)>/g)) {
      const attribute = (key) => new RegExp(`\\b${key}="([^"]*)"`).exec(match[1])?.[1];
      const classname = attribute('classname') ?? '?';
      const file = `${classname.split('.').slice(0, 2).join('/')}.py`;
      const seconds = Number(attribute('time') ?? 0);
      const entry = byFile.get(file) ?? { package: 'python (pytest)', file, seconds: 0, tests: 0, top: ['', 0] };
      entry.seconds += seconds;
      entry.tests += 1;
      if (seconds > entry.top[1]) entry.top = [attribute('name') ?? '?', seconds];
      byFile.set(file, entry);
    }
    for (const entry of byFile.values()) files.push({ ...entry, slowest: entry.top[0] ? `${entry.top[0]} ${entry.top[1].toFixed(1)} s` : '' });
  }
  return files.sort((a, b) => b.seconds - a.seconds);
}

function table(rows, aligns) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  return rows.map((row) => row.map((cell, column) => (aligns[column] === 'r' ? String(cell).padStart(widths[column]) : String(cell).padEnd(widths[column]))).join('  ').trimEnd());
}

function minutes(seconds) {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

/** The "where the time went" text for a timings directory, or '' when it holds nothing. */
function timeTable(directory, text) {
  if (!directory || !existsSync(directory)) return '';
  const steps = readSteps(directory);
  const tasks = readTurboTasks(directory);
  const files = readFiles(directory, text);
  const groups = readGroups(directory);
  const stepSummaries = readStepSummaries(directory);
  const out = [];
  const total = steps.find((step) => step.name === 'total')?.seconds ?? null;
  const share = (seconds) => (total ? `${((seconds / total) * 100).toFixed(0)}%` : '');
  if (steps.length > 0) {
    out.push('', `Where the time went (wall clock${total ? `, total ${minutes(total)}` : ''}):`);
    const rows = [['step', 'time', 'share']];
    // A step's own phases (indented: the bootstrap's) end, and are written, before the step itself.
    let phases = [];
    for (const step of steps.filter((entry) => entry.name !== 'total')) {
      if (step.name.startsWith('  ')) {
        phases.push([`    ${step.name.trim()}`, minutes(step.seconds), share(step.seconds)]);
        continue;
      }
      rows.push([`  ${step.name}`, minutes(step.seconds), share(step.seconds)], ...phases);
      phases = [];
      if (step.name.startsWith('test suites')) {
        // Each package's suite under the step whose turbo run ran it (tooling/test.sh runs some steps side by side);
        // without turbo-steps.tsv, every suite under the one step.
        const summaries = stepSummaries.get(step.name);
        for (const task of tasks.filter((entry) => !summaries || summaries.has(entry.summary))) {
          rows.push([`    ${task.name}`, minutes(task.seconds), share(task.seconds)]);
          // A suite's groups (Vitest projects: files side by side, files alone), each from its first start to its last end.
          // A run that names its step (IPYTHON_MCP_TEST_STEP, set by tooling/test.sh) goes under that step only: two turbo
          // runs of one package side by side start within the same second.
          const ofTask = (group) => group.package === task.name && (group.step === null ? within(group.started, task.started, task.ended) : group.step === step.name);
          for (const entry of groups.filter(ofTask)) {
            rows.push([`      ${entry.group} (${entry.files} file${entry.files === 1 ? '' : 's'})`, minutes(entry.wallMs / 1000), share(entry.wallMs / 1000)]);
          }
        }
      }
    }
    out.push(...table(rows, ['l', 'r', 'r']));
  }
  if (files.length > 0) {
    const sum = files.reduce((all, file) => all + file.seconds, 0);
    const count = files.reduce((all, file) => all + file.tests, 0);
    out.push('', `Slowest test files (${Math.min(TOP_FILES, files.length)} of ${files.length}; ${count} tests in ${minutes(sum)} of tests, hooks and imports):`);
    const rows = [['time', 'tests', 'package', 'file', 'slowest test']];
    for (const file of files.slice(0, TOP_FILES)) rows.push([minutes(file.seconds), file.tests, file.package, file.file, file.slowest.slice(0, 70)]);
    out.push(...table(rows, ['r', 'r', 'l', 'l', 'l']));
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

/**
 * The failed tests by name, from vitest's "FAIL  file > test" lines and pytest's "FAILED file::test" lines, each once and
 * prefixed with its package: the last lines of the run are often all a reader (or a CI page showing its tail) sees.
 */
function failedTests(text) {
  const names = new Set();
  for (const line of text.split('\n')) {
    const vitest = /^(?:(\S+):test:\s+)?\s*FAIL\s+.*?(\S+\.(?:test|spec)\.[cm]?[jt]sx?(?: >.*?)?)\s*$/.exec(line);
    const pytest = /^(?:(\S+):test:\s+)?FAILED (\S+::\S+)/.exec(line);
    const found = vitest ?? pytest;
    if (found) names.add(`${found[1] ? `${found[1]}: ` : ''}${found[2]}`);
  }
  return [...names];
}

const text = readFileSync(process.argv[2] ?? 0, 'utf8').replace(/\u001b\[[0-9;]*m/g, '');
const { passed, failed, matrix } = countTests(text);
process.stdout.write(timeTable(process.argv[3], text));
const failures = failedTests(text);
if (failures.length > 0) process.stdout.write(`\nFailed (${failures.length}):\n${failures.map((name) => `  ${name}`).join('\n')}\n`);
const ofMatrix = matrix > 0 ? ` (${matrix} of them the release matrix: the Python suite again on the release's pins)` : '';
process.stdout.write(`tests: ${passed} passed, ${failed} failed${ofMatrix}\n`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
