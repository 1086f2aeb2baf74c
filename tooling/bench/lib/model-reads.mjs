// "What the model reads": the fourteen everyday calls of the issue, and the rule by which each client forwards a
// tool result to its model. Shared by tooling/bench/model-reads.mjs (the report) and the e2e test that pins the
// budget (apps/ipython-mcp/test/model-reads.e2e.test.ts).

/** The fourteen calls, in order; each `[tool, arguments, label]`. */
export const FOURTEEN_CALLS = [
  ['execute', { code: 'x = 41' }, 'x = 41'],
  ['execute', { code: 'x + 1' }, 'x + 1'],
  ['execute', { code: "print('hello')" }, "print('hello')"],
  ['execute', { code: 'total = 0\nfor i in range(3):\n    print(f"step {i}")\n    total += i\ntotal' }, 'loop that prints and returns'],
  ['execute', { code: "{'name': 'ada', 'langs': ['python', 'ts'], 'year': 1843}" }, 'a dict'],
  ['execute', { code: '1/0' }, '1/0'],
  ['execute', { code: 'import math' }, 'import math'],
  ['execute', { code: 'def add(a: int, b: int = 2) -> int:\n    """Add two numbers."""\n    return a + b' }, 'def add'],
  ['call_function', { name: 'add', arguments: { a: 40 } }, 'call_function add'],
  ['inspect', { name: 'add' }, 'inspect add'],
  ['search', { query: 'add' }, 'search add'],
  ['list', {}, 'list'],
  ['remove', { names: ['x'] }, 'remove x'],
  ['runtime_status', {}, 'runtime_status'],
];

/**
 * The data session of issue 32: about ten everyday pandas/matplotlib calls (load, head, describe, groupby, a plot, a
 * KeyError, a wrong dtype, inspect, search, a shell escape), each `[tool, arguments, label]`. Deterministic: seeded
 * data, no files, no network. Needs numpy, pandas and matplotlib in the worker's Python.
 */
export const DATA_SESSION_CALLS = [
  [
    'execute',
    {
      code: [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(0)',
        "df = pd.DataFrame({'city': rng.choice(['Oslo', 'Lima', 'Pune', 'Kyiv'], 200), 'temp': rng.normal(15, 8, 200).round(1),",
        "                   'rain_mm': rng.gamma(2, 3, 200).round(1), 'day': pd.date_range('2024-01-01', periods=200)})",
      ].join('\n'),
    },
    'load',
  ],
  ['execute', { code: 'df.head()' }, 'head'],
  ['execute', { code: 'display(df.describe())' }, 'describe'],
  ['execute', { code: "df.groupby('city')[['temp', 'rain_mm']].mean()" }, 'groupby'],
  ['execute', { code: "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(4, 3))\ndf.plot(x='day', y='temp', ax=ax)\nplt.show()" }, 'plot'],
  ['execute', { code: "df['nope']" }, 'KeyError'],
  ['execute', { code: "df['city'].astype(float)" }, 'wrong dtype'],
  ['inspect', { name: 'df' }, 'inspect df'],
  ['search', { query: 'df' }, 'search df'],
  ['execute', { code: "!echo hello; printf 'a\\nb\\n'" }, 'shell escape'],
];

function textBlocks(result) {
  return (result.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/**
 * What Claude Code hands its model for a tool result: `JSON.stringify(structuredContent)` for a success that has
 * structured content, the text block(s) otherwise (errors always). Image blocks go to the model as images and are
 * not counted as characters.
 */
export function claudeCodeForwards(result) {
  if (!result.isError && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return textBlocks(result);
}

/** What Codex hands its model: the text block(s), success or error. */
export function codexForwards(result) {
  return textBlocks(result);
}

/** Characters of the tool list a model request carries: name, description and input schema of every tool. */
export function toolListChars(tools) {
  let total = 0;
  for (const tool of tools) total += tool.name.length + (tool.description ?? '').length + JSON.stringify(tool.inputSchema).length;
  return total;
}

/** Runs the fourteen calls through `call(name, args)` and returns one row per call. */
export async function runFourteen(call) {
  return runCalls(FOURTEEN_CALLS, call);
}

/** Runs the data session through `call(name, args)` and returns one row per call. */
export async function runDataSession(call) {
  return runCalls(DATA_SESSION_CALLS, call);
}

async function runCalls(calls, call) {
  const rows = [];
  for (const [tool, args, label] of calls) {
    const result = await call(tool, args);
    rows.push({ label, tool, isError: result.isError === true, result, claudeCode: claudeCodeForwards(result), codex: codexForwards(result) });
  }
  return rows;
}
