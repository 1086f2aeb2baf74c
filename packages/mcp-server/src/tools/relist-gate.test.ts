import { describe, expect, it } from 'vitest';
import { FIRST_WAIT_MS, RelistGate, SETTLE_MS } from './relist-gate.js';

const elapsed = async (work: Promise<void>): Promise<number> => {
  const started = performance.now();
  await work;
  return performance.now() - started;
};

describe('RelistGate', () => {
  it('does not hold a call that sent no notification', async () => {
    const gate = new RelistGate();
    const mark = gate.mark();
    expect(gate.holds(mark)).toBe(false);
    expect(await elapsed(gate.settle(mark))).toBeLessThan(50);
  });

  it('holds a changing call until the client re-lists, then lets it settle', async () => {
    const gate = new RelistGate();
    const mark = gate.mark();
    gate.noteNotified();
    expect(gate.holds(mark)).toBe(true);
    const listMark = gate.mark();
    setTimeout(() => gate.noteListed(listMark), 100);
    const waited = await elapsed(gate.settle(mark));
    expect(waited).toBeGreaterThanOrEqual(100 + SETTLE_MS - 5);
    expect(waited).toBeLessThan(FIRST_WAIT_MS + SETTLE_MS + 500);
  });

  it('release (the server closing) lets a held result go at once, and holds none after', async () => {
    const gate = new RelistGate();
    const mark = gate.mark();
    gate.noteNotified();
    const held = gate.settle(mark);
    setTimeout(() => gate.release(), 20);
    expect(await elapsed(held)).toBeLessThan(FIRST_WAIT_MS);
    const later = gate.mark();
    gate.noteNotified();
    expect(gate.holds(later)).toBe(false);
    expect(await elapsed(gate.settle(later))).toBeLessThan(50);
  });

  it('a list that started before the notification does not count as the re-list', async () => {
    const gate = new RelistGate();
    const early = gate.mark();
    const mark = gate.mark();
    gate.noteNotified();
    gate.noteListed(early);
    const waited = await elapsed(gate.settle(mark));
    expect(waited).toBeGreaterThanOrEqual(FIRST_WAIT_MS - 5);
  });

  it('stops waiting for a client that never re-lists after the first bounded wait', async () => {
    const gate = new RelistGate();
    let mark = gate.mark();
    gate.noteNotified();
    expect(await elapsed(gate.settle(mark))).toBeGreaterThanOrEqual(FIRST_WAIT_MS - 5);
    mark = gate.mark();
    gate.noteNotified();
    expect(gate.holds(mark)).toBe(false);
    expect(await elapsed(gate.settle(mark))).toBeLessThan(50);
  });
});
