import { describe, expect, it } from 'vitest';
import { KernelOperationError } from './errors.js';
import { parseRunCodeReply, shapeReturn } from './return-value.js';

const PNG = 'iVBORw0KGgo=';

function reply(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    status: 'ok',
    execution_count: 1,
    output: '',
    output_omitted_chars: 0,
    truncated: { result: false, displays: false, output: false },
    result: null,
    displays: [],
    displays_omitted: 0,
    error: null,
    tool_calls_made: 0,
    ...fields,
  };
}

const shape = (fields: Record<string, unknown>) => shapeReturn(parseRunCodeReply(reply(fields)));
const json = (value: unknown) => ({ kind: 'json', value });
const image = { data: { 'text/plain': '<Figure>', 'image/png': `${PNG}\n` }, metadata: {}, truncated: false };

describe('the return table', () => {
  it('shapes values', () => {
    expect(shape({ result: json(3) })).toEqual({ kind: 'value', value: 3 });
    expect(shape({ result: { kind: 'repr', repr: 'Fraction(1, 3)' } })).toEqual({ kind: 'value', value: 'Fraction(1, 3)' });
    expect(shape({})).toEqual({ kind: 'value', value: {} });
    expect(shape({ output: 'hi\n' })).toEqual({ kind: 'value', value: { output: 'hi\n' } });
    expect(shape({ output: 'hi\n', result: json([1]) })).toEqual({ kind: 'value', value: { output: 'hi\n', result: [1] } });
    expect(shape({ result: json(null) })).toEqual({ kind: 'value', value: null });
  });

  it('shapes images as content lists: text, images, then the result', () => {
    const png = { type: 'image', mediaType: 'image/png', data: PNG };
    expect(shape({ output: 'a\n', displays: [image, image], result: json({ k: 1 }) })).toEqual({
      kind: 'content',
      parts: [{ type: 'text', text: 'a\n' }, png, png, { type: 'text', text: '{"k":1}' }],
    });
    const imageResult = { kind: 'repr', repr: '<PIL.Image>', images: { 'image/png': PNG, 'image/jpeg': 'xx' } };
    expect(shape({ output: 'p\n', result: imageResult })).toEqual({ kind: 'content', parts: [{ type: 'text', text: 'p\n' }, png] });
    expect(shape({ result: imageResult })).toEqual({ kind: 'content', parts: [png] });
  });

  it('notes dropped output, cut results and missing images', () => {
    expect(shape({ output: 'x'.repeat(5), output_omitted_chars: 1234567 })).toEqual({
      kind: 'value',
      value: {
        output:
          'xxxxx\n[output truncated: 1,234,567 more characters were dropped; run_code keeps the first 10,485,760 characters (10 MiB) of printed output]\n',
      },
    });
    expect(shape({ result: json([1]), truncated: { result: true } })).toEqual({
      kind: 'value',
      value: { output: '[the result was cut to the kernel limits on size and depth]\n', result: [1] },
    });
    expect(shape({ displays_omitted: 2 })).toEqual({
      kind: 'value',
      value: { output: '[2 displayed item(s) were too large or too many to return]\n' },
    });
  });

  it('refuses a malformed reply', () => {
    expect(() => parseRunCodeReply({ status: 'ok' })).toThrow(KernelOperationError);
    expect(() => parseRunCodeReply(reply({ status: 'maybe' }))).toThrow(/malformed run_code reply \(status\)/);
  });
});
