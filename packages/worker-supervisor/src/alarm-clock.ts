import { MAX_INT32 } from '@ipython-mcp/protocol';

/**
 * One callback on an {@link AlarmClock}: it rings once when its time comes, unless cancelled first. Set it again
 * (from its own ring too) to ring again.
 */
export class Alarm {
  /** When it rings (performance.now() ms); meaningful while set. */
  due = Infinity;
  /** Whether it is set now. */
  set = false;

  /**
   * @param ring what to do when it rings.
   * @param hold whether a set alarm keeps Node's event loop alive (as a plain timeout does).
   */
  constructor(
    readonly ring: () => void,
    readonly hold: boolean,
  ) {}
}

/**
 * Many short-lived alarms on one Node timeout, armed lazily.
 *
 * Why: every operation has a deadline and a memory watch; as a timeout of its own each, set at dispatch and cleared
 * at the answer, they cost too much. Measured on the warm execute path (Node and the worker on one vCPU), one timeout set and
 * cleared per operation cost ~20 µs of Node CPU, and the watch's 2 ms baseline timeout ~25 µs more in the wake-ups
 * it caused, on an operation whose whole Node side is ~120 µs. Here an alarm that comes due after the armed timeout
 * touches no timer at all: the timeout rings what is due when it fires and re-arms for the next one. Cancelling
 * touches no timer either: the armed timeout fires once more and finds nothing due. So back-to-back operations cost
 * no timer calls, and one wake-up per memory-watch interval at most.
 */
export class AlarmClock {
  private handle: NodeJS.Timeout | undefined;
  /** When the armed timeout fires; Infinity when none is armed. */
  private handleDue = Infinity;
  private readonly alarms = new Set<Alarm>();
  /** Set alarms with `hold`: the timeout is ref'd while there are any. */
  private holding = 0;

  /** Sets `alarm` to ring at `due` (performance.now() ms), or moves it there if it is set. */
  set(alarm: Alarm, due: number): void {
    if (!alarm.set) {
      alarm.set = true;
      this.alarms.add(alarm);
      if (alarm.hold && this.holding++ === 0) this.handle?.ref();
    }
    alarm.due = due;
    if (due < this.handleDue) this.arm(due);
  }

  /** Cancels `alarm` if it is set. The armed timeout stays: it fires once more and finds nothing due. */
  cancel(alarm: Alarm): void {
    if (!alarm.set) return;
    alarm.set = false;
    this.alarms.delete(alarm);
    if (alarm.hold && --this.holding === 0) this.handle?.unref();
  }

  /** Alarms set now (for tests). */
  get size(): number {
    return this.alarms.size;
  }

  private arm(due: number): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handleDue = due;
    this.handle = setTimeout(this.fire, Math.max(0, Math.min(due - performance.now(), MAX_INT32)));
    if (this.holding === 0) this.handle.unref();
  }

  private readonly fire = (): void => {
    this.handle = undefined;
    this.handleDue = Infinity;
    // Node may run a timeout up to a millisecond before its delay: what is due within one rings now.
    const now = performance.now() + 1;
    const due: Alarm[] = [];
    for (const alarm of this.alarms) if (alarm.due <= now) due.push(alarm);
    // The set keeps the order alarms were set in; a host that held the loop can find several due at once (a
    // deadline and a memory check, say), and they ring in the order of their times (stable: equal times as set).
    if (due.length > 1) due.sort((a, b) => a.due - b.due);
    let failure: { error: unknown } | undefined;
    for (const alarm of due) {
      // An earlier ring may have cancelled or moved it.
      if (!alarm.set || alarm.due > now) continue;
      this.cancel(alarm);
      try {
        alarm.ring();
      } catch (error) {
        // One failing ring must not cost the others theirs, nor the clock its next timeout.
        failure ??= { error };
      }
    }
    let next = Infinity;
    for (const alarm of this.alarms) if (alarm.due < next) next = alarm.due;
    if (next < this.handleDue) this.arm(next);
    // Surfaces as a timeout callback's throw would.
    if (failure !== undefined) throw failure.error;
  };
}

/** The clock of this process's runtimes: one timeout for every operation's deadline and memory watch. */
export const runtimeClock = new AlarmClock();
