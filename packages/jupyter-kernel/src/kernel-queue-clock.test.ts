import { describe, expect, it } from 'vitest';
import { KernelQueueClock } from './kernel-queue-clock.js';
import { factsOf, type Pending } from './pending-request.js';

/** A `busy` whose request was made at `madeMs` (this side's clock) and begun at `beganMs` (the kernel's). */
const busy = (madeMs: number, beganMs: number) => ({ parentDate: new Date(madeMs).toISOString(), date: new Date(beganMs).toISOString() });

describe('KernelQueueClock', () => {
  it("takes the connection's smallest gap as its floor (transit and clock skew), and measures a queue beyond it", () => {
    const clock = new KernelQueueClock();
    const skew = 5_000; // the kernel's clock runs 5 s ahead of this side's
    expect(clock.queuedMs(busy(1_000, 1_000 + skew + 2), 10)).toBe(0);
    expect(clock.queuedMs(busy(2_000, 2_000 + skew + 2), 10)).toBe(0);
    // Queued 1.5 s behind another client's request the kernel already had.
    expect(clock.queuedMs(busy(3_000, 3_000 + skew + 1_502), 1_600)).toBe(1_500);
  });

  it('never says more than this side saw pass, whatever the clocks say', () => {
    const clock = new KernelQueueClock();
    clock.queuedMs(busy(1_000, 1_001), 5);
    expect(clock.queuedMs(busy(2_000, 9_000), 40)).toBe(40);
  });

  it('without dates, the time this side saw pass', () => {
    const clock = new KernelQueueClock();
    expect(clock.queuedMs({ date: '', parentDate: '' }, 12)).toBe(12);
    expect(clock.queuedMs({ date: 'not a date', parentDate: '2026-01-01T00:00:00Z' }, -3)).toBe(0);
  });
});

describe('factsOf', () => {
  const pending = (fields: Partial<Pending>): Pending =>
    ({ id: 1, op: 'execute', params: {}, hooks: {}, cell: true, state: 'waiting', messageId: undefined, interruptWhenRunning: false, queuedAt: 0, waitedMs: 0, behind: null, resolve: () => undefined, reject: () => undefined, ...fields }) as Pending;

  it('waiting in Node: never ran, waited until it ended', () => {
    expect(factsOf(pending({ state: 'waiting', behind: 'person', endedAt: 2_000 }), 9_999)).toEqual({ ran: false, waitedMs: 2_000, behind: 'person' });
  });

  it('sent and never begun (the kernel died first): never ran, its Node wait plus its time in the kernel queue', () => {
    expect(factsOf(pending({ state: 'sent', waitedMs: 300, sentAt: 300, endedAt: 1_300, behind: 'agent' }), 9_999)).toEqual({ ran: false, waitedMs: 1_300, behind: 'agent' });
  });

  it('running: ran, with the wait measured when it began', () => {
    expect(factsOf(pending({ state: 'running', waitedMs: 700, sentAt: 0, behind: 'person' }), 9_999)).toEqual({ ran: true, waitedMs: 700, behind: 'person' });
  });

  it('a wait that rounds to 0 ms was behind nobody', () => {
    expect(factsOf(pending({ state: 'running', waitedMs: 0.3, behind: 'agent' }), 1)).toEqual({ ran: true, waitedMs: 0.3, behind: null });
  });
});
