import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

// Every stable namespace tool over a real stdio client, success and failure paths, against one server whose
// worker has a temporary library directory, a preloaded library module, a preloaded stdlib module and aliases.

const LIBRARY_MODULE = 'ipymcp_e2e_lib';
const LIBRARY_V1 = [
  'def greet(name: str) -> str:',
  '    """Greet someone."""',
  "    return 'hello ' + name",
  '',
  'def _private_helper():',
  '    return 0',
  '',
].join('\n');
const LIBRARY_V2 = [
  "def greet(name: str, punctuation: str = '!') -> str:",
  '    """Greet someone loudly."""',
  "    return 'HELLO ' + name.upper() + punctuation",
  '',
  'def farewell(name: str) -> str:',
  "    return 'bye ' + name",
  '',
].join('\n');

interface ToolError {
  code: string;
  message: string;
  details?: Record<string, any>;
}

let server: TestServer;
let library: string;

async function execute(code: string): Promise<Record<string, any>> {
  const result = await server.structured('execute', { code });
  // A cell that ran cleanly has no status (its default is "ok") and no error.
  expect(result, JSON.stringify(result.error)).not.toHaveProperty('status');
  expect(result).not.toHaveProperty('error');
  return result;
}

async function value(code: string): Promise<unknown> {
  return (await execute(code)).result?.value;
}

async function failed(name: string, args: Record<string, unknown>): Promise<ToolError> {
  const result = await server.call(name, args);
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  return (result.structuredContent as { error: ToolError }).error;
}

beforeAll(async () => {
  library = mkdtempSync(join(tmpdir(), 'ipython-mcp-lib-'));
  writeFileSync(join(library, `${LIBRARY_MODULE}.py`), LIBRARY_V1);
  server = await startServer({
    IPYTHON_MCP_LIBRARY_PATHS: library,
    IPYTHON_MCP_PRELOAD_MODULES: `${LIBRARY_MODULE},json`,
    IPYTHON_MCP_MODULE_ALIASES: JSON.stringify({ [LIBRARY_MODULE]: 'lib_alias', 'collections.abc': 'cabc' }),
  });
});

afterAll(async () => {
  await server?.close();
  rmSync(library, { recursive: true, force: true });
});

describe('list', () => {
  it('reports visible functions with signature, module and bounded docstring, and follows redefinitions', async () => {
    await execute(
      [
        'def add(a: int, b: int = 2) -> int:',
        '    """Add two numbers.',
        '',
        '        Indented detail."""',
        '    return a + b',
        'lam = lambda x: x',
        'def long_doc():',
        `    """${'d'.repeat(9000)}"""`,
        'value = 3',
        'class K:',
        '    pass',
      ].join('\n'),
    );
    const listed = await server.structured('list');
    const byName = Object.fromEntries(listed.functions.map((entry: any) => [entry.name, entry]));
    expect(byName.add).toEqual({
      name: 'add',
      signature: '(a: int, b: int = 2) -> int',
      module: '__main__',
      doc: 'Add two numbers.\n\nIndented detail.',
    });
    // Compact entries: no docstring, no truncation flags (their defaults are null and false).
    expect(byName.lam).toEqual({ name: 'lam', signature: '(x)', module: '__main__' });
    expect(byName.long_doc.doc).toHaveLength(8192);
    expect(byName.long_doc.doc_truncated).toBe(true);
    expect(byName.value).toBeUndefined();
    expect(byName.K).toBeUndefined();
    // Functions defined by a configured library module are visible under their dotted path.
    expect(byName[`${LIBRARY_MODULE}.greet`]).toMatchObject({ signature: '(name: str) -> str', module: LIBRARY_MODULE, doc: 'Greet someone.' });
    expect(byName[`${LIBRARY_MODULE}._private_helper`]).toBeUndefined();
    // total is left out when it equals the number returned; truncated when false.
    expect(listed).not.toHaveProperty('total');
    expect(listed).not.toHaveProperty('truncated');

    await execute('def add(x, *, y=1):\n    return x');
    const again = await server.structured('list');
    expect(again.functions.find((entry: any) => entry.name === 'add').signature).toBe('(x, *, y=1)');
  });

  it('bounds the number of entries by IPYTHON_MCP_MAX_RESULTS', async () => {
    await execute('for _i in range(150):\n    exec(f"def many_{_i:03}(): pass")');
    const listed = await server.structured('list');
    expect(listed.functions).toHaveLength(100);
    expect(listed.total).toBeGreaterThanOrEqual(150);
    expect(listed.truncated).toBe(true);
    const removed = await server.structured('remove', { names: Array.from({ length: 150 }, (_, i) => `many_${String(i).padStart(3, '0')}`) });
    expect(removed.removed).toHaveLength(150);
  });

  it('rejects arguments', async () => {
    expect((await failed('list', { query: 'x' })).code).toBe('invalid_arguments');
  });
});

describe('search', () => {
  it('matches partial names case-insensitively, exact names, and filters by kind', async () => {
    await execute(
      'import math as m_alpha\nalpha = 1\nAlpha_2 = "two"\nbeta_alpha = [1]\ndef alpha_fn(): pass\nclass ALPHA: pass\nalpha_obj = object()',
    );
    const partial = await server.structured('search', { query: 'alpha' });
    expect(partial.matches.map((match: any) => match.name)).toEqual(['alpha', 'ALPHA', 'Alpha_2', 'alpha_fn', 'alpha_obj', 'beta_alpha', 'm_alpha']);
    expect(partial.matches[0]).toEqual({ name: 'alpha', kind: 'variable', type: 'builtins.int', repr: '1' });
    expect(partial).toEqual({ matches: expect.any(Array) });
    const kinds = Object.fromEntries(partial.matches.map((match: any) => [match.name, match.kind]));
    expect(kinds).toEqual({
      alpha: 'variable',
      ALPHA: 'class',
      Alpha_2: 'variable',
      alpha_fn: 'function',
      alpha_obj: 'variable',
      beta_alpha: 'variable',
      m_alpha: 'module',
    });

    const exact = await server.structured('search', { query: 'alpha', exact: true });
    expect(exact.matches.map((match: any) => match.name)).toEqual(['alpha']);
    expect((await server.structured('search', { query: 'ALPH', exact: true }))).toEqual({ matches: [] });

    const filtered = await server.structured('search', { query: 'alpha', kinds: ['function', 'class', 'module'] });
    expect(filtered.matches.map((match: any) => [match.name, match.kind])).toEqual([
      ['ALPHA', 'class'],
      ['alpha_fn', 'function'],
      ['m_alpha', 'module'],
    ]);
    expect((await server.structured('search', { query: 'alpha', kinds: [] }))).toEqual({ matches: [] });
  });

  it('finds configured module bindings and their functions', async () => {
    const modules = await server.structured('search', { query: '', kinds: ['module'] });
    const names = modules.matches.map((match: any) => match.name);
    for (const binding of [LIBRARY_MODULE, 'lib_alias', 'json', 'cabc']) expect(names).toContain(binding);
    const greet = await server.structured('search', { query: 'greet' });
    expect(greet.matches.map((match: any) => match.name)).toContain(`${LIBRARY_MODULE}.greet`);
    expect(greet.matches.find((match: any) => match.name === `${LIBRARY_MODULE}.greet`).kind).toBe('function');
  });

  it('bounds results and representations', async () => {
    await execute(`for _i in range(150):\n    globals()[f"bounded_{_i:03}"] = _i\nbounded_long = "r" * 5000`);
    const result = await server.structured('search', { query: 'bounded_' });
    expect(result.matches).toHaveLength(100);
    expect(result.total).toBe(151);
    expect(result.truncated).toBe(true);
    const long = await server.structured('search', { query: 'bounded_long', exact: true });
    expect(long.matches[0].repr).toHaveLength(1024);
    expect(long.matches[0].repr_truncated).toBe(true);
    const removed = await server.structured('remove', { names: ['bounded_long', ...Array.from({ length: 150 }, (_, i) => `bounded_${String(i).padStart(3, '0')}`)] });
    expect(removed.removed).toHaveLength(151);
  });

  it('classifies objects with raising properties and __getattr__ without running them', async () => {
    await execute(
      [
        'trap_calls = []',
        'class TrapMeta(type):',
        '    def __getattr__(cls, name):',
        '        trap_calls.append(("meta", name))',
        '        raise AttributeError(name)',
        'class Trap(metaclass=TrapMeta):',
        '    @property',
        '    def boom(self):',
        '        trap_calls.append("boom")',
        '        raise RuntimeError("boom")',
        '    @property',
        '    def __class__(self):',
        '        trap_calls.append("__class__")',
        '        raise RuntimeError("class")',
        '    def __getattr__(self, name):',
        '        trap_calls.append(name)',
        '        raise AttributeError(name)',
        '    def __repr__(self):',
        '        return "<trap>"',
        'trap = Trap()',
      ].join('\n'),
    );
    const result = await server.structured('search', { query: 'trap', kinds: ['variable', 'class', 'other', 'function'] });
    const byName = Object.fromEntries(result.matches.map((match: any) => [match.name, [match.kind, match.type]]));
    expect(byName.trap).toEqual(['variable', '__main__.Trap']);
    expect(byName.Trap).toEqual(['class', '__main__.TrapMeta']);
    const inspected = await server.structured('inspect', { name: 'trap' });
    expect(inspected).toMatchObject({ kind: 'variable', qualified_type: '__main__.Trap', callable: false, module: '__main__' });
    expect(inspected).not.toHaveProperty('error');
    expect(await value('trap_calls')).toEqual([]);
  });

  it('rejects bad arguments', async () => {
    expect((await failed('search', {})).code).toBe('invalid_arguments');
    expect((await failed('search', { query: 'a', kinds: ['bogus'] })).code).toBe('invalid_arguments');
    expect((await failed('search', { query: 'a', exact: 'yes' })).code).toBe('invalid_arguments');
  });
});

describe('inspect', () => {
  it('describes a function, a module and a dotted attribute', async () => {
    await execute('import types\ndef documented(a, b=1):\n    """Does things."""\n    return a\nholder = types.SimpleNamespace(value=[1, 2])');
    const fn = await server.structured('inspect', { name: 'documented' });
    expect(fn).toMatchObject({
      name: 'documented',
      kind: 'function',
      qualified_type: 'builtins.function',
      callable: true,
      signature: '(a, b=1)',
      module: '__main__',
      documentation: 'Does things.',
    });
    expect(fn.representation).toMatch(/^<function documented at /);
    // Nothing was cut and nothing failed: neither truncated nor error is present.
    expect(Object.keys(fn).sort()).toEqual(['callable', 'documentation', 'kind', 'module', 'name', 'qualified_type', 'representation', 'signature']);
    const attribute = await server.structured('inspect', { name: 'holder.value' });
    expect(attribute).toMatchObject({ kind: 'variable', qualified_type: 'builtins.list', callable: false, representation: '[1, 2]' });
    expect(attribute).not.toHaveProperty('signature');
    const module = await server.structured('inspect', { name: 'cabc' });
    expect(module).toMatchObject({ kind: 'module', module: 'collections.abc' });
  });

  it('bounds and flags each field independently', async () => {
    await execute(`huge_text = "h" * 20000`);
    const result = await server.structured('inspect', { name: 'huge_text' });
    // IPYTHON_MCP_MAX_REPR_CHARS bounds inspect's representation, as --help says (not IPYTHON_MCP_MAX_TEXT_CHARS).
    expect(result.representation).toHaveLength(1024);
    expect(result.truncated).toEqual({ representation: true });
  });

  it('returns a raising __repr__ in the structured error field and keeps the runtime working', async () => {
    await execute('class BadRepr:\n    def __repr__(self):\n        raise ValueError("no repr for you")\nbad_repr = BadRepr()');
    const result = await server.call('inspect', { name: 'bad_repr' });
    expect(result.isError).toBeFalsy();
    const inspection = result.structuredContent as any;
    expect(inspection.error).toEqual({ stage: 'repr', type: 'ValueError', message: 'no repr for you' });
    expect(inspection).toMatchObject({ kind: 'variable', qualified_type: '__main__.BadRepr' });
    expect(inspection).not.toHaveProperty('representation');
    const searched = await server.structured('search', { query: 'bad_repr', exact: true });
    expect(searched.matches[0].repr).toContain('repr raised ValueError');
    expect(await value('1 + 1')).toBe(2);
  });

  it('reports resolution failures', async () => {
    expect(await failed('inspect', { name: 'no_such_name_here' })).toMatchObject({ code: 'name_not_found' });
    expect(await failed('inspect', { name: 'holder.nope' })).toMatchObject({ code: 'name_not_found', details: { missing: 'holder.nope' } });
    expect((await failed('inspect', { name: 'a..b' })).code).toBe('invalid_arguments');
    await execute('class Fragile:\n    @property\n    def part(self):\n        raise RuntimeError("fragile")\nfragile = Fragile()');
    const fragile = await server.structured('inspect', { name: 'fragile.part' });
    expect(fragile.error).toEqual({ stage: 'resolve', type: 'RuntimeError', message: 'fragile' });
  });
});

describe('call_function', () => {
  beforeAll(async () => {
    await execute(
      [
        'import types',
        'invocations = []',
        'def add_pair(a, b=2):',
        '    invocations.append((a, b))',
        '    return {"sum": a + b, "items": [a, b]}',
        'def divide():',
        '    return 1 / 0',
        'def opaque():',
        '    return object()',
        'def long_list():',
        '    return list(range(1000))',
        'lib = types.SimpleNamespace(double=lambda x: x * 2, value=3)',
      ].join('\n'),
    );
  });

  it('binds a JSON object as keyword arguments, invokes once and returns JSON', async () => {
    expect(await server.structured('call_function', { name: 'add_pair', arguments: { a: 1 } })).toEqual({
      value: { sum: 3, items: [1, 2] },
    });
    expect(await value('invocations')).toEqual([[1, 2]]);
    expect((await server.structured('call_function', { name: 'lib.double', arguments: { x: 21 } })).value).toBe(42);
    expect((await server.structured('call_function', { name: 'lib_alias.greet', arguments: { name: 'x' } })).value).toBe('hello x');
    const cut = await server.structured('call_function', { name: 'long_list' });
    expect(cut.value).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(cut.truncated).toBe(true);
  });

  it('has a distinct error code for every failure', async () => {
    expect((await failed('call_function', { name: 'not_defined_anywhere', arguments: {} })).code).toBe('name_not_found');
    expect((await failed('call_function', { name: 'lib.missing', arguments: {} })).code).toBe('name_not_found');
    expect(await failed('call_function', { name: 'lib.value', arguments: {} })).toMatchObject({ code: 'not_callable', details: { type: 'builtins.int' } });
    expect((await failed('call_function', { name: 'add_pair', arguments: [1] })).code).toBe('invalid_arguments');
    expect((await failed('call_function', { name: 'add_pair()', arguments: {} })).code).toBe('invalid_arguments');
    expect((await failed('call_function', { name: 'add_pair', arguments: {} })).code).toBe('binding_failed');
    expect((await failed('call_function', { name: 'add_pair', arguments: { a: 1, c: 2 } })).code).toBe('binding_failed');
    expect(await value('len(invocations)')).toBe(1); // binding failures never invoke
    const raised = await failed('call_function', { name: 'divide', arguments: {} });
    expect(raised).toMatchObject({ code: 'call_raised', details: { type: 'ZeroDivisionError', message: 'division by zero', traceback_truncated: false } });
    expect(raised.details!.traceback).toContain('1 / 0');
    expect(await failed('call_function', { name: 'opaque', arguments: {} })).toMatchObject({
      code: 'result_not_json',
      details: { type: 'builtins.object' },
    });
  });
});

describe('reload', () => {
  it('reports modules that were never imported and failing reloads, keeping the old module', async () => {
    writeFileSync(join(library, 'ipymcp_e2e_reloadable.py'), 'VALUE = 1\n');
    await execute('import ipymcp_e2e_reloadable as reloadable');
    writeFileSync(join(library, 'ipymcp_e2e_reloadable.py'), 'VALUE = 2\ndef broken(:\n    pass\n');
    const result = await server.structured('reload', { modules: ['ipymcp_e2e_reloadable', 'ipymcp_e2e_never_imported'] });
    expect(result.results[0]).toMatchObject({ module: 'ipymcp_e2e_reloadable', status: 'failed', error: { type: 'SyntaxError' } });
    expect(result.results[0]).not.toHaveProperty('bindings');
    expect(result.results[1]).toEqual({ module: 'ipymcp_e2e_never_imported', status: 'not_imported' });
    expect(await value('reloadable.VALUE')).toBe(1);
    writeFileSync(join(library, 'ipymcp_e2e_reloadable.py'), 'VALUE = 3\n');
    const fixed = await server.structured('reload', { modules: ['ipymcp_e2e_reloadable'] });
    expect(fixed.results).toEqual([{ module: 'ipymcp_e2e_reloadable', status: 'reloaded', bindings: ['reloadable'] }]);
    expect(await value('reloadable.VALUE')).toBe(3);
  });

  it('rejects bad arguments', async () => {
    expect((await failed('reload', { modules: [] })).code).toBe('invalid_arguments');
    expect((await failed('reload', { modules: 'json' })).code).toBe('invalid_arguments');
  });
});

describe('the build-import-edit-reload workflow', () => {
  it('discovers, calls, edits and reloads a library module through its preload and alias bindings', async () => {
    await execute(`import ${LIBRARY_MODULE} as my_extra_alias`);
    const listed = await server.structured('list');
    expect(listed.functions.find((entry: any) => entry.name === `${LIBRARY_MODULE}.greet`)).toMatchObject({ signature: '(name: str) -> str' });
    expect((await server.structured('call_function', { name: `${LIBRARY_MODULE}.greet`, arguments: { name: 'ada' } })).value).toBe('hello ada');

    writeFileSync(join(library, `${LIBRARY_MODULE}.py`), LIBRARY_V2);
    const reloaded = await server.structured('reload', { modules: [LIBRARY_MODULE] });
    expect(reloaded.results).toEqual([{ module: LIBRARY_MODULE, status: 'reloaded', bindings: [LIBRARY_MODULE, 'lib_alias', 'my_extra_alias'] }]);
    for (const binding of [LIBRARY_MODULE, 'lib_alias', 'my_extra_alias']) {
      expect((await server.structured('call_function', { name: `${binding}.greet`, arguments: { name: 'ada' } })).value).toBe('HELLO ADA!');
    }
    expect((await server.structured('call_function', { name: 'lib_alias.farewell', arguments: { name: 'ada' } })).value).toBe('bye ada');
    const inspected = await server.structured('inspect', { name: 'lib_alias.greet' });
    expect(inspected).toMatchObject({ signature: "(name: str, punctuation: str = '!') -> str", documentation: 'Greet someone loudly.' });
    const again = await server.structured('list');
    expect(again.functions.find((entry: any) => entry.name === `${LIBRARY_MODULE}.greet`).signature).toBe("(name: str, punctuation: str = '!') -> str");
    expect(again.functions.map((entry: any) => entry.name)).toContain(`${LIBRARY_MODULE}.farewell`);
    expect(await value(`${LIBRARY_MODULE} is lib_alias is my_extra_alias`)).toBe(true);
  });
});

describe('remove and reset', () => {
  const PROTECTED = ['In', 'Out', '_x', 'cabc', 'exit', 'get_ipython', 'json', 'lib_alias', LIBRARY_MODULE, 'open', 'quit'].sort();

  it('partitions names deterministically and is idempotent', async () => {
    await execute('rm_a = 1\nrm_b = 2\n_x = 3\ndef rm_f(): pass');
    const names = ['rm_b', 'rm_a', 'zzz_unknown', ...PROTECTED, 'rm_a', 'rm_f'];
    const first = await server.structured('remove', { names });
    expect(first).toMatchObject({ removed: ['rm_a', 'rm_b', 'rm_f'], refused: PROTECTED, unknown: ['zzz_unknown'] });
    const second = await server.structured('remove', { names });
    expect(second).toEqual({ refused: PROTECTED, unknown: ['rm_a', 'rm_b', 'rm_f', 'zzz_unknown'] });
    expect(await value('_x')).toBe(3);
    expect(await value('json.__name__')).toBe('json');
    expect((await failed('remove', { names: 'rm_a' })).code).toBe('invalid_arguments');
  });

  it('reset removes user names (sorted), restores configured bindings and keeps the execution count', async () => {
    await server.structured('reset');
    await execute(`zeta = 1\nalpha_r = 2\ndef middle(): pass\njson = "shadow"\ndel lib_alias\n${LIBRARY_MODULE} = None\n_kept = 5`);
    const last = await execute('1');
    const reset = await server.structured('reset');
    expect(reset.removed).toEqual(['alpha_r', 'middle', 'zeta']);
    // removed_count equals the list's length and nothing was cut: both are left out.
    expect(reset).toEqual({ removed: ['alpha_r', 'middle', 'zeta'], execution_count: last.execution_count });
    expect(await value(`[json.__name__, lib_alias.__name__, ${LIBRARY_MODULE}.__name__, cabc.__name__, _kept]`)).toEqual([
      'json',
      LIBRARY_MODULE,
      LIBRARY_MODULE,
      'collections.abc',
      5,
    ]);
    const repeated = await server.structured('reset');
    expect(repeated).toEqual({ execution_count: last.execution_count + 1 });
    const next = await execute('2');
    expect(next.execution_count).toBe(last.execution_count + 2);
    const refused = await server.structured('remove', { names: PROTECTED });
    expect(refused.refused).toEqual(PROTECTED);
    expect((await failed('reset', { everything: true })).code).toBe('invalid_arguments');
  });

  it("reset restores IPython's own bindings a user shadowed or deleted", async () => {
    await execute("get_ipython = 7\nIn = None\nOut = 'x'\nexit = 1\ndel quit");
    await server.structured('reset');
    expect(await value("[type(get_ipython()).__name__ != 'int', type(In).__name__, type(Out).__name__, callable(exit), callable(quit)]")).toEqual([
      true,
      'list',
      'dict',
      true,
      true,
    ]);
  });
});

describe('a sleeping __repr__ does not wedge the runtime', () => {
  let quick: TestServer;
  beforeAll(async () => {
    quick = await startServer({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '1.5' });
  });
  afterAll(async () => {
    await quick?.close();
  });

  it('times out inspect cooperatively and keeps the namespace', async () => {
    await quick.call('execute', { code: 'import time\nclass Slow:\n    def __repr__(self):\n        time.sleep(60)\n        return "slow"\nslow = Slow()\nkept = 7' });
    const result = await quick.call('inspect', { name: 'slow' });
    expect(result.isError).toBe(true);
    const structured = result.structuredContent as any;
    expect(structured.error.code).toBe('operation_timeout');
    expect(structured.runtime).toMatchObject({ interruption: 'timeout', namespace: 'preserved' });
    expect((await quick.structured('execute', { code: 'kept' })).result.value).toBe(7);
  });
});

describe('search over 100,000 names', () => {
  it('answers within a generous bound (recorded, not tuned)', async () => {
    await execute('for _i in range(100_000):\n    globals()[f"bulk_{_i}"] = _i');
    const timings: number[] = [];
    let partial: Record<string, any> = {};
    for (let round = 0; round < 3; round += 1) {
      const started = performance.now();
      partial = await server.structured('search', { query: 'BULK_9' });
      timings.push(performance.now() - started);
    }
    const startedExact = performance.now();
    const exact = await server.structured('search', { query: 'bulk_99999', exact: true });
    const exactMs = performance.now() - startedExact;
    const startedKinds = performance.now();
    const byKind = await server.structured('search', { query: 'bulk_', kinds: ['variable'] });
    const kindsMs = performance.now() - startedKinds;
    console.log(
      `search over 100,000 names, MCP round trip: partial ${timings.map((ms) => ms.toFixed(0)).join('/')} ms, ` +
        `exact ${exactMs.toFixed(0)} ms, kinds filter ${kindsMs.toFixed(0)} ms`,
    );
    expect(partial.total).toBe(11_111);
    expect(partial.matches).toHaveLength(100);
    expect(partial.matches[0].name).toBe('bulk_9');
    expect(exact.matches.map((match: any) => match.value ?? match.repr)).toEqual(['99999']);
    expect(byKind.total).toBe(100_000);
    expect(Math.min(...timings)).toBeLessThan(10_000);
    const reset = await server.structured('reset');
    expect(reset.removed.length).toBeGreaterThanOrEqual(100_000);
    expect(reset).not.toHaveProperty('removed_count');
    expect(reset).not.toHaveProperty('removed_truncated');
  });
});
