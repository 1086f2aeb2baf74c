import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { linkOutputs } from './output-links.js';
import { OutputResources } from '../resources/index.js';
import { MAX_IMAGE_TOKENS, RESULT_TOKEN_BUDGET, cutLongStrings, imageSize, imageTokens, prefixWithin, resultTokens } from './result-budget.js';

function pngHeader(width: number, height: number): Buffer {
  const header = Buffer.alloc(24);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header);
  header.writeUInt32BE(13, 8);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(width, 16);
  header.writeUInt32BE(height, 20);
  return header;
}

function jpegHeader(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 8, height >> 8, height & 255, width >> 8, width & 255, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

describe('image tokens', () => {
  it('reads PNG and JPEG sizes from their headers', () => {
    expect(imageSize(pngHeader(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageSize(jpegHeader(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageSize(Buffer.from('not an image'))).toBeUndefined();
  });

  it("counts width × height / 750 after scaling to 1,568 px, at most Anthropic's ceiling; unknown counts as the most", () => {
    expect(imageTokens(pngHeader(300, 250))).toBe(100);
    expect(imageTokens(pngHeader(3136, 100))).toBe(Math.ceil((1568 * 50) / 750));
    expect(imageTokens(pngHeader(1568, 1568))).toBe(MAX_IMAGE_TOKENS);
    expect(imageTokens(Buffer.from('??'))).toBe(MAX_IMAGE_TOKENS);
  });
});

describe('cutLongStrings', () => {
  it('cuts the longest strings to one waterline, keeps short ones, and ends each cut with the note', () => {
    const structured = { a: 'x'.repeat(10_000), b: ['y'.repeat(5_000), 'short'], c: { d: 'z'.repeat(300) } };
    expect(cutLongStrings(structured, 9_000, (omitted) => `[${omitted} cut]`)).toBe(true);
    const total = JSON.stringify(structured).length;
    expect(total).toBeLessThanOrEqual(15_400 - 9_000 + 100);
    expect(structured.a).toMatch(/^x+\[\d+ cut\]$/);
    expect(structured.b[1]).toBe('short');
    expect(cutLongStrings({ a: 'short' }, 100, () => '')).toBe(false);
  });
});

describe('prefixWithin', () => {
  it('keeps a depth-first prefix of about the allowance, each container cut short saying how many items it lost', () => {
    const value = { a: Array.from({ length: 1000 }, (_, index) => index), b: { c: 1 } };
    const kept = prefixWithin(value, 200, (omitted) => `[${omitted} more]`) as { a: unknown[]; '…'?: string };
    expect(kept.a.slice(0, 3)).toEqual([0, 1, 2]);
    expect(kept.a.at(-1)).toMatch(/^\[\d+ more\]$/);
    expect(kept['…']).toBe('[1 more]');
    expect(JSON.stringify(kept).length).toBeLessThan(300);
    expect(prefixWithin([1, 'two', null], 1000, () => 'cut')).toEqual([1, 'two', null]);
  });
});

describe('linkOutputs', () => {
  it('cuts a value of many small items to a prefix when no long string is left to cut', () => {
    const outputs = new OutputResources('ns', () => undefined);
    const structured: Record<string, unknown> = { result: { value: Array.from({ length: 10 }, () => Array.from({ length: 100 }, () => Array.from({ length: 100 }, (_, index) => index))) } };
    const result: CallToolResult = { content: [{ type: 'text', text: '' }], structuredContent: structured };
    linkOutputs(result, structured, () => '', outputs);
    expect(resultTokens(result)).toBeLessThanOrEqual(RESULT_TOKEN_BUDGET);
    expect(JSON.stringify(structured)).toMatch(/more items cut to fit the client's result cap; whole result: ipython-mcp:\/\/ns\/result\//);
  });


  it('holds a result over the budget within it, with the whole result behind a link', async () => {
    const outputs = new OutputResources('ns', () => undefined);
    const structured: Record<string, unknown> = { stdout: 'a'.repeat(50_000), stderr: '\u0001'.repeat(20_000), displays: [] };
    const text = (shown: Record<string, unknown>) => `${String(shown.stdout)}\n${String(shown.stderr)}`;
    const result: CallToolResult = { content: [{ type: 'text', text: text(structured) }], structuredContent: structured };
    const before = JSON.stringify(structured);
    linkOutputs(result, structured, text, outputs);
    expect(resultTokens(result)).toBeLessThanOrEqual(RESULT_TOKEN_BUDGET);
    const link = result.content.at(-1) as { type: string; uri: string; name: string };
    expect(link).toMatchObject({ type: 'resource_link', name: 'whole-result' });
    expect((result.content[0] as { text: string }).text).toContain(link.uri);
    let whole = '';
    let next: string | undefined = link.uri;
    while (next !== undefined) {
      const item = (await outputs.read(next)).contents[0] as { text: string; _meta: Record<string, { next?: string }> };
      whole += item.text;
      next = item._meta['ipython-mcp/page']?.next;
    }
    expect(whole).toBe(before);
  });

  it('converges when many strings share the cut (each cut counts its note)', () => {
    const outputs = new OutputResources('ns', () => undefined);
    const structured: Record<string, unknown> = {
      stdout: '"\\'.repeat(4096),
      stderr: '\t"'.repeat(4096),
      displays: Array.from({ length: 20 }, () => ({ data: { 'text/plain': 'a   "   '.repeat(500) } })),
    };
    const result: CallToolResult = { content: [{ type: 'text', text: '' }], structuredContent: structured };
    linkOutputs(result, structured, () => '', outputs);
    expect(resultTokens(result)).toBeLessThanOrEqual(RESULT_TOKEN_BUDGET);
    expect(resultTokens(result)).toBeGreaterThan(RESULT_TOKEN_BUDGET * 0.8);
  });

  it('sends images inline within their budget and the rest as links; every image gets a link and its reference says where', async () => {
    const outputs = new OutputResources('ns', () => undefined);
    const data = pngHeader(1568, 1568).toString('base64');
    const reference = (n: number) => `[image ${n}: image/png, ${data.length} base64 characters, returned as MCP image content]`;
    const structured: Record<string, unknown> = { displays: Array.from({ length: 10 }, (_, index) => ({ data: { 'image/png': reference(index + 1) } })) };
    const result: CallToolResult = {
      content: [{ type: 'text', text: 'x' }, ...Array.from({ length: 10 }, () => ({ type: 'image' as const, data, mimeType: 'image/png' }))],
      structuredContent: structured,
    };
    const bundles = Array.from({ length: 10 }, (_, index) => ({ data: { 'image/png': reference(index + 1), 'text/plain': '<Figure>' } }));
    linkOutputs(result, structured, () => 'rewritten', outputs, bundles);
    const inline = result.content.filter((block) => block.type === 'image');
    const linked = result.content.filter((block) => block.type === 'resource_link') as Array<{ uri: string }>;
    expect(inline).toHaveLength(7);
    expect(linked).toHaveLength(10);
    const displays = structured.displays as Array<{ data: Record<string, string> }>;
    expect(displays[6]?.data['image/png']).toBe(reference(7));
    expect(displays[7]?.data['image/png']).toBe(`[image 8: image/png, ${data.length} base64 characters, returned as resource link ${linked[7]?.uri}]`);
    expect(bundles[8]?.data['image/png']).toBe(`[image 9: image/png, ${data.length} base64 characters, returned as resource link ${linked[8]?.uri}]`);
    expect(result.content[0]).toEqual({ type: 'text', text: 'rewritten' });
    const read = (await outputs.read(linked[9]!.uri)).contents[0] as { blob: string };
    expect(read.blob).toBe(data);
  });

  it('holds a result within a configured cap, and not at all when the cap is off (links still added)', () => {
    const make = () => {
      const structured: Record<string, unknown> = { stdout: 'a'.repeat(40_000), stdout_spill: '/elsewhere/1-cell1-stdout.txt' };
      return { structured, result: { content: [{ type: 'text' as const, text: '' }], structuredContent: structured } as CallToolResult };
    };
    const small = make();
    linkOutputs(small.result, small.structured, () => '', new OutputResources('ns', () => undefined, undefined, 10_000));
    expect(resultTokens(small.result)).toBeLessThanOrEqual(8_800);
    const off = make();
    linkOutputs(off.result, off.structured, () => '', new OutputResources('ns', () => '/elsewhere', undefined, null));
    expect(off.structured.stdout).toHaveLength(40_000);
    expect(off.result.content.map((block) => block.type)).toEqual(['text', 'resource_link']);
  });

  it('leaves a small result as it is', () => {
    const outputs = new OutputResources('ns', () => undefined);
    const structured = { stdout: 'hi' };
    const result: CallToolResult = { content: [{ type: 'text', text: 'hi' }], structuredContent: structured };
    linkOutputs(result, structured, () => 'hi', outputs);
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
  });
});
