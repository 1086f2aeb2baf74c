// A Vitest reporter that writes where a suite's time went, one JSON file per run, when IPYTHON_MCP_TEST_TIMINGS
// names a directory (tooling/test.sh sets it; tooling/scripts/test-summary.mjs prints the table at the end of the
// run). Per test file: wall time of its tests and hooks (beforeAll start-ups included), import time, counts, and
// its slowest tests. Silent, and writes nothing, without the variable.
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
  }

  onTestRunEnd(testModules) {
    const directory = process.env.IPYTHON_MCP_TEST_TIMINGS;
    if (!directory) return;
    const root = this.root ?? process.cwd();
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
      return {
        file: relative(root, module.moduleId),
        ms: Math.round(diagnostic.duration),
        importMs: Math.round(diagnostic.collectDuration + diagnostic.setupDuration + diagnostic.prepareDuration + diagnostic.environmentSetupDuration),
        ...counts,
        slowest: tests.slice(0, 3),
      };
    });
    const name = packageName(root);
    mkdirSync(directory, { recursive: true });
    const file = join(directory, `vitest-${name.replace(/[^\w.-]+/g, '_')}-${process.pid}.json`);
    writeFileSync(file, `${JSON.stringify({ runner: 'vitest', package: name, wallMs: Date.now() - (this.started ?? Date.now()), files })}\n`);
  }
}
