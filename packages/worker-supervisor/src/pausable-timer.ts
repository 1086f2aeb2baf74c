import { MAX_INT32 } from '@ipython-mcp/protocol';

/**
 * A one-shot timer whose clock can be paused: Code Mode's deadline does not count time spent in nested tool
 * calls. `Infinity` never fires.
 */
export class PausableTimer {
  private remainingMs: number;
  private startedAt = 0;
  private handle: NodeJS.Timeout | undefined;
  private readonly onFire: () => void;
  private fired = false;
  private pauses = 0;

  constructor(durationMs: number, onFire: () => void) {
    this.remainingMs = durationMs;
    this.onFire = onFire;
    this.arm();
  }

  /** Stops the clock; nested pauses need as many resumes. */
  pause(): void {
    if (this.fired || this.pauses++ > 0) return;
    if (this.handle !== undefined) {
      clearTimeout(this.handle);
      this.handle = undefined;
      this.remainingMs -= performance.now() - this.startedAt;
    }
  }

  /** Restarts the clock where it stopped. */
  resume(): void {
    if (this.fired || this.pauses === 0 || --this.pauses > 0) return;
    this.arm();
  }

  /** Cancels the timer for good. */
  clear(): void {
    this.fired = true;
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
  }

  private arm(): void {
    if (!Number.isFinite(this.remainingMs)) return;
    this.startedAt = performance.now();
    this.handle = setTimeout(
      () => {
        this.fired = true;
        this.handle = undefined;
        this.onFire();
      },
      Math.max(0, Math.min(this.remainingMs, MAX_INT32)),
    );
  }
}
