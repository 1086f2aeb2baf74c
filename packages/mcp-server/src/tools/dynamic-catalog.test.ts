import { describe, expect, it } from 'vitest';
import { schemaFingerprint } from '@ipython-mcp/schema-fingerprint';
import type { OperationOutcome, Runtime } from '@ipython-mcp/worker-supervisor';
import { DynamicCatalog, parseDiscoverResult, type Registration } from './dynamic-catalog.js';

function registration(toolName: string, schema: Record<string, unknown>, fingerprint = schemaFingerprint(schema)): Registration {
  return { tool_name: toolName, name: toolName, description: `${toolName} tool`, input_schema: schema, fingerprint };
}

const intSchema = {
  type: 'object',
  properties: { a: { type: 'integer' }, b: { type: 'number', default: 1.5 } },
  required: ['a'],
  additionalProperties: false,
};
const tupleSchema = {
  type: 'object',
  properties: {
    pair: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], minItems: 2, maxItems: 2, items: false },
    tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
  },
  required: ['pair'],
  additionalProperties: false,
};

function counted(): { catalog: DynamicCatalog; notified: () => number } {
  let count = 0;
  const catalog = new DynamicCatalog(() => {
    count += 1;
  });
  return { catalog, notified: () => count };
}

/** A stand-in for the runtime: `discover` answers come from `answer`, runs are counted and can be held. */
function fakeRuntime(answer: () => Record<string, unknown>, epoch = { current: 1, answered: 1 }) {
  const held: Array<() => void> = [];
  let runs = 0;
  let hold = false;
  const runtime = {
    get epoch() {
      return epoch.current;
    },
    async run(op: string): Promise<OperationOutcome> {
      expect(op).toBe('discover');
      runs += 1;
      if (hold) await new Promise<void>((resolve) => held.push(resolve));
      return {
        ok: true,
        result: answer(),
        meta: { requestId: null, sequence: runs, epoch: epoch.answered, queueWaitMs: 0, durationMs: 0, interruption: null, namespace: null },
      };
    },
  } as unknown as Runtime;
  return {
    runtime,
    runs: () => runs,
    hold: (value: boolean) => {
      hold = value;
    },
    release: () => held.splice(0).forEach((resolve) => resolve()),
  };
}

describe('DynamicCatalog.adopt', () => {
  it('adopts registrations whose fingerprint it reproduces, advancing the revision and notifying once', () => {
    const { catalog, notified } = counted();
    catalog.adopt(1, [registration('add', intSchema)]);
    expect(catalog.revision).toBe(1);
    expect(notified()).toBe(1);
    expect(catalog.tools().map((tool) => tool.name)).toEqual(['add']);
    expect(catalog.tools()[0]!.inputSchema).toEqual(intSchema);
    expect(catalog.get('add')?.registration.fingerprint).toBe(schemaFingerprint(intSchema));
  });

  it('does not adopt a registration whose fingerprint does not match the schema', () => {
    const { catalog, notified } = counted();
    const wrong = registration('bad', intSchema, schemaFingerprint({ ...intSchema, required: [] }));
    catalog.adopt(1, [wrong, registration('good', tupleSchema)]);
    expect(catalog.tools().map((tool) => tool.name)).toEqual(['good']);
    expect(catalog.get('bad')).toBeUndefined();
    expect(catalog.staleReason('bad')).toBe('fingerprint_mismatch');
    expect(catalog.size).toBe(1);
    expect(notified()).toBe(1);
  });

  it('does not adopt a registration whose fingerprint is not even well-formed, nor one whose schema does not compile', () => {
    const { catalog } = counted();
    const broken = { type: 'object', properties: { a: { type: 'no-such-type' } } };
    catalog.adopt(1, [registration('short', intSchema, 'abc'), registration('broken', broken)]);
    expect(catalog.size).toBe(0);
    expect(catalog.staleReason('short')).toBe('fingerprint_mismatch');
    expect(catalog.staleReason('broken')).toBe('fingerprint_mismatch');
  });

  it('changes nothing and sends nothing when the same snapshot is adopted again', () => {
    const { catalog, notified } = counted();
    catalog.adopt(3, [registration('add', intSchema)]);
    catalog.adopt(3, [registration('add', intSchema)]);
    expect(catalog.revision).toBe(1);
    expect(notified()).toBe(1);
  });

  it('advances on any worker revision change and on a changed fingerprint', () => {
    const { catalog, notified } = counted();
    catalog.adopt(1, [registration('add', intSchema)]);
    catalog.adopt(2, [registration('add', intSchema)]);
    expect(catalog.revision).toBe(2);
    catalog.adopt(2, [registration('add', tupleSchema)]);
    expect(catalog.revision).toBe(3);
    expect(notified()).toBe(3);
  });

  it('keeps a validator per snapshot entry: draft 2020-12 tuples and sets validate', () => {
    const { catalog } = counted();
    catalog.adopt(1, [registration('shapes', tupleSchema), registration('add', intSchema)]);
    const shapes = catalog.get('shapes')!.validate;
    expect(shapes({ pair: [1, 'x'] })).toBe(true);
    expect(shapes({ pair: [1] })).toBe(false);
    expect(shapes({ pair: [1, 'x', 2] })).toBe(false);
    expect(shapes({ pair: ['x', 1] })).toBe(false);
    expect(shapes({ pair: [1, 'x'], tags: ['a', 'a'] })).toBe(false);
    const add = catalog.get('add')!.validate;
    expect(add({ a: 1 })).toBe(true);
    expect(add({ a: 1.5 })).toBe(false);
    expect(add({ a: 1, c: 2 })).toBe(false);
    expect(add({})).toBe(false);
    // An unchanged registration keeps its compiled validator; a snapshot entry is never mutated.
    const before = catalog.get('add')!;
    catalog.adopt(2, [registration('add', intSchema), registration('shapes', tupleSchema)]);
    expect(catalog.get('add')!.validate).toBe(before.validate);
    expect(catalog.get('add')).not.toBe(before);
  });

  it('reports stale and dropped names until re-registered or forgotten', () => {
    const { catalog, notified } = counted();
    catalog.adopt(2, [registration('add', intSchema), registration('other', intSchema)]);
    catalog.adopt(3, [registration('other', intSchema)], ['add']);
    expect(catalog.tools().map((tool) => tool.name)).toEqual(['other']);
    expect(catalog.staleReason('add')).toBe('stale');
    expect(catalog.staleReason('other')).toBeUndefined();
    // Without a stale list (the reconcile hook), known stale names are kept.
    catalog.adopt(3, [registration('other', intSchema)]);
    expect(catalog.staleReason('add')).toBe('stale');
    // Vanishing without an unregister (reset) keeps cached calls answered as stale.
    catalog.adopt(4, [], []);
    expect(catalog.staleReason('add')).toBe('reset');
    expect(catalog.staleReason('other')).toBe('reset');
    expect(catalog.size).toBe(0);
    catalog.adopt(5, [registration('add', intSchema)]);
    expect(catalog.staleReason('add')).toBeUndefined();
    catalog.forget(['other']);
    expect(catalog.staleReason('other')).toBeUndefined();
    expect(notified()).toBe(catalog.revision);
  });
});

describe('DynamicCatalog.clear (worker replacement)', () => {
  it('drops everything, notifies, and keeps the revision monotonic across worker revisions', () => {
    const { catalog, notified } = counted();
    catalog.adopt(7, [registration('add', intSchema)]);
    const before = catalog.revision;
    catalog.clear();
    expect(catalog.revision).toBe(before + 1);
    expect(notified()).toBe(2);
    expect(catalog.size).toBe(0);
    expect(catalog.needsDiscovery).toBe(false);
    expect(catalog.staleReason('add')).toBe('worker_replaced');
    // The new worker counts from zero again; the catalog revision does not.
    catalog.adopt(1, [registration('add', intSchema)]);
    expect(catalog.revision).toBe(before + 2);
    expect(catalog.staleReason('add')).toBeUndefined();
  });

  it('does not notify when there was nothing to drop', () => {
    const { catalog, notified } = counted();
    catalog.clear();
    expect(catalog.revision).toBe(0);
    expect(notified()).toBe(0);
  });
});

describe('DynamicCatalog.refresh', () => {
  it('adopts the worker discover result, including the stale list', async () => {
    const { catalog } = counted();
    const fake = fakeRuntime(() => ({ revision: 2, tools: [registration('add', intSchema)], stale: ['gone'] }));
    expect(await catalog.refresh(fake.runtime)).toBe(true);
    expect(catalog.tools().map((tool) => tool.name)).toEqual(['add']);
    expect(catalog.staleReason('gone')).toBe('stale');
  });

  it('discards an answer from a replaced epoch', async () => {
    const { catalog, notified } = counted();
    const fake = fakeRuntime(() => ({ revision: 2, tools: [registration('add', intSchema)], stale: [] }), { current: 2, answered: 1 });
    expect(await catalog.refresh(fake.runtime)).toBe(false);
    expect(catalog.size).toBe(0);
    expect(notified()).toBe(0);
  });

  it('joins a refresh still in flight instead of queueing another', async () => {
    const { catalog } = counted();
    const fake = fakeRuntime(() => ({ revision: 1, tools: [registration('add', intSchema)], stale: [] }));
    fake.hold(true);
    const first = catalog.reconcileAfter(fake.runtime);
    const second = catalog.reconcileAfter(fake.runtime);
    const third = catalog.reconcileAfter(fake.runtime);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(fake.runs()).toBe(1);
    fake.release();
    expect(await Promise.all([first, second, third])).toEqual([true, true, true]);
    // Once settled, the next completed operation gets a fresh discover.
    fake.hold(false);
    await catalog.reconcileAfter(fake.runtime);
    expect(fake.runs()).toBe(2);
  });
});

describe('the discover parser and the after-interrupt policy', () => {
  it('parses a snapshot, an unchanged answer, and refuses anything else', () => {
    expect(parseDiscoverResult({ revision: 2, tools: [], stale: ['old', 7] })).toEqual({ unchanged: false, revision: 2, tools: [], stale: ['old'] });
    expect(parseDiscoverResult({ revision: 2, unchanged: true })).toEqual({ unchanged: true, revision: 2 });
    expect(parseDiscoverResult({ revision: '2', tools: [] })).toBeUndefined();
    expect(parseDiscoverResult({ revision: 2 })).toBeUndefined();
    expect(parseDiscoverResult({ revision: 2, tools: {} })).toBeUndefined();
  });

  it('is needed only when there may be registrations; it adopts a snapshot and refuses a bad one', () => {
    const { catalog, notified } = counted();
    const policy = catalog.afterInterruptPolicy();
    expect(policy.operation).toBe('discover');
    expect(policy.needed()).toBe(false);
    catalog.adopt(1, [registration('add', intSchema)]);
    expect(policy.needed()).toBe(true);
    expect(policy.accept({ revision: 'x' }, 1)).toBe(false);
    expect(policy.accept({ revision: 1, unchanged: true }, 1)).toBe(false);
    const before = notified();
    expect(policy.accept({ revision: 2, tools: [registration('add', intSchema), registration('pair', tupleSchema)] }, 1)).toBe(true);
    expect(catalog.tools().map((tool) => tool.name)).toEqual(['add', 'pair']);
    expect(notified()).toBe(before + 1);
    // The snapshot now reflects revision 2 of epoch 1, and nothing else.
    expect(catalog.reflects(2, 1)).toBe(true);
    expect(catalog.reflects(3, 1)).toBe(false);
    expect(catalog.reflects(2, 2)).toBe(false);
  });
});
