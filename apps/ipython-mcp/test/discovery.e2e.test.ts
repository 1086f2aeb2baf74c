import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer, workerPid } from './harness.js';

// Discovery runs no user code: list, search and inspect over a real stdio client answer at once for objects whose
// __getattr__, __getattribute__ (their own or their metaclass's) and properties would hang far past the deadline,
// and the namespace (same worker, same objects) survives. Only inspect's representation runs user code
// (__repr__); a hanging one is interrupted by the deadline and loses nothing.

const DEADLINE_SECONDS = 6;
const HANG_SECONDS = 60; // a hook that ran would turn the call into operation_timeout

const HAZARDS = [
  'import threading, time',
  'calls = []',
  '_gate = threading.Event()',
  'def _hook(tag):',
  '    calls.append(tag)',
  `    _gate.wait(${HANG_SECONDS})`,
  'class HookMeta(type):',
  '    def __getattr__(cls, name):',
  '        _hook(("meta.__getattr__", name))',
  '    def __getattribute__(cls, name):',
  '        _hook(("meta.__getattribute__", name))',
  'class HookedClass(metaclass=HookMeta):',
  '    """Its metaclass hooks every attribute read."""',
  '    def __init__(self, a, b: int = 2):',
  '        pass',
  'class HookedCallable:',
  '    """Its attribute hooks hang."""',
  '    def __getattr__(self, name):',
  '        _hook(("__getattr__", name))',
  '    def __getattribute__(self, name):',
  '        _hook(("__getattribute__", name))',
  '    def __call__(self, x, y=1):',
  '        return x',
  'class PropertyCallable:',
  '    @property',
  '    def __signature__(self):',
  '        _hook("__signature__")',
  '    @property',
  '    def __doc__(self):',
  '        _hook("__doc__")',
  '    def __call__(self):',
  '        return 1',
  'hooked_callable = HookedCallable()',
  'property_callable = PropertyCallable()',
  'def hooked_wrapper(*args):',
  '    """Wraps hooked_callable."""',
  'hooked_wrapper.__wrapped__ = hooked_callable',
  'class SlowRepr:',
  '    def __repr__(self):',
  '        time.sleep(10**6)',
  'slow_repr = SlowRepr()',
].join('\n');

let server: TestServer;

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await run();
  return [value, performance.now() - started];
}

beforeAll(async () => {
  server = await startServer({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: String(DEADLINE_SECONDS) });
  const defined = await server.structured('execute', { code: HAZARDS });
  expect(defined.error, JSON.stringify(defined.error)).toBeUndefined(); // compact: no status or error on success
});

afterAll(async () => {
  await server?.close();
});

describe('discovery of objects whose attribute hooks hang', () => {
  it('list, search and inspect answer quickly, run no hook, and the namespace survives', async () => {
    const pid = await workerPid(server);

    const [listed, listMs] = await timed(() => server.call('list'));
    expect(listed.isError, JSON.stringify(listed.structuredContent)).toBeFalsy();
    const functions = (listed.structuredContent as any).functions as Array<Record<string, unknown>>;
    expect(functions.find((entry) => entry.name === 'hooked_wrapper')).toMatchObject({
      signature: '(x, y=1)',
      module: '__main__',
      doc: 'Wraps hooked_callable.',
    });

    const [searched, searchMs] = await timed(() => server.call('search', { query: 'hooked' }));
    expect(searched.isError, JSON.stringify(searched.structuredContent)).toBeFalsy();
    const kinds = Object.fromEntries(((searched.structuredContent as any).matches as any[]).map((m) => [m.name, m.kind]));
    expect(kinds).toEqual({ HookedCallable: 'class', HookedClass: 'class', hooked_callable: 'other', hooked_wrapper: 'function' });
    for (const kind of ['function', 'class', 'module', 'variable', 'other']) {
      const filtered = await server.call('search', { query: 'hooked', kinds: [kind] });
      expect(filtered.isError, JSON.stringify(filtered.structuredContent)).toBeFalsy();
    }

    const [instance, instanceMs] = await timed(() => server.structured('inspect', { name: 'hooked_callable' }));
    expect(instance).toMatchObject({
      kind: 'other',
      qualified_type: '__main__.HookedCallable',
      callable: true,
      signature: '(x, y=1)',
      module: '__main__',
      documentation: 'Its attribute hooks hang.',
    });
    expect(instance.error).toBeUndefined(); // compact: a null error is left out
    const klass = await server.structured('inspect', { name: 'HookedClass' });
    expect(klass).toMatchObject({
      kind: 'class',
      qualified_type: '__main__.HookMeta',
      signature: '(a, b: int = 2)',
      documentation: 'Its metaclass hooks every attribute read.',
      representation: "<class '__main__.HookedClass'>",
    });
    expect(klass.error).toBeUndefined();
    const refused = await server.structured('inspect', { name: 'property_callable' });
    expect(refused).toMatchObject({ kind: 'other', callable: true });
    expect([refused.signature, refused.documentation]).toEqual([undefined, undefined]); // compact: nulls are left out
    expect(refused.error).toMatchObject({ stage: 'metadata', type: 'SignatureUnavailable' });
    expect(refused.error.message).toContain('runs no user code');

    // Generous bounds: a hook that ran would have waited out the deadline instead.
    for (const elapsed of [listMs, searchMs, instanceMs]) expect(elapsed).toBeLessThan((DEADLINE_SECONDS * 1000) / 2);
    expect((await server.structured('execute', { code: 'len(calls)' })).result.value).toBe(0);
    expect(await workerPid(server)).toBe(pid);
  });

  it('summarises data objects without running them: a DataFrame subclass whose shape hangs is named, not read', async () => {
    const pid = await workerPid(server);
    const defined = await server.structured('execute', {
      code: [
        'import numpy as np, pandas as pd',
        'class HangingFrame(pd.DataFrame):',
        '    @property',
        '    def shape(self):',
        '        _hook("HangingFrame.shape")',
        "data_frame = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [1.5, 2.0]})",
        "data_hanging = HangingFrame({'a': [1, 2]})",
        'data_grid = np.zeros((2000, 2000))',
        'data_list = [1, 2, 3]',
      ].join('\n'),
    });
    expect(defined.error, JSON.stringify(defined.error)).toBeUndefined();
    const [searched, searchMs] = await timed(() => server.call('search', { query: 'data_' }));
    expect(searched.isError, JSON.stringify(searched.structuredContent)).toBeFalsy();
    const matches = Object.fromEntries(((searched.structuredContent as any).matches as any[]).map((match) => [match.name, match]));
    expect(matches.data_frame).toEqual({
      name: 'data_frame',
      kind: 'variable',
      type: 'pandas.DataFrame',
      summary: expect.stringMatching(/^DataFrame 2 rows × 2 columns: city str, temp float64; \d+ B$/),
    });
    expect(matches.data_hanging.summary).toBe('HangingFrame: a pandas.DataFrame subclass; not read (its own code would run)');
    expect(matches.data_hanging).not.toHaveProperty('repr');
    expect(matches.data_grid.summary).toBe('ndarray shape (2000, 2000) float64, 30.5 MB');
    expect(matches.data_list).toMatchObject({ repr: '[1, 2, 3]', summary: 'len 3' });
    const [inspected, inspectMs] = await timed(() => server.call('inspect', { name: 'data_hanging' }));
    expect((inspected.structuredContent as any).summary).toBe(matches.data_hanging.summary);
    expect(inspected.structuredContent).not.toHaveProperty('representation');
    for (const elapsed of [searchMs, inspectMs]) expect(elapsed).toBeLessThan((DEADLINE_SECONDS * 1000) / 2);
    expect((await server.structured('execute', { code: 'len(calls)' })).result.value).toBe(0);
    expect(await workerPid(server)).toBe(pid);
  });

  it('inspect of a hanging __repr__ is stopped by the deadline and loses nothing', async () => {
    const pid = await workerPid(server);
    const [interrupted, elapsed] = await timed(() => server.call('inspect', { name: 'slow_repr' }));
    expect(interrupted.isError).toBe(true);
    expect((interrupted.structuredContent as any).error.code).toBe('operation_timeout');
    expect(elapsed).toBeLessThan(DEADLINE_SECONDS * 1000 * 3);
    const searched = await server.structured('search', { query: 'slow', kinds: ['class'] }); // slow_repr's repr never asked
    expect(searched.matches.map((m: any) => m.name)).toEqual(['SlowRepr']);
    expect((await server.structured('execute', { code: 'type(slow_repr).__name__, len(calls)' })).result.value).toEqual([
      'SlowRepr',
      0,
    ]);
    expect(await workerPid(server)).toBe(pid);
  });
});
