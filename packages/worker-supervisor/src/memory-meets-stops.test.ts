// The memory guard meeting the other stops of the same operation (issue 51), through the real Runtime and a real
// Python worker: a cell stopped by its deadline or a cancel grows past the memory limit while it is being stopped
// (in its KeyboardInterrupt handler), or past the hard margin; or it grows past the limit first and the deadline
// lands during the memory stop's grace. Each ends in one interrupt raised, one replacement at most, and one outcome
// that names the first stop and the memory guard, with the limit, the peak and the epoch; the runtime keeps answering.
import { eventually, isAlive as alive, testPython } from '@ipython-mcp/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runtime } from './runtime.js';
import type { OperationOutcome } from './runtime-types.js';
import { watchedLocalBackend } from '../test/watched-backend.js';

const LIMIT_MB = 300;
/** limit + max(limit / 4, 64 MiB) */
const HARD_MB = LIMIT_MB + 75;
const DEADLINE_MS = 300;

/** Every interrupt the runtime sends, with its reason. */
const interrupts: (string | undefined)[] = [];
const watchedBackend = watchedLocalBackend({ onInterrupt: (_id, reason) => interrupts.push(reason) });

let runtime: Runtime;
const pids = new Set<number>();
beforeAll(async () => {
  runtime = new Runtime({ python: testPython(), backend: watchedBackend, operationTimeoutMs: DEADLINE_MS, interruptionGraceMs: 4000, memoryLimitMb: LIMIT_MB, warmStandby: false });
  runtime.start();
  expect((await runtime.run('execute', { code: 'kept = "before"' })).ok).toBe(true);
});
afterAll(async () => {
  for (const pid of runtime.workerPids()) pids.add(pid);
  await runtime.close();
  const left = await eventually(() => [...pids].filter(alive), (alivePids) => alivePids.length === 0, 5_000);
  expect(left).toEqual([]);
});

/** MiB the worker holds now. */
function baseMb(): number {
  const now = runtime.status().memoryMb;
  if (now === null) throw new Error('the worker is not measurable');
  return now;
}

/**
 * A cell that sleeps until interrupted, then, in its handler, allocates `mb` MiB (held by the handler's frame, or
 * by a global), gives the watch time to read it, and re-raises. `grow`: instead, 8 MiB at a time up to `mb`.
 */
function handlerCell(mb: number, hold: 'local' | 'global', grow = false): string {
  const allocate = grow ? [`    for _ in range(${Math.ceil(mb / 8)}):`, "        held.append(b'x' * 2**23)"] : [`    held.append(b'x' * (${mb} * 2**20))`];
  return [
    'import time',
    ...(hold === 'global' ? ['held = []'] : []),
    'def cell():',
    ...(hold === 'local' ? ['    held = []'] : []),
    '    try:',
    '        time.sleep(10**6)',
    '    except KeyboardInterrupt:',
    ...allocate.map((line) => `    ${line}`),
    '        time.sleep(0.5)',
    '        raise',
    'cell()',
  ].join('\n');
}

async function stopped(code: string, first: 'deadline' | 'cancel', timeoutMs?: number): Promise<{ outcome: OperationOutcome; sent: (string | undefined)[]; epochBefore: number }> {
  for (const pid of runtime.workerPids()) pids.add(pid);
  const epochBefore = runtime.epoch;
  const before = interrupts.length;
  const controller = new AbortController();
  const timer = first === 'cancel' ? setTimeout(() => controller.abort(), 150) : undefined;
  const outcome = await runtime.run('execute', { code }, { signal: controller.signal, timeoutMs });
  clearTimeout(timer);
  return { outcome, sent: interrupts.slice(before), epochBefore };
}

async function expectAnswering(): Promise<void> {
  const next = await runtime.run('execute', { code: '6 * 7' });
  expect(next.ok && (next.result.result as { value?: unknown }).value).toBe(42);
  expect(runtime.status().state).toBe('ready');
  expect(baseMb()).toBeLessThan(LIMIT_MB);
}

const FIRST = ['deadline', 'cancel'] as const;
const codeOf = { deadline: 'operation_timeout', cancel: 'operation_cancelled' };
const wordsOf = { deadline: 'the operation passed its deadline', cancel: 'the operation was cancelled' };
const kindOf = { deadline: 'timeout', cancel: 'cancelled' };

describe.each(FIRST)('a %s, then the memory guard during its grace', (first) => {
  it('memory held only by the stopped code: released, below the limit again, state kept; the outcome names both', async () => {
    const mb = LIMIT_MB + 30 - baseMb();
    const { outcome, sent, epochBefore } = await stopped(handlerCell(mb, 'local'), first);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    // One interrupt raised; the second frame only tells the worker the stop is for memory too.
    expect(sent).toEqual([undefined, 'memory_limit']);
    expect(outcome.meta).toMatchObject({ interruption: kindOf[first], namespace: 'preserved', epoch: epochBefore });
    expect(outcome.error.code).toBe(codeOf[first]);
    expect(outcome.error.message).toMatch(new RegExp(`^${wordsOf[first]}; then, while it was being stopped, it grew past the memory limit \\(${LIMIT_MB} MB\\) \\(peak \\d+ MB\\); state was preserved$`));
    const memory = (outcome.error.details as { memory: Record<string, number | string | boolean> }).memory;
    expect(memory).toMatchObject({ trigger: 'watch', limit_mb: LIMIT_MB, replaced_worker: false });
    expect(memory.peak_mb).toBeGreaterThanOrEqual(LIMIT_MB);
    expect(memory.memory_mb_after).toBeLessThan(LIMIT_MB);
    const kept = await runtime.run('execute', { code: 'kept' });
    expect(kept.ok && (kept.result.result as { value?: unknown }).value).toBe('before');
    await expectAnswering();
  }, 30_000);

  it('memory a global still holds: the worker is replaced for memory, and the outcome says so with the epoch', async () => {
    const mb = LIMIT_MB + 30 - baseMb();
    const { outcome, sent, epochBefore } = await stopped(handlerCell(mb, 'global'), first);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(sent).toEqual([undefined, 'memory_limit']);
    expect(outcome.meta).toMatchObject({ interruption: kindOf[first], namespace: 'reset', epoch: epochBefore + 1 });
    expect(outcome.error.code).toBe(codeOf[first]);
    expect(outcome.error.message).toMatch(new RegExp(`^${wordsOf[first]}; then, while it was being stopped, it grew past the memory limit \\(${LIMIT_MB} MB\\) \\(peak \\d+ MB\\); the worker was replaced and the namespace reset$`));
    const details = outcome.error.details as { memory: Record<string, unknown>; replacement_startup_ms?: number };
    expect(details.memory).toMatchObject({ trigger: 'watch', limit_mb: LIMIT_MB, replaced_worker: true });
    expect(details.memory.memory_mb_after).toBeGreaterThanOrEqual(LIMIT_MB);
    expect(runtime.status().lastInterruption).toEqual({ kind: kindOf[first], namespace: 'reset', epoch: epochBefore + 1 });
    await expectAnswering();
    expect((await runtime.run('execute', { code: 'kept = "before"' })).ok).toBe(true);
  }, 30_000);

  it('past the hard margin: killed and replaced once; the outcome names the first stop and the kill', async () => {
    const mb = HARD_MB + 150 - baseMb();
    const { outcome, sent, epochBefore } = await stopped(handlerCell(mb, 'local', true), first);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    // The growth crosses the limit on its way: at most the memory note follows the one interrupt.
    expect(sent[0]).toBeUndefined();
    expect(sent.length).toBeLessThanOrEqual(2);
    expect(outcome.meta).toMatchObject({ interruption: kindOf[first], namespace: 'reset', epoch: epochBefore + 1 });
    expect(outcome.error.code).toBe(codeOf[first]);
    expect(outcome.error.message).toMatch(
      new RegExp(`^${wordsOf[first]}; then, while it was being stopped, the worker passed the memory limit \\(${LIMIT_MB} MB\\) by more than its hard margin \\(${HARD_MB} MB\\) and was killed \\(peak \\d+ MB\\); the worker was replaced and the namespace reset$`),
    );
    const details = outcome.error.details as { memory: Record<string, unknown> };
    expect(details.memory).toMatchObject({ trigger: 'hard', limit_mb: LIMIT_MB, replaced_worker: true });
    expect(details.memory.peak_mb).toBeGreaterThanOrEqual(HARD_MB);
    await expectAnswering();
    expect((await runtime.run('execute', { code: 'kept = "before"' })).ok).toBe(true);
  }, 30_000);
});

describe('the memory guard first, then the deadline during its grace', () => {
  it('one interrupt, for memory; the outcome is the memory stop', async () => {
    // Past the limit at once; the deadline (1 s) lands while the handler of the memory stop's interrupt still runs.
    const mb = LIMIT_MB + 30 - baseMb();
    const code = [
      'import time',
      'def cell():',
      '    held = []',
      `    held.append(b'x' * (${mb} * 2**20))`,
      '    try:',
      '        time.sleep(10**6)',
      '    except KeyboardInterrupt:',
      '        time.sleep(1.5)',
      '        raise',
      'cell()',
    ].join('\n');
    const { outcome, sent, epochBefore } = await stopped(code, 'deadline', 1000);
    expect(outcome.meta.durationMs).toBeGreaterThan(1000);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(sent).toEqual(['memory_limit']);
    expect(outcome.meta).toMatchObject({ interruption: 'memory_limit', namespace: 'preserved', epoch: epochBefore });
    expect(outcome.error.code).toBe('memory_limit');
    expect(outcome.error.message).toMatch(new RegExp(`^the operation grew past the memory limit \\(${LIMIT_MB} MB\\) and was stopped \\(peak \\d+ MB\\); state was preserved$`));
    await expectAnswering();
  }, 30_000);
});
