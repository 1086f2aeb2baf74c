// A deadline and a caller's cancel of the same operation meeting, on purpose, over a sweep of gaps (issue 51): through
// the real Runtime and a real Python worker, each stop must end in one interrupt, the namespace kept, and one
// outcome that names the stop that came first.
import { eventually, isAlive as alive, testPython } from '@ipython-mcp/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Alarm, runtimeClock } from './alarm-clock.js';
import { Runtime } from './runtime.js';
import type { OperationOutcome } from './runtime-types.js';
import { watchedLocalBackend } from '../test/watched-backend.js';

const DEADLINE_MS = 250;
/** Cancel minus deadline, in ms: the cancel first (negative), together (0, in either order) and the deadline first. */
const GAPS = [-40, -15, -5, -2, -1, 0, 0, 1, 2, 5, 15, 40];
const SLEEP = 'import time\ntime.sleep(10**6)';

/** Every interrupt the runtime sends, by request id, and when each request was written. */
const interrupts: number[] = [];
let onRequest: ((id: number) => void) | undefined;

/**
 * When the running operation's deadline rings: the due time the dispatcher gave its alarm (the one alarm on the
 * runtime's clock that holds the event loop, the memory watch's does not). The cancel is set from it, so that a gap
 * is exactly that gap: one set from a second clock reading at the request would come late by however long the
 * dispatch took between the two, which on a loaded machine is more than the clock's one-millisecond window.
 */
let deadlineDue: number | undefined;
/** The test's own cancel alarm while an operation runs (not the deadline). */
let meeting: Alarm | undefined;
const clockSet = runtimeClock.set.bind(runtimeClock);

/** Real workers; the test sees their requests and interrupts. */
const watchedBackend = watchedLocalBackend({
  onInterrupt: (id) => interrupts.push(id),
  onRequest: (id) => onRequest?.(id),
});

let runtime: Runtime;
let pids: number[] = [];
beforeAll(async () => {
  runtimeClock.set = (alarm: Alarm, due: number): void => {
    if (alarm.hold && alarm !== meeting) deadlineDue = due;
    clockSet(alarm, due);
  };
  runtime = new Runtime({ python: testPython(), backend: watchedBackend, operationTimeoutMs: DEADLINE_MS, interruptionGraceMs: 2000, warmStandby: false });
  runtime.start();
  const set = await runtime.run('execute', { code: 'kept = "before"' });
  expect(set.ok).toBe(true);
  pids = runtime.workerPids();
});
afterAll(async () => {
  runtimeClock.set = clockSet;
  await runtime.close();
  const left = await eventually(() => pids.filter(alive), (alivePids) => alivePids.length === 0, 5_000);
  expect(left).toEqual([]);
});

/**
 * Runs the sleeping cell and cancels it `gap` ms after its deadline. The cancel is an alarm on the runtime's own clock,
 * due `gap` ms after the deadline's alarm (set at dispatch, when the request is written): at gap 0 both ring in the
 * same turn, one right after the other, in the order they were set, and `cancelFirst` says which was set first (the
 * cancel's before the run, then moved; or the cancel's after the deadline's, at dispatch).
 */
async function meet(gap: number, cancelFirst: boolean): Promise<OperationOutcome> {
  const controller = new AbortController();
  const cancel = new Alarm(() => controller.abort(), true);
  meeting = cancel;
  deadlineDue = undefined;
  if (cancelFirst) runtimeClock.set(cancel, performance.now() + 60_000);
  onRequest = () => {
    if (deadlineDue === undefined) throw new Error('the deadline was not set before the request was written');
    runtimeClock.set(cancel, deadlineDue + gap);
  };
  try {
    return await runtime.run('execute', { code: SLEEP }, { signal: controller.signal });
  } finally {
    onRequest = undefined;
    meeting = undefined;
    runtimeClock.cancel(cancel);
  }
}

describe('a deadline and a cancel of the same operation', () => {
  it('end in one interrupt, the namespace kept, and one outcome naming the stop that came first, at every gap', async () => {
    const seen: string[] = [];
    for (const [index, gap] of GAPS.entries()) {
      // The two zero gaps: once the cancel set first, once the deadline.
      const cancelFirst = gap < 0 || (gap === 0 && GAPS.indexOf(0) === index);
      const before = interrupts.length;
      const outcome = await meet(gap, cancelFirst);
      const label = `gap ${gap} ms${gap === 0 ? (cancelFirst ? ', cancel set first' : ', deadline set first') : ''}`;
      expect(outcome.ok, label).toBe(false);
      if (outcome.ok) continue;
      expect(interrupts.length - before, `${label}: interrupts sent`).toBe(1);
      expect(outcome.meta.namespace, label).toBe('preserved');
      expect(outcome.meta.epoch, label).toBe(1);
      const kind = outcome.meta.interruption;
      // The first stop is the one named; a millisecond apart, the clock may ring both in one turn, in the order set.
      if (gap <= -2 || (gap === 0 && cancelFirst)) expect(kind, label).toBe('cancelled');
      if (gap >= 2 || (gap === 0 && !cancelFirst)) expect(kind, label).toBe('timeout');
      if (kind === 'cancelled') {
        expect(outcome.error).toMatchObject({ code: 'operation_cancelled', message: 'the operation was cancelled; state was preserved' });
      } else {
        expect(kind, label).toBe('timeout');
        expect(outcome.error).toMatchObject({ code: 'operation_timeout', message: 'the operation passed its deadline; state was preserved' });
      }
      expect(runtime.status().lastInterruption).toEqual({ kind, namespace: 'preserved', epoch: 1 });
      seen.push(`${gap}:${kind}`);
    }
    expect(seen).toHaveLength(GAPS.length);
    const kept = await runtime.run('execute', { code: 'kept' });
    expect(kept.ok && (kept.result.result as { value?: unknown }).value).toBe('before');
    expect(runtime.epoch).toBe(1);
  }, 120_000);
});
