/** The kernel side's answer to the comm's `configure`: `ready` (what the worker is) or why it could not start. */
import { PROTOCOL_VERSION } from '@ipython-mcp/protocol';
import type { WorkerInfo } from '@ipython-mcp/worker-supervisor';

export type Handshake = { ok: true; info: WorkerInfo; pid: number | undefined } | { ok: false; failure: string };

/** What the first comm message says: the worker's info (its start-up time still to be filled in), or a failure. */
export function readHandshake(message: Record<string, unknown>): Handshake {
  if (message.type === 'ready') {
    if (message.protocol !== undefined && message.protocol !== PROTOCOL_VERSION) {
      return { ok: false, failure: `the kernel side speaks protocol ${String(message.protocol)} (expected ${PROTOCOL_VERSION})` };
    }
    const pid = typeof message.pid === 'number' ? message.pid : undefined;
    return {
      ok: true,
      pid,
      info: {
        pid: pid ?? 0,
        python: typeof message.python === 'string' ? message.python : 'unknown',
        ipython: typeof message.ipython === 'string' ? message.ipython : 'unknown',
        codec: 'json',
        protectedNames: Array.isArray(message.protected_names) ? message.protected_names.map(String) : [],
        startupMs: 0,
      },
    };
  }
  if (message.type === 'startup_failed') {
    const error = message.error as { message?: unknown } | undefined;
    return { ok: false, failure: `the worker could not start in the kernel: ${typeof error?.message === 'string' ? error.message.slice(0, 2000) : 'unknown failure'}` };
  }
  return { ok: false, failure: `unexpected ${String(message.type).slice(0, 32)} message during start-up` };
}
