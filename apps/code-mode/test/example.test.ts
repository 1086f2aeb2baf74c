import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { runExample } from '../src/example.js';
import { testPython } from './harness.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

describe('the example agent', () => {
  it('runs its two-prompt conversation on one kernel', async () => {
    const codes = [
      "sales = {region: [row['total'] for row in get_sales(region=region)] for region in ('north', 'south')}\n{k: v[-1] / v[0] for k, v in sales.items()}",
      "max(((region, month + 2, b - a) for region, v in sales.items() for month, (a, b) in enumerate(zip(v, v[1:]))), key=lambda t: t[2])",
    ];
    let turn = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        turn += 1;
        const last = options.prompt[options.prompt.length - 1];
        if (last?.role === 'tool') {
          const part = last.content[0];
          const text = part?.type === 'tool-result' ? JSON.stringify(part.output) : 'no result';
          return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
        }
        const code = codes[turn === 1 ? 0 : 1]!;
        return {
          content: [{ type: 'tool-call', toolCallId: `c${turn}`, toolName: 'run_code', input: JSON.stringify({ code }) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        };
      },
    });
    let written = '';
    await runExample(model, (text) => (written += text), testPython());
    expect(written).toContain('{"type":"json","value":{"north":1.425,"south":1.2222222222222223}}');
    expect(written).toContain('{"type":"json","value":["north",2,150]}');
    expect(written).toContain('[run_code]\nsales = {region:');
  });
});
