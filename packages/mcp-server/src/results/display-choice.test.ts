import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlAsText, modelDisplay } from './display-choice.js';

const IMAGE_REFERENCE = '[image 1: image/png, 8 base64 characters, returned as MCP image content]';

describe('modelDisplay', () => {
  it('keeps one representation: image, informative text/plain, Markdown, HTML as text, in that order', () => {
    expect(modelDisplay({ data: { 'text/plain': '<Figure size 640x480 with 1 Axes>', 'image/png': IMAGE_REFERENCE } })).toEqual({
      data: { 'image/png': IMAGE_REFERENCE },
      omitted: ['text/plain'],
    });
    expect(modelDisplay({ data: { 'text/plain': '   a\n0  1', 'text/html': '<table></table>' }, metadata: { k: 1 } })).toEqual({
      data: { 'text/plain': '   a\n0  1' },
      metadata: { k: 1 },
      omitted: ['text/html'],
    });
    expect(modelDisplay({ data: { 'text/plain': '<IPython.core.display.Markdown object>', 'text/markdown': '# Title', 'text/html': '<h1>Title</h1>' } })).toEqual({
      data: { 'text/markdown': '# Title' },
      omitted: ['text/plain', 'text/html'],
    });
    expect(modelDisplay({ data: { 'text/plain': '<__main__.Widget object at 0x7f00aa>', 'text/html': '<p>Hello <b>there</b></p>' } })).toEqual({
      data: { 'text/plain': 'Hello there' },
      text_from: 'text/html',
      omitted: ['text/plain'],
    });
    // HTML alone is converted too; a bundle with nothing to leave out is returned as it is.
    expect(modelDisplay({ data: { 'text/html': '<ul><li>one</li></ul>' } })).toEqual({ data: { 'text/plain': ' * one' }, text_from: 'text/html' });
    const single = { data: { 'text/plain': '42' } };
    expect(modelDisplay(single)).toBe(single);
    // Nothing informative and nothing to convert: the type-naming text/plain is still better than nothing.
    expect(modelDisplay({ data: { 'text/plain': '<Thing object>', 'application/json': { a: 1 } } })).toEqual({
      data: { 'text/plain': '<Thing object>' },
      omitted: ['application/json'],
    });
    const unknown = { data: { 'application/vnd.custom+json': { a: 1 } } };
    expect(modelDisplay(unknown)).toBe(unknown);
  });

  it('turns an HTML table into a text table, without styles', () => {
    const html = '<div><style scoped>.dataframe th {text-align: right;}</style><table class="dataframe"><thead><tr><th></th><th>temp</th></tr></thead>' +
      '<tbody><tr><th>count</th><td>200.0</td></tr><tr><th>mean</th><td>14.15</td></tr></tbody></table></div>';
    expect(htmlAsText(html).split('\n')).toEqual(['        temp', 'count   200.0', 'mean    14.15']);
  });

  it('never loses a MIME type silently: the shown one plus the omitted ones are the bundle', () => {
    const mime = fc.constantFrom('text/plain', 'text/html', 'text/markdown', 'image/png', 'image/jpeg', 'application/json', 'text/latex');
    const bundle = fc.dictionary(mime, fc.oneof(fc.string(), fc.constant('<X object>'), fc.constant('<b>x</b>')), { minKeys: 1 });
    fc.assert(
      fc.property(bundle, (data) => {
        const shown = modelDisplay({ data });
        // Returned as it is: one MIME type and nothing to convert, or nothing a model can be given instead.
        if (shown.data === data) return;
        const kept = Object.keys(shown.data as object);
        expect(kept.length).toBe(1);
        const source = shown.text_from === undefined ? kept[0] : shown.text_from;
        const omitted = (shown.omitted as string[] | undefined) ?? [];
        expect([source, ...omitted].sort()).toEqual(Object.keys(data).sort());
      }),
    );
  });
});
