/**
 * Holds a tool result that changed the tool list until the client has re-read that list, so a client that reacts
 * to `notifications/tools/list_changed` offers a freshly registered tool on the very next model turn.
 *
 * Measured with Claude Code 2.1.197 (apps/ipython-mcp/test/agent-turns.e2e.test.ts): the notification already
 * left ~30 ms before the `register_tool` result, and the client's `tools/list` was answered before that result
 * too, yet the next model request still lacked the tool: the client applies the new list a few tens of ms after
 * reading it. Holding the result until the re-list is answered plus {@link SETTLE_MS} closes the gap (measured:
 * 17 ms after the answer was too early, 50 ms was enough). A client that never re-lists (Codex 0.171.0, the MCP
 * SDK's default client) costs one bounded wait, {@link FIRST_WAIT_MS}, and none after that.
 */
export class RelistGate {
  private notified = 0;
  private relisted = 0;
  /** undefined until the first notification tells whether this client re-lists. */
  private clientRelists: boolean | undefined;
  private waiters: Array<() => void> = [];
  /** Set by {@link release}: the server is closing, and nothing is held any more. */
  private released = false;

  /** Call when `notifications/tools/list_changed` is sent. */
  noteNotified(): void {
    this.notified += 1;
  }

  /** Call when a `tools/list` answer is about to be sent, with the {@link mark} taken when its request arrived. */
  noteListed(mark: number): void {
    if (this.relisted >= mark) return;
    this.relisted = mark;
    this.clientRelists = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** A mark to pass to {@link settle} after the call: how many notifications had gone out before it. */
  mark(): number {
    return this.notified;
  }

  /**
   * Whether {@link settle} would hold a result taken at `mark`: a notification went out since, to a client not
   * known to ignore it. A call that changed nothing skips settle (and its promise) altogether.
   */
  holds(mark: number): boolean {
    return this.notified !== mark && this.clientRelists !== false && !this.released;
  }

  /**
   * The server is closing: every held result goes now, and none is held from now on. A result held past the close of
   * its session would never be sent (a shutdown that replaced the worker changes the tool list, and its answer,
   * runtime_closed, was lost while it waited for a re-list).
   */
  release(): void {
    this.released = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves once the client has re-listed after the notifications sent since `mark`, or at the bound. */
  async settle(mark: number): Promise<void> {
    if (!this.holds(mark)) return;
    while (this.relisted < this.notified && !this.released) {
      const relisted = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), this.clientRelists ? LATER_WAIT_MS : FIRST_WAIT_MS);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (!relisted) {
        // First time: this client does not re-list on its own; stop holding results for it.
        if (this.clientRelists === undefined) this.clientRelists = false;
        return;
      }
      // A list answered for an earlier notification wakes every waiter: wait again if another one went out since.
    }
    if (this.released) return;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  }
}

/** How long the first changing call waits to learn whether the client re-lists. */
export const FIRST_WAIT_MS = 500;
/** How long later calls wait for a client known to re-list. */
export const LATER_WAIT_MS = 1_000;
/** Time the client gets to apply the list it read before it sees the result. */
export const SETTLE_MS = 150;
