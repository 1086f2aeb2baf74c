import { Alarm, type AlarmClock, runtimeClock } from './alarm-clock.js';

/**
 * A one-shot timer whose clock can be paused: Code Mode's deadline does not count time spent in nested tool
 * calls. `Infinity` never fires.
 *
 * Why pausing does not touch the armed timeout: a Code Mode run pauses and resumes once per nested call, and
 * clearing and re-arming a Node timer each time costs more than the call's own bookkeeping. Instead a pause moves
 * the deadline later when it ends; when the armed timeout fires early (the deadline moved, the clock is paused, or
 * the delay was capped at 2^31-1 ms) it is re-armed for what is left. The timeout is an {@link Alarm} on a shared
 * {@link AlarmClock}, so even arming and clearing it once per operation touches no Node timer in the usual case.
 */
export class PausableTimer {
  /** Monotonic time at which the timer fires, not counting the current pause. */
  private deadline: number;
  private pausedAt = 0;
  private readonly alarm = new Alarm(() => this.due(), true);
  private readonly onFire: () => void;
  private fired = false;
  private pauses = 0;
  /** Whether the deadline, found due, has let one poll for I/O run before firing (see `due`). */
  private yielded = false;
  private readonly clock: AlarmClock;
  private readonly readFirst: boolean;

  /**
   * `readFirst`: a deadline found due lets one poll for I/O run before it fires (see `due`); for a deadline that
   * what the worker sends can move (Code Mode's nested calls). Without it, the timer fires in the turn it is due, in
   * the order the clock's alarms were set.
   */
  constructor(durationMs: number, onFire: () => void, options: { clock?: AlarmClock; readFirst?: boolean } = {}) {
    this.clock = options.clock ?? runtimeClock;
    this.readFirst = options.readFirst ?? false;
    this.onFire = onFire;
    this.deadline = performance.now() + durationMs;
    if (Number.isFinite(durationMs)) this.arm(durationMs);
  }

  /** Stops the clock; nested pauses need as many resumes. */
  pause(): void {
    if (this.fired || this.pauses++ > 0) return;
    this.pausedAt = performance.now();
  }

  /** Restarts the clock where it stopped. */
  resume(): void {
    if (this.fired || this.pauses === 0 || --this.pauses > 0) return;
    const now = performance.now();
    this.deadline += now - this.pausedAt;
    // The armed timeout came due while paused: arm again for what was left when the pause began.
    if (!this.alarm.set && Number.isFinite(this.deadline)) this.arm(this.deadline - now);
  }

  /**
   * Moves the deadline `ms` later (time the clock should not have counted, learnt after the fact). A timer that has
   * fired stays fired.
   */
  extend(ms: number): void {
    if (this.fired || !(ms > 0)) return;
    this.deadline += ms;
  }

  /** Cancels the timer for good. */
  clear(): void {
    this.fired = true;
    this.clock.cancel(this.alarm);
  }

  private arm(delayMs: number): void {
    this.yielded = false;
    this.clock.set(this.alarm, performance.now() + Math.max(0, delayMs));
  }

  private due(): void {
    if (this.fired || this.pauses > 0) return;
    const left = this.deadline - performance.now();
    // Node may run a timeout up to a millisecond before its delay; only a moved deadline re-arms.
    if (left >= 1) {
      this.arm(left);
      return;
    }
    if (this.readFirst && !this.yielded) {
      // Timers run before the poll for I/O in each turn of the event loop: what the worker has already sent (a
      // nested call, which pauses the clock, or reports transit that moves the deadline; or the answer itself) is
      // read first, and the deadline looked at again after it.
      this.yielded = true;
      setImmediate(() => this.due());
      return;
    }
    this.fired = true;
    this.onFire();
  }
}
