// The alarm clock that carries every operation's deadline and memory watch: alarms ring once, in time, unless
// cancelled or moved; alarms that come due after the armed timeout touch no Node timer; only held alarms keep a
// process alive; one failing ring costs the others nothing.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Alarm, AlarmClock } from './alarm-clock.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('AlarmClock', () => {
  it('rings each alarm once at its time, in order, and never a cancelled one', async () => {
    const clock = new AlarmClock();
    const rung: Array<[string, number]> = [];
    const start = performance.now();
    let lastRang!: () => void;
    const last = new Promise<void>((resolve) => (lastRang = resolve));
    const alarm = (name: string): Alarm =>
      new Alarm(() => {
        rung.push([name, performance.now() - start]);
        if (name === 'late') lastRang();
      }, true);
    const late = alarm('late');
    const early = alarm('early');
    const cancelled = alarm('cancelled');
    clock.set(late, start + 60);
    clock.set(early, start + 20);
    clock.set(cancelled, start + 30);
    clock.cancel(cancelled);
    clock.cancel(cancelled); // idempotent
    // Waits for the last ring itself, not for a second timer: Node's timers are not ordered against the clock's
    // performance.now() times, so a sleep can end before an alarm due earlier has rung.
    await last;
    expect(rung.map(([name]) => name)).toEqual(['early', 'late']);
    // Node may run a timeout up to a millisecond early, and a busy host late.
    expect(rung[0]![1]).toBeGreaterThanOrEqual(19);
    expect(rung[1]![1]).toBeGreaterThanOrEqual(59);
    expect(clock.size).toBe(0);
  });

  it('rings the alarms due at one wake-up in the order of their times, whatever order they were set in', async () => {
    const clock = new AlarmClock();
    const rung: number[] = [];
    const start = performance.now();
    const offsets = [9, 3, 7, 1, 5, 1];
    let allRang!: () => void;
    const all = new Promise<void>((resolve) => (allRang = resolve));
    for (const [index, offset] of offsets.entries()) {
      const alarm = new Alarm(() => {
        rung.push(index);
        if (rung.length === offsets.length) allRang();
      }, true);
      clock.set(alarm, start + offset);
    }
    // The event loop held past them all (a busy host): the one wake-up finds every alarm due.
    while (performance.now() < start + 12) {
      // busy
    }
    await all;
    expect(rung.map((index) => offsets[index])).toEqual([1, 1, 3, 5, 7, 9]);
    // Equal times ring in the order they were set.
    expect(rung.slice(0, 2)).toEqual([3, 5]);
    expect(clock.size).toBe(0);
  });

  it('moves a set alarm later or earlier, and rings it again when set again from its own ring', async () => {
    const clock = new AlarmClock();
    const start = performance.now();
    const times: number[] = [];
    let allRang!: () => void;
    const all = new Promise<void>((resolve) => (allRang = resolve));
    let rings = 0;
    const check = (): void => {
      if (times.length === 1 && rings === 3) allRang();
    };
    const later = new Alarm(() => {
      times.push(performance.now() - start);
      check();
    }, false);
    clock.set(later, start + 10);
    clock.set(later, start + 50);
    const again: Alarm = new Alarm(() => {
      rings += 1;
      if (rings < 3) clock.set(again, performance.now() + 10);
      check();
    }, true);
    clock.set(again, start + 200);
    clock.set(again, start + 5);
    await all;
    expect(times).toHaveLength(1);
    expect(times[0]).toBeGreaterThanOrEqual(49);
    expect(rings).toBe(3);
    expect(clock.size).toBe(0);
  });

  it('touches no Node timer for an alarm due after the armed timeout, nor for a cancel', () => {
    const clock = new AlarmClock();
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const clearTimeoutSpy = vi.spyOn(globalThis, 'clearTimeout');
    const now = performance.now();
    const first = new Alarm(() => undefined, true);
    clock.set(first, now + 1000);
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    // Back-to-back operations: each sets its alarms after the armed one and cancels them at its answer.
    for (let index = 0; index < 100; index += 1) {
      const deadline = new Alarm(() => undefined, true);
      const watch = new Alarm(() => undefined, false);
      clock.set(deadline, now + 30_000 + index);
      clock.set(watch, now + 1000 + index);
      clock.cancel(watch);
      clock.cancel(deadline);
    }
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    expect(clearTimeoutSpy).not.toHaveBeenCalled();
    // An earlier alarm re-arms once.
    const sooner = new Alarm(() => undefined, true);
    clock.set(sooner, now + 500);
    expect(setTimeoutSpy).toHaveBeenCalledTimes(2);
    expect(clearTimeoutSpy).toHaveBeenCalledTimes(1);
    clock.cancel(sooner);
    clock.cancel(first);
  });

  it('a ring that throws costs the other due alarms and the next timeout nothing, and the error still surfaces', async () => {
    const clock = new AlarmClock();
    const errors: unknown[] = [];
    const onError = (error: unknown): void => {
      errors.push(error);
    };
    // vitest reports uncaught errors: take this one before it does.
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onError);
    try {
      const now = performance.now();
      const rung: string[] = [];
      clock.set(
        new Alarm(() => {
          throw new Error('ring failed');
        }, false),
        now + 5,
      );
      clock.set(new Alarm(() => rung.push('same time'), false), now + 5);
      let laterRang!: () => void;
      const later = new Promise<void>((resolve) => (laterRang = resolve));
      clock.set(
        new Alarm(() => {
          rung.push('later');
          laterRang();
        }, false),
        now + 40,
      );
      await later;
      expect(rung).toEqual(['same time', 'later']);
      expect(errors).toHaveLength(1);
      expect((errors[0] as Error).message).toBe('ring failed');
    } finally {
      process.off('uncaughtException', onError);
      for (const listener of listeners) process.on('uncaughtException', listener);
    }
  });

  it('only a held alarm keeps a process alive, and a cancelled held one no longer does', async () => {
    const module = JSON.stringify(fileURLToPath(new URL('./alarm-clock.js', import.meta.url)).replace('/src/', '/dist/'));
    const run = (body: string): Promise<{ code: number | null; ms: number }> => {
      const started = performance.now();
      const child = spawn(process.execPath, ['--input-type=module', '-e', `const { Alarm, AlarmClock } = await import(${module});\nconst clock = new AlarmClock();\n${body}`], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      return new Promise((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, ms: performance.now() - started });
        });
      });
    };
    const [unheld, held, cancelled] = await Promise.all([
      run(`clock.set(new Alarm(() => process.exit(3), false), performance.now() + 5000);`),
      run(`clock.set(new Alarm(() => process.exit(7), true), performance.now() + 300);`),
      run(`const a = new Alarm(() => process.exit(3), true);\nclock.set(a, performance.now() + 5000);\nsetTimeout(() => clock.cancel(a), 50);`),
    ]);
    expect(unheld.code).toBe(0);
    expect(unheld.ms).toBeLessThan(4000);
    expect(held.code).toBe(7);
    expect(cancelled.code).toBe(0);
    expect(cancelled.ms).toBeLessThan(4000);
  });
});
