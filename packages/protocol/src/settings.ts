import { DEFAULT_WORKER_LIMITS, WORKER_LIMIT_WIRE_NAMES, type WorkerLimits } from './constants.js';

/*
 * The limits the worker enforces, as the parent chooses them; sent in the `configure` message (see
 * {@link workerLimits}). Their names, wire names and defaults are generated from fixtures/protocol/worker-limits.json
 * (tooling/scripts/gen-protocol.mjs), as the worker's are. Only what crosses the wire lives here: the CLI's env/flag
 * table is the server's (`@ipython-mcp/mcp-server`), deadlines and queue bounds are the supervisor's.
 */
export { DEFAULT_WORKER_LIMITS, type WorkerLimits };

/** The limits as the `configure` message carries them. */
export function workerLimits(limits: WorkerLimits): Record<string, number> {
  const wire: Record<string, number> = {};
  for (const key of Object.keys(WORKER_LIMIT_WIRE_NAMES) as (keyof WorkerLimits)[]) wire[WORKER_LIMIT_WIRE_NAMES[key]] = limits[key];
  return wire;
}
