// A Vitest reporter that writes where a suite's time went, one JSON file per run, when IPYTHON_MCP_TEST_TIMINGS
// names a directory (tooling/test.sh sets it; tooling/scripts/test-summary.mjs prints the table at the end of the
// run). Per test file: wall time of its tests and hooks (beforeAll start-ups included), import time, counts, its
// slowest tests, and the group (Vitest project) that ran it; per group, its wall time from its first file's start to
// its last file's end (files of a group may run side by side). Silent, and writes nothing, without the variable.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

function packageName(directory) {
  try {
    return JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')).name ?? directory;
  } catch {
    return directory;
  }
}

export class TimingReporter {
  onInit(vitest) {
    this.root = vitest?.config?.root ?? process.cwd();
    this.started = Date.now();
    /** moduleId -> [started, ended] (epoch ms) */
    this.spans = new Map();
  }

  onTestModuleStart(module) {
    this.spans?.set(module.moduleId, [Date.now(), Date.now()]);
  }

  onTestModuleEnd(module) {
    const span = this.spans?.get(module.moduleId);
    if (span) span[1] = Date.now();
  }

  onTestRunEnd(testModules) {
    const directory = process.env.IPYTHON_MCP_TEST_TIMINGS;
    if (!directory) return;
    const root = this.root ?? process.cwd();
    // A suite without projects has one unnamed group: nothing to say. A run of one named project (tooling/test.sh runs
    // apps/ipython-mcp's groups one at a time) still names it.
    const grouped = testModules.some((module) => (module.project?.name ?? '') !== '');
    const files = testModules.map((module) => {
      const diagnostic = module.diagnostic();
      const counts = { passed: 0, failed: 0, skipped: 0 };
      const tests = [];
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
        tests.push([test.fullName, Math.round(test.diagnostic()?.duration ?? 0)]);
      }
      tests.sort((a, b) => b[1] - a[1]);
      const group = grouped ? (module.project?.name ?? '') : '';
      return {
        file: relative(root, module.moduleId),
        ...(group ? { group } : {}),
        ms: Math.round(diagnostic.duration),
        importMs: Math.round(diagnostic.collectDuration + diagnostic.setupDuration + diagnostic.prepareDuration + diagnostic.environmentSetupDuration),
        ...counts,
        slowest: tests.slice(0, 3),
      };
    });
    const groups = {};
    for (const module of testModules) {
      const span = this.spans?.get(module.moduleId);
      const group = module.project?.name;
      if (!grouped || !span || !group) continue;
      const entry = (groups[group] ??= { files: 0, started: span[0], ended: span[1] });
      entry.files += 1;
      entry.started = Math.min(entry.started, span[0]);
      entry.ended = Math.max(entry.ended, span[1]);
    }
    const name = packageName(root);
    mkdirSync(directory, { recursive: true });
    const file = join(directory, `vitest-${name.replace(/[^\w.-]+/g, '_')}-${process.pid}.json`);
    writeFileSync(file, `${JSON.stringify({ runner: 'vitest', package: name, step: process.env.IPYTHON_MCP_TEST_STEP || undefined, started: this.started, wallMs: Date.now() - (this.started ?? Date.now()), groups: Object.fromEntries(Object.entries(groups).map(([group, entry]) => [group, { files: entry.files, wallMs: entry.ended - entry.started }])), files })}\n`);
  }
}
