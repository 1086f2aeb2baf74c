// The bench's verdict logic (lib/noise.mjs, lib/stats.mjs): a goal verdict only where the interval, widened by the
// machine's noise, lies on one side of the goal. Run by tooling/test.sh: node --test tooling/bench/lib/noise.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BUSY, FASTER, MET, MISSED, SAME, SLOWER, TOO_FEW, TOO_NOISY, atLeastVerdict, calibrationSpread, compareVerdict, goalVerdict, judgeWindow } from './noise.mjs';
import { bootstrapMedianCI, quantile, spread } from './stats.mjs';

const positive = fc.double({ min: 0.01, max: 100, noNaN: true, noDefaultInfinity: true });
const interval = fc.tuple(positive, positive).map(([a, b]) => ({ lo: Math.min(a, b), hi: Math.max(a, b) }));
const machine = fc.record({ busy: fc.boolean(), noise: fc.double({ min: 0, max: 2, noNaN: true }) });

test('met exactly when the whole interval is at or under the goal', () => {
  fc.assert(
    fc.property(interval, positive, machine, (ci, goal, state) => {
      assert.equal(goalVerdict(ci, goal, state) === MET, ci.hi <= goal);
    }),
  );
});

test('MISSED only when the interval less the machine noise is over the goal', () => {
  fc.assert(
    fc.property(interval, positive, machine, (ci, goal, state) => {
      const verdict = goalVerdict(ci, goal, state);
      if (verdict === MISSED) assert.ok(ci.lo / (1 + state.noise) > goal);
      if (ci.lo / (1 + state.noise) > goal) assert.equal(verdict, MISSED);
    }),
  );
});

test('otherwise no verdict, saying busy only when the machine was', () => {
  fc.assert(
    fc.property(interval, positive, machine, (ci, goal, state) => {
      const verdict = goalVerdict(ci, goal, state);
      assert.ok([MET, MISSED, BUSY, TOO_NOISY].includes(verdict));
      if (verdict === BUSY) assert.ok(state.busy);
      if (verdict === TOO_NOISY) assert.ok(!state.busy);
    }),
  );
});

test('more machine noise never turns "no verdict" into MISSED', () => {
  fc.assert(
    fc.property(interval, positive, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (ci, goal, a, b) => {
      const [less, more] = a <= b ? [a, b] : [b, a];
      if (goalVerdict(ci, goal, { noise: more }) === MISSED) assert.equal(goalVerdict(ci, goal, { noise: less }), MISSED);
    }),
  );
});

test('the verdict does not depend on the unit: scaling interval and goal together changes nothing', () => {
  fc.assert(
    fc.property(interval, positive, machine, fc.double({ min: 0.5, max: 4, noNaN: true }), (ci, goal, state, k) => {
      // Away from the boundaries, where rounding could flip a comparison.
      fc.pre(Math.abs(ci.hi - goal) > 1e-6 * goal && Math.abs(ci.lo / (1 + state.noise) - goal) > 1e-6 * goal);
      assert.equal(goalVerdict({ lo: ci.lo * k, hi: ci.hi * k }, goal * k, state), goalVerdict(ci, goal, state));
    }),
  );
});

test('"at least" goals mirror "at most" goals', () => {
  fc.assert(
    fc.property(interval, positive, machine, (ci, goal, state) => {
      const verdict = atLeastVerdict(ci, goal, state);
      if (verdict === MET) assert.ok(ci.lo >= goal * (1 - 1e-12));
      if (verdict === MISSED) assert.ok(ci.hi * (1 + state.noise) < goal * (1 + 1e-12));
    }),
  );
});

test('no interval, no verdict', () => {
  assert.equal(goalVerdict(null, 1.25, { busy: true }), TOO_FEW);
  assert.equal(goalVerdict({ lo: Number.NaN, hi: 1 }, 1.25), TOO_FEW);
  assert.equal(spread([1.1, 1.2]).ci, null);
});

test('the bootstrap interval holds the median, lies within the values and is repeatable', () => {
  fc.assert(
    fc.property(fc.array(positive, { minLength: 3, maxLength: 25 }), (values) => {
      const ci = bootstrapMedianCI(values, { resamples: 300 });
      const median = quantile(values, 0.5);
      assert.ok(ci.lo <= ci.hi);
      assert.ok(ci.lo >= Math.min(...values) && ci.hi <= Math.max(...values));
      assert.ok(ci.lo <= median + 1e-12 && median <= ci.hi + 1e-12);
      assert.deepEqual(bootstrapMedianCI(values, { resamples: 300 }), ci);
    }),
  );
});

test('the readings of issue 60: rounds from 0.38× to 3.23× give no verdict; steady rounds give one', () => {
  const wild = [2.0, 0.38, 3.23, 1.54, 1.66, 1.38, 0.91, 1.63];
  assert.equal(goalVerdict(spread(wild).ci, 1.25, { busy: true, noise: 0.4 }), BUSY);
  assert.equal(goalVerdict(spread(wild).ci, 1.25, { busy: false, noise: 0 }), TOO_NOISY);
  const calm = [1.1, 1.12, 1.09, 1.13, 1.11, 1.1, 1.12];
  assert.equal(goalVerdict(spread(calm).ci, 1.25, { busy: true, noise: 0.3 }), MET);
  const slow = [1.6, 1.62, 1.58, 1.61, 1.63, 1.6, 1.59];
  assert.equal(goalVerdict(spread(slow).ci, 1.25, { busy: false, noise: 0.05 }), MISSED);
  // The same slow rounds on a machine whose calibration moved by ±40 %: the gap (28 %) is inside the noise.
  assert.equal(goalVerdict(spread(slow).ci, 1.25, { busy: true, noise: 0.4 }), BUSY);
});

test('calibration spread: 0 for steady times, null without two of them', () => {
  assert.equal(calibrationSpread([2, 2, 2, 2]), 0);
  assert.equal(calibrationSpread([2]), null);
  fc.assert(
    fc.property(fc.array(positive, { minLength: 2, maxLength: 20 }), (times) => {
      assert.ok(calibrationSpread(times) >= 0);
    }),
  );
});

test('A/B: a difference is claimed only where the interval, widened by the noise, excludes 1×', () => {
  fc.assert(
    fc.property(interval, machine, (ci, state) => {
      const verdict = compareVerdict(ci, state);
      const widened = { lo: ci.lo / (1 + state.noise), hi: ci.hi * (1 + state.noise) };
      if (verdict === SLOWER) assert.ok(widened.lo > 1);
      if (verdict === FASTER) assert.ok(widened.hi < 1 * (1 + 1e-12));
      if (verdict === SAME) assert.ok(widened.lo <= 1 && widened.hi >= 1 * (1 - 1e-12));
    }),
  );
  assert.equal(compareVerdict(spread([1.56, 1.2, 1.63, 0.91]).ci, { noise: 0.1 }), SAME);
  assert.equal(compareVerdict(spread([1.3, 1.31, 1.29, 1.32, 1.3]).ci, { noise: 0.05 }), SLOWER);
  assert.equal(compareVerdict(spread([0.7, 0.71, 0.69, 0.72, 0.7]).ci, { noise: 0.05 }), FASTER);
});

// A window of 10 s on 2 cores: 2000 ticks. Our tree ran `own` ticks and waited `waitRatio` of that for a CPU.
const window = ({ own, others, waitRatio, steal = 0, spread = 0.05, threadsSeen = 1 }) =>
  judgeWindow({ totalTicks: 2000, busyTicks: own + others, stealTicks: steal, ownTicks: own, ownCpuNs: own * 1e7 * threadsSeen, ownWaitNs: own * 1e7 * threadsSeen * waitRatio, spread });

test('an idle machine is not busy, however long our own processes waited for each other', () => {
  // Issue 60's calm readings: client, server and kernel on two cores wait 30-80 % of their CPU time for one another.
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2000 }), fc.double({ min: 0, max: 5, noNaN: true }), (own, waitRatio) => {
      const judged = window({ own, others: 0, waitRatio });
      assert.equal(judged.busy, false);
      assert.equal(judged.waitBehindOthers, 0);
      assert.equal(judged.noise, 0.05, 'the calibration spread alone');
    }),
  );
});

test("our threads that ended within the window are ours, not another process's", () => {
  // Schedstat saw only 40 % of our CPU (the rest ran on threads gone by the end); the process ticks saw it all.
  const judged = window({ own: 1000, others: 0, waitRatio: 0.5, threadsSeen: 0.4 });
  assert.equal(judged.othersShare, 0);
  assert.equal(judged.busy, false);
});

test('a neighbour shows: its CPU share, and the wait behind it widens the noise', () => {
  fc.assert(
    fc.property(fc.integer({ min: 100, max: 1000 }), fc.integer({ min: 0, max: 1000 }), fc.double({ min: 0, max: 3, noNaN: true }), (own, others, waitRatio) => {
      const judged = window({ own, others, waitRatio });
      assert.ok(Math.abs(judged.othersShare - others / 2000) < 1e-9);
      assert.ok(judged.waitBehindOthers <= judged.waitRatio + 1e-12, 'never more than the whole wait');
      assert.ok(judged.noise >= judged.waitBehindOthers && judged.noise >= 0.05);
      if (others > 500) assert.equal(judged.busy, true);
      // More of the machine taken by others never lowers the noise.
      assert.ok(window({ own, others: others + 200, waitRatio }).noise >= judged.noise);
    }),
  );
  // Half the CPUs taken by a neighbour, our processes waiting as long as they ran: busy, and noise about 2/3 of it.
  const loaded = window({ own: 500, others: 1000, waitRatio: 1 });
  assert.equal(loaded.busy, true);
  assert.ok(Math.abs(loaded.noise - 2 / 3) < 1e-9);
  assert.match(loaded.reasons.join('; '), /other processes used 50% of the CPUs/);
});

test('steal and a wide calibration spread are busy on their own', () => {
  assert.equal(window({ own: 500, others: 0, waitRatio: 0, steal: 200 }).busy, true);
  assert.equal(window({ own: 500, others: 0, waitRatio: 0, spread: 0.3 }).busy, true);
});
