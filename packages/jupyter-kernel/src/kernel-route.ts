/**
 * The route to a kernel while its channels are down: a Jupyter server restarting, a hub's proxy restarting, a relay
 * that cut every connection. The kernel is declared gone only on the server's own word (a Jupyter 404 for the
 * kernel, or the server calling it dead); anything else (refused, no answer, a proxy's 5xx or 424, an HTML 404 from
 * something that is not the server) is the route being away, waited out for as long as it lasts. The channels are
 * reopened the moment the server answers for the kernel again, not at the end of the services' back-off.
 */
import { ServerConnection } from '@jupyterlab/services';
import { toJupyterError } from './server-settings.js';
import type { ResolvedServer } from './server-settings.js';

/** How often the server is asked about the kernel while its channels are down. */
const PROBE_INTERVAL_MS = 500;
/** How long a request sent before the channels dropped waits for them, before it is answered without its result. */
export const IN_FLIGHT_GRACE_MS = 10_000;
/** After the channels were reopened on a probe's word, how long before they are reopened again if still down. */
const REOPEN_AGAIN_MS = 2_000;

/** What the server said about the kernel. */
export type RouteWord = { kind: 'alive' } | { kind: 'gone'; reason: string } | { kind: 'away'; reason: string };

/**
 * Asks the server about one kernel over REST, telling the server's word from the route's.
 *
 * @returns `alive` (the server has it), `gone` (the server says it has no such kernel, or that it is dead), or
 *   `away` with what answered instead
 */
export async function askAboutKernel(server: ResolvedServer, kernelId: string): Promise<RouteWord> {
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(`${server.settings.baseUrl}api/kernels/${encodeURIComponent(kernelId)}`, {}, server.settings);
  } catch (error) {
    const typed = toJupyterError(error, server, { kernelId });
    return { kind: 'away', reason: typed.message };
  }
  const json = (response.headers.get('content-type') ?? '').includes('json');
  const body = await response.text().catch(() => '');
  if (response.status === 200 && json) {
    let state: unknown;
    try {
      state = (JSON.parse(body) as { execution_state?: unknown }).execution_state;
    } catch {
      return { kind: 'away', reason: 'the server answered HTTP 200 without JSON' };
    }
    return state === 'dead' ? { kind: 'gone', reason: 'the server says the kernel is dead' } : { kind: 'alive' };
  }
  // jupyter_server (and the gateways) answer a kernel it does not have with a JSON 404; a proxy's or a hub's own
  // "not found" page is HTML, and says nothing about the kernel.
  if (response.status === 404 && json) return { kind: 'gone', reason: 'the server no longer has the kernel (it was shut down, or the server restarted without it)' };
  return { kind: 'away', reason: `HTTP ${response.status} from ${server.displayUrl}` };
}

/** What a {@link KernelRoute} drives. */
export interface RouteHooks {
  /** Asks the server about the kernel. */
  ask: () => Promise<RouteWord>;
  /** Whether the channels are open now. */
  connected: () => boolean;
  /** Reopens the channels now (the services' reconnect, its attempts counted afresh). */
  reopen: () => void;
  /** The server says the kernel is gone: the connection is lost for good. */
  gone: (reason: string) => void;
  /** The channels have been down for {@link IN_FLIGHT_GRACE_MS}: requests still open are answered without their result. */
  awayTooLong: (away: { since: Date; reason: string }) => void;
  /** Whether the connection was closed by its owner (nothing more to watch). */
  closed: () => boolean;
}

/**
 * Watches the route while the channels are down (see the file's comment). Started by {@link KernelRoute.dropped},
 * ended when the channels are open again or the kernel is gone.
 */
export class KernelRoute {
  #since: Date | undefined;
  #reason = 'the channels dropped';
  #timer: NodeJS.Timeout | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  #asking: Promise<RouteWord> | undefined;
  #reopenedAt = 0;

  constructor(private readonly hooks: RouteHooks) {}

  /** Since when the channels are down, and the latest word about why; undefined while they are open. */
  get away(): { since: Date; reason: string } | undefined {
    return this.#since === undefined ? undefined : { since: this.#since, reason: this.#reason };
  }

  /** The channels dropped: watch until they are open again. */
  dropped(): void {
    if (this.#since !== undefined || this.hooks.closed()) return;
    this.#since = new Date();
    this.#reason = 'the channels dropped';
    this.#graceTimer = setTimeout(() => {
      const away = this.away;
      if (away !== undefined && !this.hooks.closed()) this.hooks.awayTooLong(away);
    }, IN_FLIGHT_GRACE_MS);
    this.#graceTimer.unref();
    this.#schedule(0);
  }

  /** The channels are open again. */
  reopened(): void {
    this.#since = undefined;
    clearTimeout(this.#timer);
    clearTimeout(this.#graceTimer);
  }

  /** The connection is closed by its owner, or lost for good: stop watching. */
  stop(): void {
    this.reopened();
  }

  /**
   * A call wants the kernel now: asks the server at once and, if it answers for the kernel, reopens the channels and
   * waits up to `waitMs` for them.
   *
   * @returns whether the channels are open
   */
  async now(waitMs: number): Promise<boolean> {
    if (this.hooks.connected()) return true;
    const deadline = performance.now() + waitMs;
    const word = await this.#ask();
    if (word.kind !== 'alive') return this.hooks.connected();
    while (!this.hooks.connected() && !this.hooks.closed() && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.hooks.connected();
  }

  #schedule(afterMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#probe(), afterMs);
    this.#timer.unref();
  }

  async #probe(): Promise<void> {
    if (this.#since === undefined || this.hooks.closed()) return;
    await this.#ask();
    if (this.#since !== undefined && !this.hooks.closed()) this.#schedule(PROBE_INTERVAL_MS);
  }

  /** One question to the server at a time; its answer acted on: gone, reopen, or still away. */
  #ask(): Promise<RouteWord> {
    this.#asking ??= this.hooks
      .ask()
      .then((word) => {
        if (this.hooks.closed()) return word;
        if (word.kind === 'gone') {
          this.stop();
          this.hooks.gone(word.reason);
        } else if (word.kind === 'away') {
          this.#reason = word.reason;
        } else if (!this.hooks.connected() && performance.now() - this.#reopenedAt > REOPEN_AGAIN_MS) {
          // The server answers for the kernel: reopen now rather than at the end of the services' back-off (up to
          // a minute), or never (the services give up after seven tries).
          this.#reopenedAt = performance.now();
          this.#reason = 'the server answers; reopening the channels';
          this.hooks.reopen();
        }
        return word;
      })
      .finally(() => (this.#asking = undefined));
    return this.#asking;
  }
}
