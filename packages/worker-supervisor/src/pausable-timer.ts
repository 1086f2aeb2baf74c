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

  constructor(
    durationMs: number,
    onFire: () => void,
    private readonly clock: AlarmClock = runtimeClock,
  ) {
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

  /** Cancels the timer for good. */
  clear(): void {
    this.fired = true;
    this.clock.cancel(this.alarm);
  }

  private arm(delayMs: number): void {
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
    this.fired = true;
    this.onFire();
  }
}
