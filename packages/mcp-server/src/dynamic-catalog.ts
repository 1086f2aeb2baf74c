import { Ajv, type ValidateFunction } from 'ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { schemaFingerprint } from '@ipython-mcp/schema-fingerprint';
import type { Runtime } from '@ipython-mcp/worker-supervisor';

/** A dynamic registration as the worker reports it. */
export interface Registration {
  tool_name: string;
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  fingerprint: string;
}

interface Entry {
  registration: Registration;
  validate: ValidateFunction;
}

/**
 * The parent's view of the dynamic tool registry. The registry itself lives in the worker; this keeps the last
 * reconciled, immutable snapshot, a revision that is monotonic across worker epochs, and argument validators.
 */
export class DynamicCatalog {
  private entries = new Map<string, Entry>();
  private revisionNumber = 0;
  private workerRevision = 0;
  private readonly ajv = new Ajv({ strict: false, allErrors: false });
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

  /** Adopts a worker snapshot (from `discover`); notifies when the set of tools changed. */
  adopt(workerRevision: number, registrations: Registration[]): void {
    const next = new Map<string, Entry>();
    for (const registration of registrations) {
      // The worker and this package must agree byte for byte on the fingerprint (shared vectors pin both).
      if (schemaFingerprint(registration.input_schema) !== registration.fingerprint) continue;
      const previous = this.entries.get(registration.tool_name);
      const validate =
        previous !== undefined && previous.registration.fingerprint === registration.fingerprint
          ? previous.validate
          : this.ajv.compile(registration.input_schema);
      next.set(registration.tool_name, { registration, validate });
    }
    const changed = workerRevision !== this.workerRevision || !sameKeys(next, this.entries);
    this.entries = next;
    this.workerRevision = workerRevision;
    if (changed) this.bump();
  }

  /** Notes a worker revision seen on any response; a change means discovery must run again. */
  observe(workerRevision: number | undefined): boolean {
    if (workerRevision === undefined || workerRevision === this.workerRevision) return false;
    return true;
  }

  /** The worker was replaced or reset: every registration is gone. */
  clear(): void {
    const hadAny = this.entries.size > 0 || this.workerRevision > 0;
    this.entries = new Map();
    this.workerRevision = 0;
    if (hadAny) this.bump();
  }

  /** Refreshes the snapshot through the runtime's queue. Returns false when the worker could not answer. */
  async refresh(runtime: Runtime, signal?: AbortSignal): Promise<boolean> {
    const outcome = await runtime.run('discover', {}, { signal });
    if (!outcome.ok) return false;
    const result = outcome.result as { revision?: unknown; tools?: unknown };
    if (typeof result.revision !== 'number' || !Array.isArray(result.tools)) return false;
    this.adopt(result.revision, result.tools as Registration[]);
    return true;
  }

  private bump(): void {
    this.revisionNumber += 1;
    this.notify();
  }
}

function sameKeys(a: Map<string, Entry>, b: Map<string, Entry>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, entry] of a) {
    if (b.get(key)?.registration.fingerprint !== entry.registration.fingerprint) return false;
  }
  return true;
}
