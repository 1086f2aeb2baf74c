// Adds up what every runner in a turbo test log reported (vitest's "Tests ..." lines, pytest's "N passed in")
// and prints one closing line: "tests: N passed, N failed".
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2] ?? 0, 'utf8').replace(/\u001b\[[0-9;]*m/g, '');
let passed = 0;
let failed = 0;
for (const line of text.split('\n')) {
  const vitest = /\bTests\s+(.*)\(\d+\)\s*$/.exec(line);
  const pytest = /^(?:\S+:\s+)?(?:=+ )?((?:\d+ \w+(?:, )?)+) in [\d.]+s/.exec(line);
  const counts = vitest?.[1] ?? pytest?.[1];
  if (!counts) continue;
  passed += Number(/(\d+) passed/.exec(counts)?.[1] ?? 0);
  failed += Number(/(\d+) failed/.exec(counts)?.[1] ?? 0) + Number(/(\d+) errors?/.exec(counts)?.[1] ?? 0);
}
process.stdout.write(`tests: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
