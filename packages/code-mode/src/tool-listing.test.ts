import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderRunCodeDescription } from './description.js';
import { findStubs, finderName } from './tool-finder.js';
import { buildToolFunctions, renderFunctionStub, type ToolDefinition } from './tool-functions.js';
import { MAX_SUMMARY_CHARS, renderCompactStub, summaryOf } from './tool-listing.js';

function define(name: string, description: string, group?: string): ToolDefinition {
  return {
    name,
    description,
    ...(group === undefined ? {} : { group }),
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Where.' } }, required: ['path'] },
    execute: () => null,
  };
}

const limits = { maxToolCalls: 10, timeoutMs: 60_000 };

describe('summaryOf', () => {
  it('takes the first sentence, on one line', () => {
    expect(summaryOf('Read a file as text. Handles encodings.\nMore.')).toBe('Read a file as text.');
    expect(summaryOf('Lists the graph\n\nArgs: none')).toBe('Lists the graph');
    expect(summaryOf('Version 1.2 of the\n  echo tool! Then more.')).toBe('Version 1.2 of the echo tool!');
    expect(summaryOf(undefined)).toBe('');
    expect(summaryOf('   ')).toBe('');
  });

  it('bounds a long sentence at a word, with an ellipsis', () => {
    const long = `${'word '.repeat(60)}end.`;
    const summary = summaryOf(long);
    expect(summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(summary.endsWith('word…')).toBe(true);
  });

  it('is one line within the bound for any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400, unit: 'binary' }), (text) => {
        const summary = summaryOf(text);
        expect(summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
        expect(summary).not.toMatch(/\n/);
      }),
    );
  });
});

describe('the compact listing', () => {
  const functions = buildToolFunctions([
    define('read_text_file', 'Read the complete contents of a file as text. Handles various text encodings and fails on binary.', 'filesystem'),
    define('read_graph', 'Read the entire knowledge graph', 'memory'),
    define('plain', ''),
  ]);

  it('shows every function with its whole signature and summary, grouped with status lines', () => {
    const groups = [
      { name: 'filesystem', status: 'ready, 1 tool' },
      { name: 'memory', status: 'ready, 1 tool' },
      { name: 'broken', status: 'NOT AVAILABLE (it did not start); none of its tools are defined' },
    ];
    const description = renderRunCodeDescription(functions, limits, { groups, note: 'From MCP servers.' });
    expect(description).toContain('def plain(*, path: str) -> Any: ...');
    expect(description).toContain(
      '- filesystem: ready, 1 tool\n```python\ndef read_text_file(*, path: str) -> Any:\n    """Read the complete contents of a file as text."""\n```',
    );
    expect(description).toContain('- memory: ready, 1 tool\n```python\ndef read_graph(*, path: str) -> Any:\n    """Read the entire knowledge graph"""');
    expect(description).toContain('- broken: NOT AVAILABLE (it did not start); none of its tools are defined');
    expect(description).toContain('From MCP servers.');
    expect(description).toMatch(/help\(name\) or name\? shows the whole docstring/);
    expect(description).not.toContain('Handles various text encodings');
    expect(description.indexOf('def plain')).toBeLessThan(description.indexOf('- filesystem'));
  });

  it('lists names only with a finder, naming it', () => {
    const description = renderRunCodeDescription(functions, limits, { groups: [{ name: 'filesystem', status: 'ready' }], finder: 'find_tools' });
    expect(description).toContain('- filesystem: ready\n  read_text_file');
    expect(description).toContain('- memory\n  read_graph');
    expect(description).toContain('print(find_tools(query="a name or words"))');
    expect(description).not.toContain('def ');
  });

  it('escapes triple quotes in a summary', () => {
    const [quoted] = buildToolFunctions([define('q', 'Say """hi""".')]);
    expect(renderCompactStub(quoted!)).toBe('def q(*, path: str) -> Any:\n    """Say \\"\\"\\"hi\\"\\"\\"."""');
  });
});

describe('the finder', () => {
  const functions = buildToolFunctions([
    define('read_file', 'Read a file. Deprecated: use read_text_file.'),
    define('read_text_file', 'Read the complete contents of a file as text.'),
    define('read_graph', 'Read the entire knowledge graph'),
    define('write_file', 'Create or overwrite a file.'),
  ]);

  it('returns whole stubs, an exact name first, then the best matches', () => {
    expect(findStubs(functions, 'read_text_file', 1)).toBe(renderFunctionStub(functions[1]!));
    const text = findStubs(functions, 'file text', 5);
    expect(text.startsWith('def read_text_file(')).toBe(true);
    expect(text).toContain('    Args:\n        path: Where.');
    expect(findStubs(functions, 'read', 2)).toContain('# 1 more match: read_graph');
  });

  it('answers any query with text, at most `limit` stubs, and finds every function by its name (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60, unit: 'binary' }), fc.integer({ min: 1, max: 50 }), (query, limit) => {
        const text = findStubs(functions, query, limit);
        expect(typeof text).toBe('string');
        expect(text.split('\n').filter((line) => line.startsWith('def ')).length).toBeLessThanOrEqual(limit);
      }),
    );
    for (const tool of functions) expect(findStubs(functions, tool.pythonName.toUpperCase(), 5)).toBe(renderFunctionStub(tool));
  });

  it('says when nothing matches and lists every name', () => {
    expect(findStubs(functions, 'zebra', 5)).toBe('No function matches "zebra". The functions are: read_file, read_text_file, read_graph, write_file');
  });

  it('takes a name no tool has', () => {
    expect(finderName(functions)).toBe('find_tools');
    expect(finderName(buildToolFunctions([define('find_tools', ''), define('find_tools_', '')]))).toBe('find_tools__');
  });
});
