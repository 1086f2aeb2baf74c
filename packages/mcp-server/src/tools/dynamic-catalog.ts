import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { schemaFingerprint } from '@ipython-mcp/schema-fingerprint';
import type { AfterInterruptPolicy, Runtime } from '@ipython-mcp/worker-supervisor';

/** A dynamic registration as the worker reports it. */
export interface Registration {
  tool_name: string;
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  fingerprint: string;
}

/** A `discover` answer: the full snapshot, or `unchanged` when the worker's revision is the one asked about. */
export type DiscoverResult =
  | { unchanged: true; revision: number }
  | { unchanged: false; revision: number; tools: Registration[]; stale: string[] | undefined };

/**
 * Parses the worker's `discover` result: the one reader of it (catalog refresh and the verification after an
 * interruption both use it). Undefined when the result is not a snapshot.
 */
export function parseDiscoverResult(result: Record<string, unknown>): DiscoverResult | undefined {
  const revision = result.revision;
  if (typeof revision !== 'number') return undefined;
  if (result.unchanged === true) return { unchanged: true, revision };
  if (!Array.isArray(result.tools)) return undefined;
  const stale = Array.isArray(result.stale) ? result.stale.filter((name): name is string => typeof name === 'string') : undefined;
  return { unchanged: false, revision, tools: result.tools as Registration[], stale };
}

interface Entry {
  registration: Registration;
  validate: ValidateFunction;
}

/**
 * Why a known tool name is not callable right now; its cached calls get `stale_registration` until the tool is
 * registered again:
 *
 * - `stale`: the worker reports the registration stale (incompatible redefinition, deleted or removed symbol);
 * - `fingerprint_mismatch`: the worker's fingerprint is not the one this server computes for the schema;
 * - `reset`: the registration vanished from the worker's catalog without an unregister (the `reset` tool);
 * - `worker_replaced`: the worker was replaced and its whole catalog dropped.
 */
export type StaleReason = 'stale' | 'fingerprint_mismatch' | 'reset' | 'worker_replaced';

/** How many dropped tool names are remembered for a `stale_registration` answer. */
const MAX_DROPPED_NAMES = 1000;

/**
 * The parent's view of the dynamic tool registry. The registry itself lives in the worker; this keeps the last
 * reconciled, immutable snapshot, a revision that is monotonic across worker epochs, argument validators, and the
 * names whose cached calls must get `stale_registration`.
 *
 * Every change of the advertised tool set advances {@link revision} and calls `notify` (which sends
 * `notifications/tools/list_changed`), and so does any change of the worker's registry revision.
 */
export class DynamicCatalog {
  private entries = new Map<string, Entry>();
  /** Registrations the worker reports stale, or that this server refuses (fingerprint mismatch). */
  private staleNames = new Map<string, StaleReason>();
  /** Registrations that disappeared without an unregister (reset, worker replacement); bounded, oldest first. */
  private dropped = new Map<string, StaleReason>();
  private revisionNumber = 0;
  private workerRevision = 0;
  private inflight: Promise<boolean> | undefined;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  private readonly notify: () => void;

  constructor(notify: () => void) {
    this.notify = notify;
  }

  /** Monotonic catalog revision, across worker replacements. */
  get revision(): number {
    return this.revisionNumber;
  }

  /** Live registrations in the snapshot. */
  get size(): number {
    return this.entries.size;
  }

  /** Whether discovery must ask the worker (there may be registrations to reconcile). */
  get needsDiscovery(): boolean {
    return this.entries.size > 0 || this.workerRevision > 0;
  }

  /** The snapshot's registration for an MCP name. */
  get(toolName: string): Entry | undefined {
    return this.entries.get(toolName);
  }

  /** Why `toolName` is known but not callable (its calls get `stale_registration`), or undefined. */
  staleReason(toolName: string): StaleReason | undefined {
    if (this.entries.has(toolName)) return undefined;
    return this.staleNames.get(toolName) ?? this.dropped.get(toolName);
  }

  /** MCP tool definitions of the snapshot, sorted by name. */
  tools(): Tool[] {
    return [...this.entries.values()]
      .sort((a, b) => (a.registration.tool_name < b.registration.tool_name ? -1 : 1))
      .map(({ registration }) => ({
        name: registration.tool_name,
        description: registration.description,
        inputSchema: registration.input_schema as Tool['inputSchema'],
        annotations: { title: registration.tool_name },
        _meta: { 'ipython-mcp/backing_name': registration.name, 'ipython-mcp/fingerprint': registration.fingerprint },
      }));
  }

  /**
   * Adopts a worker snapshot (from `discover`): `registrations` are the fresh tools, `stale` the names the worker
   * holds as stale (when omitted, the previously known stale names are kept). A registration whose fingerprint
   * this server does not reproduce, or whose schema does not compile, is not advertised. Names that vanish from
   * the worker without an unregister (see {@link forget}) are remembered as dropped by `reset`.
   */
  adopt(workerRevision: number, registrations: readonly Registration[], stale?: readonly string[]): void {
    const next = new Map<string, Entry>();
    const nextStale = new Map<string, StaleReason>();
    for (const toolName of stale ?? [...this.staleNames].filter(([, reason]) => reason === 'stale').map(([name]) => name)) {
      if (typeof toolName === 'string') nextStale.set(toolName, 'stale');
    }
    for (const registration of registrations) {
      const entry = this.entryFor(registration);
      if (entry === undefined) nextStale.set(registration.tool_name, 'fingerprint_mismatch');
      else next.set(registration.tool_name, entry);
    }
    for (const name of [...this.entries.keys(), ...this.staleNames.keys()]) {
      if (!next.has(name) && !nextStale.has(name)) this.remember(name, 'reset');
    }
    for (const name of [...next.keys(), ...nextStale.keys()]) this.dropped.delete(name);
    const changed = workerRevision !== this.workerRevision || !sameEntries(next, this.entries);
    this.entries = next;
    this.staleNames = nextStale;
    this.workerRevision = workerRevision;
    if (changed) this.bump();
  }

  /** Forgets names that were explicitly unregistered: calls to them are plain unknown tools again. */
  forget(toolNames: readonly string[]): void {
    for (const name of toolNames) {
      this.dropped.delete(name);
      if (!this.entries.has(name)) this.staleNames.delete(name);
    }
  }

  /** The worker was replaced: every registration is gone, and cached calls get `stale_registration`. */
  clear(): void {
    const hadAny = this.entries.size > 0 || this.workerRevision > 0 || this.staleNames.size > 0;
    for (const name of [...this.entries.keys(), ...this.staleNames.keys()]) this.remember(name, 'worker_replaced');
    this.entries = new Map();
    this.staleNames = new Map();
    this.workerRevision = 0;
    if (hadAny) this.bump();
  }

  /**
   * Refreshes the snapshot through the runtime's queue (behind every earlier operation). Returns false when the
   * worker could not answer, or answered from an epoch that has since been replaced.
   */
  refresh(runtime: Runtime, signal?: AbortSignal): Promise<boolean> {
    const refreshing = this.discover(runtime, signal);
    if (signal === undefined) {
      this.inflight = refreshing;
      void refreshing.finally(() => {
        if (this.inflight === refreshing) this.inflight = undefined;
      });
    }
    return refreshing;
  }

  /**
   * Reconciles after an operation that has just completed. Joins a refresh still in flight: the owner queue is
   * FIFO and serial, so a discover that has not finished when that operation's result arrived was admitted after
   * it and observes its effects. At most one such refresh waits in the queue however many calls complete.
   */
  reconcileAfter(runtime: Runtime): Promise<boolean> {
    return this.inflight ?? this.refresh(runtime);
  }

  /** The worker epoch the snapshot was taken from; a new epoch always gets a full discovery. */
  private snapshotEpoch = 0;

  /**
   * Whether `workerRevision`, a worker's `catalog_revision` after an operation of `epoch`, is the revision this
   * snapshot reflects: then nothing changed and no `discover` is needed.
   */
  reflects(workerRevision: number, epoch: number): boolean {
    return this.snapshotEpoch === epoch && this.workerRevision === workerRevision;
  }

  /**
   * The re-read after a cooperative interruption, handed to the runtime (which never calls up into the server):
   * when there may be registrations, a full `discover` on the interrupted worker, adopted before the namespace is
   * reported preserved.
   */
  afterInterruptPolicy(): AfterInterruptPolicy {
    return {
      operation: 'discover',
      params: () => ({}),
      needed: () => this.needsDiscovery,
      accept: (result, epoch) => {
        const parsed = parseDiscoverResult(result);
        if (parsed === undefined || parsed.unchanged) return false;
        this.snapshotEpoch = epoch;
        this.adopt(parsed.revision, parsed.tools, parsed.stale);
        return true;
      },
    };
  }

  private async discover(runtime: Runtime, signal: AbortSignal | undefined): Promise<boolean> {
    // Ask for the full snapshot only when the worker's revision moved since the one this snapshot reflects.
    const known = this.workerRevision;
    const epoch = this.snapshotEpoch;
    const params = epoch === runtime.epoch ? { known_revision: known } : {};
    const outcome = await runtime.run('discover', params, { signal });
    if (!outcome.ok) return false;
    if (outcome.meta.epoch !== runtime.epoch) return false;
    const result = parseDiscoverResult(outcome.result);
    if (result?.unchanged === true && result.revision === known && this.workerRevision === known) return true;
    this.snapshotEpoch = outcome.meta.epoch;
    if (result === undefined || result.unchanged) return false;
    this.adopt(result.revision, result.tools, result.stale);
    return true;
  }

  private entryFor(registration: Registration): Entry | undefined {
    // The worker and this package must agree byte for byte on the fingerprint (shared vectors pin both).
    let fingerprint: string;
    try {
      fingerprint = schemaFingerprint(registration.input_schema);
    } catch {
      return undefined;
    }
    if (fingerprint !== registration.fingerprint) return undefined;
    const previous = this.entries.get(registration.tool_name);
    if (previous !== undefined && previous.registration.fingerprint === registration.fingerprint) {
      return { registration, validate: previous.validate };
    }
    try {
      const validate = this.ajv.compile(registration.input_schema);
      // The validator outlives the registration snapshot; do not let Ajv's schema cache grow with every version.
      this.ajv.removeSchema(registration.input_schema);
      return { registration, validate };
    } catch {
      return undefined;
    }
  }

  private remember(name: string, reason: StaleReason): void {
    this.dropped.delete(name);
    this.dropped.set(name, reason);
    while (this.dropped.size > MAX_DROPPED_NAMES) {
      const oldest = this.dropped.keys().next().value as string;
      this.dropped.delete(oldest);
    }
  }

  private bump(): void {
    this.revisionNumber += 1;
    this.notify();
  }
}

function sameEntries(a: Map<string, Entry>, b: Map<string, Entry>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, entry] of a) {
    const other = b.get(key)?.registration;
    if (other === undefined) return false;
    if (other.fingerprint !== entry.registration.fingerprint) return false;
    if (other.description !== entry.registration.description || other.name !== entry.registration.name) return false;
  }
  return true;
}
