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
  const rows = [];
  for (const [tool, args, label] of FOURTEEN_CALLS) {
    const result = await call(tool, args);
    rows.push({ label, tool, isError: result.isError === true, result, claudeCode: claudeCodeForwards(result), codex: codexForwards(result) });
  }
  return rows;
}
