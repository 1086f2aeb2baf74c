import { jsonSchema, tool, type ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { splitTools, toToolDefinition } from '../src/index.js';

const schema = jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
const tools: ToolSet = {
  search: tool({ description: 'Search.', inputSchema: schema, execute: ({ q }) => `found ${q}` }),
  fetch_page: tool({ inputSchema: schema, execute: ({ q }) => q }),
  client_side: tool({ inputSchema: schema }),
  risky: tool({ inputSchema: schema, needsApproval: true, execute: () => 'done' }),
  provider_search: { type: 'provider', id: 'openai.web_search', args: {}, inputSchema: schema, execute: () => 'x' } as ToolSet[string],
};

describe('selecting AI SDK tools', () => {
  it("defines every eligible tool with 'all', keeping client-side, provider and approval-only tools native", async () => {
    const { definitions, native } = await splitTools(tools, 'all');
    expect(definitions.map((definition) => definition.name)).toEqual(['search', 'fetch_page']);
    expect(Object.keys(native)).toEqual(['client_side', 'risky', 'provider_search']);
  });

  it('selects by names or by predicate', async () => {
    const byName = await splitTools(tools, ['fetch_page', 'risky', 'client_side']);
    expect(byName.definitions.map((definition) => definition.name)).toEqual(['fetch_page', 'risky']);
    expect(Object.keys(byName.native)).toEqual(['search', 'client_side', 'risky', 'provider_search']);
    const byPredicate = await splitTools(tools, (name) => name.startsWith('s'));
    expect(byPredicate.definitions.map((definition) => definition.name)).toEqual(['search']);
  });

  it('carries descriptions and JSON Schemas, and validates with the tool schema', async () => {
    const validated = jsonSchema<{ n: number }>(
      { type: 'object', properties: { n: { type: 'number' } } },
      { validate: (value) => (typeof (value as { n?: unknown }).n === 'number' ? { success: true, value: value as { n: number } } : { success: false, error: new Error('n must be a number') }) },
    );
    const definition = await toToolDefinition('count', tool({ description: 'Counts.', inputSchema: validated, execute: ({ n }) => n + 1 }));
    expect(definition).toMatchObject({ name: 'count', description: 'Counts.', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } });
    expect(await definition.validate?.({ n: 'x' })).toEqual({ success: false, message: 'n must be a number' });
    expect(await definition.validate?.({ n: 1 })).toEqual({ success: true, value: { n: 1 } });
  });
});
