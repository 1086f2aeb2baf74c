import { renderFunctionStub, type ToolDefinition, type ToolFunction } from './tool-functions.js';

/** The Python name the finder takes unless a tool already has it. */
export const FINDER_NAME = 'find_tools';
/** How many stubs one lookup returns unless the code asks for more. */
export const FINDER_DEFAULT_LIMIT = 5;
/** The most stubs one lookup returns. */
export const FINDER_MAX_LIMIT = 50;

/**
 * A name for the finder that no tool has, as a Python function or as a tool: `find_tools`, else `find_tools_`,
 * `find_tools__`, ...
 */
export function finderName(functions: readonly ToolFunction[]): string {
  const taken = new Set(functions.flatMap((tool) => [tool.pythonName, tool.toolName]));
  let name = FINDER_NAME;
  while (taken.has(name)) name = `${name}_`;
  return name;
}

/**
 * The finder as a tool of Code Mode's own: `find_tools(query="...", limit=5)` returns the stubs (whole signature
 * and docstring) of the functions that best match the query, as text, so a model that was shown only names can
 * look a function up before calling it. It is served like any tool call (one round trip, one of max_tool_calls).
 */
export function finderDefinition(name: string, functions: readonly ToolFunction[]): ToolDefinition {
  return {
    name,
    description:
      'Look tool functions up: the signature and whole docstring of each function whose name or docstring matches ' +
      'the query (a name, part of one, or words), best matches first.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'A function name, part of one, or words from what it does.' },
        limit: { type: 'integer', minimum: 1, maximum: FINDER_MAX_LIMIT, default: FINDER_DEFAULT_LIMIT, description: 'The most stubs to return.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: { type: 'string' },
    execute: (input: { query: string; limit?: number }) => findStubs(functions, input.query, input.limit ?? FINDER_DEFAULT_LIMIT),
  };
}

/**
 * The stubs of the functions matching `query`, best first, at most `limit`, joined by blank lines. A function
 * matches each query word found in its name (worth more) or its docstring; a query that is a function's exact name
 * returns that function alone. With no match, says so and lists every name.
 */
export function findStubs(functions: readonly ToolFunction[], query: string, limit: number): string {
  const wanted = query.trim().toLowerCase();
  const words = wanted.split(/[^a-z0-9]+/).filter((word) => word !== '');
  const scored = functions
    .map((tool, index) => ({ tool, index, score: scoreOf(tool, wanted, words) }))
    .filter((entry) => entry.score > 0)
    .sort((left, right) => right.score - left.score || left.index - right.index);
  if (scored.length === 0) {
    return `No function matches ${JSON.stringify(query)}. The functions are: ${functions.map((tool) => tool.pythonName).join(', ')}`;
  }
  // A name given exactly is the one function wanted: its stub alone, not the others that share its words.
  const exact = scored.filter((entry) => entry.score >= EXACT_SCORE);
  if (exact.length > 0) return exact.slice(0, limit).map((entry) => renderFunctionStub(entry.tool)).join('\n\n');
  const shown = scored.slice(0, limit);
  const rest = scored.length - shown.length;
  const stubs = shown.map((entry) => renderFunctionStub(entry.tool));
  if (rest > 0) stubs.push(`# ${rest} more match: ${scored.slice(limit).map((entry) => entry.tool.pythonName).join(', ')}`);
  return stubs.join('\n\n');
}

const EXACT_SCORE = 1000;

function scoreOf(tool: ToolFunction, wanted: string, words: readonly string[]): number {
  const names = [tool.pythonName.toLowerCase(), tool.toolName.toLowerCase()];
  if (names.includes(wanted)) return EXACT_SCORE;
  const doc = tool.doc.toLowerCase();
  let score = 0;
  for (const word of words) {
    if (names.some((name) => name.includes(word))) score += 10;
    else if (doc.includes(word)) score += 1;
  }
  // Every word found counts for more than many words found once: "read file" prefers read_file over read_graph.
  return score > 0 && words.every((word) => names.some((name) => name.includes(word)) || doc.includes(word)) ? score + 100 : score;
}
