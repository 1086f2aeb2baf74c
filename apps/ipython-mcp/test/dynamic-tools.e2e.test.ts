import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ListToolsResultSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
// The TypeScript fingerprint implementation the server uses (built with the rest of the workspace).
import { schemaFingerprint } from '../../../packages/schema-fingerprint/dist/index.js';
import { fullRuntime, startServer, type TestServer } from './harness.js';

/**
 * Dynamic tools end to end: the built binary over stdio, a real SDK client with a tools/list_changed handler,
 * a real Python worker.
 */

interface Session {
  server: TestServer;
  /** How many notifications/tools/list_changed the client has received. */
  notifications: () => number;
  /** Resolves once more than `seen` notifications arrived (fails after `ms`). */
  notifiedAfter: (seen: number, ms?: number) => Promise<void>;
  listNames: () => Promise<string[]>;
  listTool: (name: string) => Promise<Tool | undefined>;
  execute: (code: string) => Promise<Record<string, any>>;
  register: (name: string, toolName?: string | null, description?: string | null) => Promise<CallToolResult>;
  revision: () => Promise<number>;
}

async function open(env: Record<string, string> = {}): Promise<Session> {
  const server = await startServer(env);
  let count = 0;
  server.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    count += 1;
  });
  const notifiedAfter = async (seen: number, ms = 5000): Promise<void> => {
    const deadline = Date.now() + ms;
    while (count <= seen) {
      if (Date.now() > deadline) throw new Error(`no tools/list_changed after ${seen} (still ${count})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const list = async (): Promise<Tool[]> => (await server.client.listTools(undefined, { timeout: 120_000 })).tools;
  const execute = async (code: string): Promise<Record<string, any>> => {
    const result = await server.call('execute', { code });
    const structured = result.structuredContent as Record<string, any>;
    // A clean run has no status (default "ok") and no error.
    if (structured.status !== undefined || structured.error !== undefined) throw new Error(`execute failed: ${JSON.stringify(structured.error)}`);
    return structured;
  };
  return {
    server,
    notifications: () => count,
    notifiedAfter,
    listNames: async () => (await list()).map((tool) => tool.name),
    listTool: async (name) => (await list()).find((tool) => tool.name === name),
    execute,
    register: (name, toolName = null, description = null) =>
      server.call('register_tool', { name, tool_name: toolName, description }),
    // registry_revision is left out while it is 0, its default.
    revision: async () => ((await server.structured('runtime_status')).registry_revision ?? 0) as number,
  };
}

function errorOf(result: CallToolResult): Record<string, any> {
  expect(result.isError).toBe(true);
  return (result.structuredContent as Record<string, any>).error as Record<string, any>;
}

function structuredOf(result: CallToolResult): Record<string, any> {
  if (result.isError) throw new Error(`unexpected failure: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as Record<string, any>;
}

/** Lets a notification that is (wrongly) on its way arrive before asserting that none did. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 150));

describe('a client with a tools/list_changed handler', () => {
  let s: Session;
  beforeAll(async () => {
    s = await open();
  });
  afterAll(async () => {
    await s.server.close();
  });

  it('sees a registered tool appear, calls it, and gets typed validation', async () => {
    await s.execute(
      [
        'def add(a: int, b: int = 2) -> int:',
        '    """Add two integers."""',
        '    return a + b',
      ].join('\n'),
    );
    const before = s.notifications();
    const revisionBefore = await s.revision();
    const registered = structuredOf(await s.register('add'));
    expect(registered).toMatchObject({ tool_name: 'add', name: 'add', description: 'Add two integers.' });
    expect(registered.input_schema).toEqual({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer', default: 2 } },
      required: ['a'],
      additionalProperties: false,
    });
    expect(registered.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(registered.fingerprint).toBe(schemaFingerprint(registered.input_schema));
    expect(registered.revision).toBeGreaterThan(revisionBefore);
    await s.notifiedAfter(before);

    const tool = await s.listTool('add');
    expect(tool).toBeDefined();
    expect(tool!.description).toBe('Add two integers.');
    // The function's schema (the one the fingerprint covers), plus the per-call deadline and detach time every
    // dynamic tool takes.
    expect(tool!.inputSchema).toEqual({
      ...registered.input_schema,
      properties: {
        ...registered.input_schema.properties,
        timeout_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
        detach_after_seconds: { type: 'number', exclusiveMinimum: 0 },
      },
    });
    expect((tool!._meta as Record<string, unknown>)['ipython-mcp/fingerprint']).toBe(registered.fingerprint);

    expect(structuredOf(await s.server.call('add', { a: 40 })).value).toBe(42);
    expect(structuredOf(await s.server.call('add', { a: 1, b: 10 })).value).toBe(11);
  });

  it('refuses invalid arguments with a structured invalid_arguments error and no traceback', async () => {
    for (const args of [{ a: 'x' }, {}, { a: 1, c: 3 }, { a: 1.5 }]) {
      const result = await s.server.call('add', args);
      const error = errorOf(result);
      expect(error.code).toBe('invalid_arguments');
      expect(JSON.stringify(result)).not.toMatch(/Traceback|File "/);
    }
    // Nothing ran: the namespace is unchanged and still serving.
    expect(structuredOf(await s.server.call('add', { a: 1 })).value).toBe(3);
  });

  it('converts typed arguments (tuple, set, Literal, dict, optional) and reports non-JSON results', async () => {
    await s.execute(
      [
        'from typing import Literal, Optional',
        'def shapes(pair: tuple[int, str], tags: set[str], mode: Literal["a", "b"], weights: dict[str, float],',
        '           limit: Optional[int] = None, rest: tuple[int, ...] = ()) -> list:',
        '    return [type(pair).__name__, sorted(tags), type(tags).__name__, mode, weights, limit, list(rest)]',
        'def boom(x: int) -> int:',
        '    raise ValueError("tool failed")',
        'class Made:',
        '    def __init__(self, x: int):',
        '        self.x = x',
      ].join('\n'),
    );
    structuredOf(await s.register('shapes'));
    structuredOf(await s.register('boom'));
    structuredOf(await s.register('Made'));
    const value = structuredOf(
      await s.server.call('shapes', { pair: [1, 'one'], tags: ['b', 'a'], mode: 'b', weights: { w: 0.5 }, rest: [1, 2] }),
    ).value;
    expect(value).toEqual(['tuple', ['a', 'b'], 'set', 'b', { w: 0.5 }, null, [1, 2]]);
    for (const bad of [
      { pair: [1], tags: [], mode: 'a', weights: {} },
      { pair: [1, 'x'], tags: ['a', 'a'], mode: 'a', weights: {} },
      { pair: [1, 'x'], tags: [], mode: 'c', weights: {} },
      { pair: [1, 'x'], tags: [], mode: 'a', weights: { w: 'heavy' } },
    ]) {
      expect(errorOf(await s.server.call('shapes', bad)).code).toBe('invalid_arguments');
    }
    expect(errorOf(await s.server.call('boom', { x: 1 })).code).toBe('call_raised');
    expect(errorOf(await s.server.call('Made', { x: 1 })).code).toBe('result_not_json');
  });

  it('drops a tool on an incompatible redefinition (with a notification) and brings it back on re-registration', async () => {
    const cachedFingerprint = (await s.listTool('add'))!._meta!['ipython-mcp/fingerprint'];
    const before = s.notifications();
    await s.execute('def add(a: int, b: int) -> int:\n    return a * b');
    await s.notifiedAfter(before);
    expect(await s.listNames()).not.toContain('add');
    const stale = errorOf(await s.server.call('add', { a: 2, b: 3 }));
    expect(stale.code).toBe('stale_registration');
    expect(JSON.stringify(stale)).not.toMatch(/Traceback/);
    // Still stale on a second cached call: only re-registration brings it back.
    expect(errorOf(await s.server.call('add', { a: 2, b: 3 })).code).toBe('stale_registration');

    const again = s.notifications();
    const registered = structuredOf(await s.register('add'));
    expect(registered.input_schema.required).toEqual(['a', 'b']);
    expect(registered.fingerprint).not.toBe(cachedFingerprint);
    await s.notifiedAfter(again);
    expect(await s.listNames()).toContain('add');
    expect(structuredOf(await s.server.call('add', { a: 2, b: 3 })).value).toBe(6);
  });

  const staleTriggers: Array<[string, string, string]> = [
    ['adding a parameter with a default', 'def {f}(a: int) -> int:\n    return a', 'def {f}(a: int, extra: int = 0) -> int:\n    return a'],
    ['removing a parameter', 'def {f}(a: int, b: int) -> int:\n    return a', 'def {f}(a: int) -> int:\n    return a'],
    ['renaming a parameter', 'def {f}(a: int) -> int:\n    return a', 'def {f}(renamed: int) -> int:\n    return renamed'],
    ['changing a default', 'def {f}(a: int = 1) -> int:\n    return a', 'def {f}(a: int = 2) -> int:\n    return a'],
    ['changing an annotation', 'def {f}(a: int) -> int:\n    return a', 'def {f}(a: float) -> float:\n    return a'],
    [
      'replacing a class constructor',
      'class {f}:\n    def __init__(self, a: int):\n        self.a = a',
      'def _new_init(self, a: int, b: str = "b"):\n    self.a = a\n{f}.__init__ = _new_init',
    ],
    ['deleting the backing symbol in execute', 'def {f}(a: int) -> int:\n    return a', 'del {f}'],
  ];
  let triggerIndex = 0;
  for (const [what, define, change] of staleTriggers) {
    it(`makes a registration stale: ${what}`, async () => {
      triggerIndex += 1;
      const f = `trigger_${triggerIndex}`;
      await s.execute(define.replaceAll('{f}', f));
      structuredOf(await s.register(f));
      expect(await s.listNames()).toContain(f);
      const revision = await s.revision();
      const before = s.notifications();
      await s.execute(change.replaceAll('{f}', f));
      await s.notifiedAfter(before);
      expect(await s.revision()).toBeGreaterThan(revision);
      expect(await s.listNames()).not.toContain(f);
      expect(errorOf(await s.server.call(f, { a: 1 })).code).toBe('stale_registration');
    });
  }

  it('makes a registration stale when the remove tool deletes its backing symbol', async () => {
    await s.execute('def removed_fn(a: int) -> int:\n    return a');
    structuredOf(await s.register('removed_fn', 'removed_tool'));
    const before = s.notifications();
    const removed = await s.server.structured('remove', { names: ['removed_fn'] });
    expect(removed.removed).toEqual(['removed_fn']);
    await s.notifiedAfter(before);
    expect(await s.listNames()).not.toContain('removed_tool');
    expect(errorOf(await s.server.call('removed_tool', { a: 1 })).code).toBe('stale_registration');
    // Redefining the symbol does not revive the registration: only re-registration does.
    await s.execute('def removed_fn(a: int) -> int:\n    return a + 1');
    expect(errorOf(await s.server.call('removed_tool', { a: 1 })).code).toBe('stale_registration');
    structuredOf(await s.register('removed_fn', 'removed_tool'));
    expect(structuredOf(await s.server.call('removed_tool', { a: 1 })).value).toBe(2);
  });

  it('keeps a body-only redefinition registered and uses the new behaviour, without a notification', async () => {
    await s.execute('def body(a: int) -> str:\n    return "old"');
    const registered = structuredOf(await s.register('body'));
    expect(structuredOf(await s.server.call('body', { a: 1 })).value).toBe('old');
    const revision = await s.revision();
    const before = s.notifications();
    await s.execute('def body(a: int) -> str:\n    return "new"');
    expect(structuredOf(await s.server.call('body', { a: 1 })).value).toBe('new');
    const tool = await s.listTool('body');
    expect(tool?._meta?.['ipython-mcp/fingerprint']).toBe(registered.fingerprint);
    await settle();
    expect(s.notifications()).toBe(before);
    expect(await s.revision()).toBe(revision);
  });

  it('keeps the registration-time description when only the docstring changes', async () => {
    await s.execute('def documented(a: int) -> int:\n    """First words."""\n    return a');
    structuredOf(await s.register('documented'));
    const before = s.notifications();
    await s.execute('def documented(a: int) -> int:\n    """Second words."""\n    return a * 10');
    const tool = await s.listTool('documented');
    expect(tool?.description).toBe('First words.');
    expect(structuredOf(await s.server.call('documented', { a: 2 })).value).toBe(20);
    await settle();
    expect(s.notifications()).toBe(before);
  });

  const rejected: Array<[string, string, string]> = [
    ['unannotated', 'def {f}(a):\n    return a', 'unannotated'],
    ['unresolved string annotation', 'def {f}(a: "NoSuchTypeAnywhere") -> int:\n    return 1', 'unresolved_annotation'],
    ['unsupported annotation', 'def {f}(a: complex) -> int:\n    return 1', 'unsupported_annotation'],
    ['non-JSON default', 'def {f}(a: str = b"bytes") -> int:\n    return 1', 'non_json_default'],
    ['positional-only parameter', 'def {f}(a: int, /) -> int:\n    return a', 'positional_only'],
    ['*args', 'def {f}(*a: int) -> int:\n    return 1', 'var_positional'],
    ['**kwargs', 'def {f}(**k: int) -> int:\n    return 1', 'var_keyword'],
    ['async def', 'async def {f}(a: int) -> int:\n    return a', 'coroutine_function'],
    ['generator', 'def {f}(a: int):\n    yield a', 'generator_function'],
    ['async generator', 'async def {f}(a: int):\n    yield a', 'async_generator_function'],
    [
      'async callable object',
      'class _AsyncCall:\n    async def __call__(self, a: int) -> int:\n        return a\n{f} = _AsyncCall()',
      'async_callable_object',
    ],
    [
      'generator callable object',
      'class _GenCall:\n    def __call__(self, a: int):\n        yield a\n{f} = _GenCall()',
      'generator_callable_object',
    ],
  ];
  rejected.forEach(([what, define, reason], index) => {
    it(`rejects a signature: ${what} (${reason}) without changing the catalog`, async () => {
      const f = `rejected_${index}`;
      await s.execute(define.replaceAll('{f}', f));
      const revision = await s.revision();
      const before = s.notifications();
      const result = await s.register(f);
      const error = errorOf(result);
      expect(error.code).toBe('unsupported_signature');
      expect(error.details.reason).toBe(reason);
      expect(JSON.stringify(result)).not.toMatch(/Traceback/);
      expect(await s.revision()).toBe(revision);
      expect(await s.listNames()).not.toContain(f);
      await settle();
      expect(s.notifications()).toBe(before);
    });
  });

  it('rejects bad names and collisions without any change', async () => {
    await s.execute('def collide(a: int) -> int:\n    return a\nnot_callable = 3\ndef other(a: int) -> int:\n    return -a');
    structuredOf(await s.register('collide'));
    const revision = await s.revision();
    const names = await s.listNames();
    const before = s.notifications();
    const cases: Array<[string, string | null, string, Record<string, unknown>?]> = [
      ['collide', 'execute', 'name_collision', { with: 'stable' }],
      ['collide', 'register_tool', 'name_collision', { with: 'stable' }],
      ['other', 'collide', 'name_collision', { with: 'dynamic' }],
      ['collide', 'collide_again', 'name_collision', { with: 'backing_symbol' }],
      ['no_such_name', null, 'name_not_found'],
      ['not_callable', null, 'not_callable'],
      ['_private', null, 'protected_name'],
      ['get_ipython', null, 'protected_name'],
      ['os.path', null, 'invalid_name'],
      ['collide', '1starts_with_digit', 'invalid_name'],
      ['collide', 'has space', 'invalid_name'],
      ['collide', 'dotted.name', 'invalid_name'],
      ['collide', 'ünïcode', 'invalid_name'],
    ];
    for (const [name, toolName, code, details] of cases) {
      const error = errorOf(await s.register(name, toolName));
      expect(error.code, `${name} as ${String(toolName)}`).toBe(code);
      if (details) expect(error.details).toMatchObject(details);
    }
    expect(await s.revision()).toBe(revision);
    expect(await s.listNames()).toEqual(names);
    expect(structuredOf(await s.server.call('collide', { a: 5 })).value).toBe(5);
    await settle();
    expect(s.notifications()).toBe(before);
  });

  it('refreshes a live tool registered again under its own name: new description, revision, list_changed', async () => {
    await s.execute('def fresh(a: int) -> int:\n    """First words."""\n    return a + 1');
    const first = structuredOf(await s.register('fresh'));
    const before = s.notifications();
    const again = structuredOf(await s.register('fresh', null, 'Second words.'));
    expect(again).toMatchObject({ tool_name: 'fresh', name: 'fresh', description: 'Second words.' });
    expect(again.input_schema).toEqual(first.input_schema);
    expect(again.revision).toBeGreaterThan(first.revision);
    expect(await s.revision()).toBe(again.revision);
    await s.notifiedAfter(before);
    expect((await s.listTool('fresh'))!.description).toBe('Second words.');
    expect(structuredOf(await s.server.call('fresh', { a: 1 })).value).toBe(2);
    // Another backing symbol under that tool name still collides, and changes nothing.
    await s.execute('def other_fresh(a: int) -> int:\n    return a');
    expect(errorOf(await s.register('other_fresh', 'fresh')).details).toMatchObject({ with: 'dynamic' });
    expect(await s.revision()).toBe(again.revision);
  });

  it('unregisters idempotently, reports partitions, and cannot remove a stable tool', async () => {
    await s.execute('def temp_a(a: int) -> int:\n    return a\ndef temp_b(a: int) -> int:\n    return a');
    structuredOf(await s.register('temp_a'));
    structuredOf(await s.register('temp_b'));
    const revision = await s.revision();
    const before = s.notifications();
    const first = structuredOf(
      await s.server.call('unregister_tool', { names: ['temp_b', 'execute', 'nope', 'temp_a', 'temp_b'] }),
    );
    expect(first.unregistered).toEqual(['temp_a', 'temp_b']);
    expect(first.unknown).toEqual(['execute', 'nope']);
    expect(first.revision).toBeGreaterThan(revision);
    await s.notifiedAfter(before);
    const names = await s.listNames();
    expect(names).not.toContain('temp_a');
    expect(names).toContain('execute');
    await expect(s.server.call('temp_a', { a: 1 })).rejects.toThrow(/Unknown tool/);

    const afterFirst = s.notifications();
    const second = structuredOf(await s.server.call('unregister_tool', { names: ['temp_a', 'temp_b', 'execute'] }));
    // Nothing unregistered: the empty list is left out.
    expect(second).toEqual({ unknown: ['execute', 'temp_a', 'temp_b'], revision: first.revision });
    await settle();
    expect(s.notifications()).toBe(afterFirst);
    expect(structuredOf(await s.server.call('execute', { code: '1 + 1' })).result.value).toBe(2);
  });

  it('runs concurrent calls during redefinition exactly once each against one snapshot', async () => {
    await s.execute(
      ['appended = []', 'def app(i: int) -> int:', '    appended.append(("v1", i))', '    return i'].join('\n'),
    );
    structuredOf(await s.register('app'));
    const N = 8;
    type Sent = { kind: 'call'; i: number; result: Promise<CallToolResult> } | { kind: 'exec'; label: string; result: Promise<CallToolResult> };
    const sent: Sent[] = [];
    const fire = (from: number): void => {
      for (let i = from; i < from + N; i += 1) sent.push({ kind: 'call', i, result: s.server.call('app', { i }) });
    };
    fire(0);
    sent.push({
      kind: 'exec',
      label: 'compatible',
      result: s.server.call('execute', { code: 'def app(i: int) -> int:\n    appended.append(("v2", i))\n    return i + 1000' }),
    });
    fire(N);
    sent.push({
      kind: 'exec',
      label: 'incompatible',
      result: s.server.call('execute', { code: 'def app(i: int, j: int = 0) -> int:\n    appended.append(("v3", i))\n    return i + 2000' }),
    });
    fire(2 * N);
    const settled = await Promise.all(sent.map(async (entry) => ({ ...entry, done: await entry.result })));

    const sequenceOf = (result: CallToolResult): number => fullRuntime(result).sequence as number;
    const compatible = settled.find((entry) => entry.kind === 'exec' && entry.label === 'compatible')!.done;
    const incompatible = settled.find((entry) => entry.kind === 'exec' && entry.label === 'incompatible')!.done;
    expect(structuredOf(compatible)).not.toHaveProperty('status');
    expect(structuredOf(incompatible)).not.toHaveProperty('status');
    const v2From = sequenceOf(compatible);
    const staleFrom = sequenceOf(incompatible);

    const ran = new Map<number, string>();
    let staleCount = 0;
    for (const entry of settled) {
      if (entry.kind !== 'call') continue;
      const sequence = sequenceOf(entry.done);
      if (entry.done.isError) {
        expect(errorOf(entry.done).code).toBe('stale_registration');
        expect(sequence).toBeGreaterThan(staleFrom);
        staleCount += 1;
        continue;
      }
      const value = structuredOf(entry.done).value as number;
      // Which body ran is decided by where the call sits in the one FIFO queue.
      if (sequence < v2From) {
        expect(value).toBe(entry.i);
        ran.set(entry.i, 'v1');
      } else {
        expect(sequence).toBeLessThan(staleFrom);
        expect(value).toBe(entry.i + 1000);
        ran.set(entry.i, 'v2');
      }
    }
    expect(ran.size + staleCount).toBe(3 * N);
    expect(staleCount).toBeGreaterThan(0);
    const appended = (await s.execute('[list(item) for item in appended]')).result.value as Array<[string, number]>;
    // Every call that reported success ran exactly once, with the body its queue position implies; no stale call ran.
    expect(appended.length).toBe(ran.size);
    expect(new Map(appended.map(([version, i]) => [i, version]))).toEqual(ran);
    expect(appended.some(([version]) => version === 'v3')).toBe(false);
    expect(await s.listNames()).not.toContain('app');
  });

  it('drops the whole catalog on reset: notification, empty list, stale_registration for cached calls', async () => {
    await s.execute('def survivor(a: int) -> int:\n    return a');
    structuredOf(await s.register('survivor'));
    expect(await s.listNames()).toContain('survivor');
    const revision = await s.revision();
    const before = s.notifications();
    const reset = await s.server.structured('reset');
    expect(reset.removed).toContain('survivor');
    await s.notifiedAfter(before);
    expect(await s.revision()).toBeGreaterThan(revision);
    const names = await s.listNames();
    expect(names.filter((name) => !['execute', 'call_function', 'list', 'search', 'inspect', 'reload', 'remove', 'reset', 'register_tool', 'unregister_tool', 'job', 'runtime_status'].includes(name))).toEqual([]);
    for (const cached of ['survivor', 'add', 'collide']) {
      expect(errorOf(await s.server.call(cached, { a: 1 })).code).toBe('stale_registration');
    }
    // Re-registration brings one back; the rest stay stale.
    await s.execute('def survivor(a: int) -> int:\n    return a + 1');
    structuredOf(await s.register('survivor'));
    expect(structuredOf(await s.server.call('survivor', { a: 1 })).value).toBe(2);
    expect(errorOf(await s.server.call('add', { a: 1 })).code).toBe('stale_registration');
    // An explicit unregister of a dropped name forgets it for good.
    expect(structuredOf(await s.server.call('unregister_tool', { names: ['add'] })).unknown).toEqual(['add']);
    await expect(s.server.call('add', { a: 1 })).rejects.toThrow(/Unknown tool/);
  });
});

describe('configured limits on names, descriptions and the catalog size', () => {
  let s: Session;
  beforeAll(async () => {
    s = await open({
      IPYTHON_MCP_MAX_DYNAMIC_TOOLS: '2',
      IPYTHON_MCP_MAX_TOOL_NAME_CHARS: '12',
      IPYTHON_MCP_MAX_TOOL_DESCRIPTION_CHARS: '40',
    });
    await s.execute(
      [
        'def one(a: int) -> int:',
        '    return a',
        'def two(a: int) -> int:',
        '    """' + 'D'.repeat(100) + '"""',
        '    return a',
        'def three(a: int) -> int:',
        '    return a',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await s.server.close();
  });

  it('bounds tool names by IPYTHON_MCP_MAX_TOOL_NAME_CHARS', async () => {
    const revision = await s.revision();
    const error = errorOf(await s.register('one', 'a'.repeat(13)));
    expect(error.code).toBe('invalid_name');
    expect(error.details.limit).toBe(12);
    expect(await s.revision()).toBe(revision);
    expect(structuredOf(await s.register('one', 'a'.repeat(12))).tool_name).toBe('a'.repeat(12));
  });

  it('bounds descriptions by IPYTHON_MCP_MAX_TOOL_DESCRIPTION_CHARS', async () => {
    const revision = await s.revision();
    const error = errorOf(await s.register('two', null, 'x'.repeat(41)));
    expect(error.code).toBe('invalid_arguments');
    expect(error.details.limit).toBe(40);
    expect(await s.revision()).toBe(revision);
    // A docstring snapshot is truncated (and flagged) rather than refused.
    const registered = structuredOf(await s.register('two'));
    expect(registered.description.length).toBeLessThanOrEqual(40);
    expect(registered.description_truncated).toBe(true);
    expect((await s.listTool('two'))?.description).toBe(registered.description);
  });

  it('bounds the catalog by IPYTHON_MCP_MAX_DYNAMIC_TOOLS, without change, and still allows re-registering a stale tool', async () => {
    const revision = await s.revision();
    const error = errorOf(await s.register('three'));
    expect(error.code).toBe('registry_full');
    expect(error.details.limit).toBe(2);
    expect(await s.revision()).toBe(revision);
    expect(await s.listNames()).not.toContain('three');

    await s.execute('def two(a: int, b: int) -> int:\n    return a + b');
    expect(await s.listNames()).not.toContain('two');
    structuredOf(await s.register('two', null, 'short'));
    expect(structuredOf(await s.server.call('two', { a: 1, b: 2 })).value).toBe(3);

    structuredOf(await s.server.call('unregister_tool', { names: ['two'] }));
    expect(structuredOf(await s.register('three')).tool_name).toBe('three');
  });
});

describe('worker replacement', () => {
  let s: Session;
  beforeAll(async () => {
    // A 1 s grace, as in the other fault suites: the preserved case must answer and reconcile inside it on a loaded
    // machine (0.3 s left too little room), and the replacement case only waits it out.
    s = await open({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1.5', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '1' });
  });
  afterAll(async () => {
    await s.server.close();
  });

  it('reconciles after a preserved interruption: a redefinition made before the timeout is noticed', async () => {
    await s.execute('def pre(a: int) -> int:\n    return a');
    structuredOf(await s.register('pre'));
    const epoch = (await s.server.structured('runtime_status')).epoch as number;
    const before = s.notifications();
    const interrupted = await s.server.call('execute', {
      code: 'def pre(a: int, b: int = 0) -> int:\n    return a + b\nimport time\nwhile True:\n    time.sleep(0.01)',
    });
    expect(errorOf(interrupted).code).toBe('operation_timeout');
    expect((interrupted.structuredContent as any).runtime.namespace).toBe('preserved');
    await s.notifiedAfter(before);
    expect((await s.server.structured('runtime_status')).epoch).toBe(epoch);
    expect(await s.listNames()).not.toContain('pre');
    expect(errorOf(await s.server.call('pre', { a: 1 })).code).toBe('stale_registration');
    structuredOf(await s.register('pre'));
    expect(structuredOf(await s.server.call('pre', { a: 1, b: 2 })).value).toBe(3);
    structuredOf(await s.server.call('unregister_tool', { names: ['pre'] }));
  });

  it('clears the catalog, notifies, and keeps the server revision monotonic', async () => {
    await s.execute('def keep(a: int) -> int:\n    return a\ndef keep2(a: int) -> int:\n    return a\ndef keep3(a: int) -> int:\n    return a');
    for (const name of ['keep', 'keep2', 'keep3']) structuredOf(await s.register(name));
    const revision = await s.revision();
    expect(revision).toBeGreaterThanOrEqual(3);
    const epoch = (await s.server.structured('runtime_status')).epoch as number;
    const before = s.notifications();

    const stuck = await s.server.call('execute', {
      code: [
        'import time',
        'while True:',
        '    try:',
        '        while True:',
        '            time.sleep(0.01)',
        '    except BaseException:',
        '        pass',
      ].join('\n'),
    });
    const error = errorOf(stuck);
    expect(error.code).toBe('operation_timeout');
    expect((stuck.structuredContent as any).runtime.namespace).toBe('reset');
    await s.notifiedAfter(before);

    const status = await s.server.structured('runtime_status');
    expect(status.epoch).toBeGreaterThan(epoch);
    expect(status).not.toHaveProperty('dynamic_tools'); // 0, the default
    expect(status.registry_revision).toBeGreaterThan(revision);
    expect((await s.listNames()).filter((name) => name.startsWith('keep'))).toEqual([]);
    expect(errorOf(await s.server.call('keep', { a: 1 })).code).toBe('stale_registration');

    // The new worker's own registry starts from revision 0; clients only ever see the server's revision.
    await s.execute('def keep(a: int) -> int:\n    return a * 3');
    const again = s.notifications();
    const registered = structuredOf(await s.register('keep'));
    expect(registered.revision).toBeGreaterThan(status.registry_revision);
    await s.notifiedAfter(again);
    expect(structuredOf(await s.server.call('keep', { a: 2 })).value).toBe(6);
  });
});

describe('discovery cost', () => {
  let s: Session;
  beforeAll(async () => {
    s = await open();
  });
  afterAll(async () => {
    await s.server.close();
  });

  it('records tools/list with 100 registered tools in a 100,000-name namespace', async () => {
    await s.execute(
      [
        'for _i in range(100_000):',
        '    globals()[f"v{_i}"] = _i',
        'for _i in range(100):',
        '    exec(f"def tool_{_i}(a: int, b: str = \'x\', c: list[float] | None = None) -> int:\\n    return a + {_i}", globals())',
        'del _i',
      ].join('\n'),
    );
    expect((await s.execute('len([name for name in globals() if name.startswith("v")])')).result.value).toBeGreaterThanOrEqual(100_000);
    const measure = async (label: string, expected: number, operation: () => Promise<number>): Promise<string> => {
      const samples: number[] = [];
      for (let round = 0; round < 11; round += 1) {
        const started = performance.now();
        expect(await operation()).toBe(expected);
        samples.push(performance.now() - started);
      }
      samples.sort((a, b) => a - b);
      const median = samples[Math.floor(samples.length / 2)]!;
      return `${label}: median ${median.toFixed(1)} ms, min ${samples[0]!.toFixed(1)} ms, max ${samples[samples.length - 1]!.toFixed(1)} ms`;
    };
    // The raw tools/list request is the server's cost (round trip, worker discover, reconciliation); the SDK's
    // Client.listTools adds client-side work (it compiles a validator for every tool output schema on each call).
    const raw = async (): Promise<number> => (await s.server.client.request({ method: 'tools/list' }, ListToolsResultSchema)).tools.length;
    const sdk = async (): Promise<number> => (await s.server.client.listTools()).tools.length;
    // Baseline: the MCP round trip alone (runtime_status never reaches the worker).
    const lines = [await measure('runtime_status round trip', 1, async () => ((await s.server.structured('runtime_status')) ? 1 : 0))];
    lines.push(await measure('tools/list request, 0 dynamic tools', 12, raw));
    for (let index = 0; index < 100; index += 1) structuredOf(await s.register(`tool_${index}`));
    lines.push(await measure('tools/list request, 100 dynamic tools', 112, raw));
    lines.push(await measure('Client.listTools(), 100 dynamic tools', 112, sdk));
    process.stderr.write(`[bench] discovery in a 100k-name namespace (11 rounds each)\n${lines.map((line) => `[bench]   ${line}\n`).join('')}`);
    expect(structuredOf(await s.server.call('tool_99', { a: 1 })).value).toBe(100);
  });
});
