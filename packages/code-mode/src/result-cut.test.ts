import { describe, expect, it } from 'vitest';
import { describeResultCut, parseResultCut } from './result-cut.js';

describe('result cut notes', () => {
  it('reads the worker report and tells the exact counts', () => {
    const cut = parseResultCut({ items: 1_234_567, chars: 89, deep: 0, size: true });
    expect(describeResultCut(cut)).toBe(
      '[result cut: it is larger than the 10,485,760 bytes (10 MiB) of JSON run_code returns; dropped: 1,234,567 more ' +
        'list items or dict entries and 89 characters at the ends of strings. Return a slice, a summary, or the nested part itself to see the rest.]',
    );
    expect(describeResultCut(parseResultCut({ items: 0, chars: 0, deep: 2, size: false }))).toBe(
      '[result cut: 2 containers nested deeper than 32 levels were replaced with "…". Return a slice, a summary, or the nested part itself to see the rest.]',
    );
    expect(describeResultCut(parseResultCut({ repr_chars: 150 }))).toContain('150 more characters were dropped');
    expect(describeResultCut(parseResultCut({ repr_chars: null }))).toContain('the rest was dropped');
  });

  it('treats a missing or malformed report as none', () => {
    expect(parseResultCut(null)).toBeNull();
    expect(parseResultCut([1])).toBeNull();
    expect(describeResultCut(null)).toBeUndefined();
    expect(parseResultCut({ items: -1, chars: 'x', deep: 1.5 })).toEqual({ kind: 'json', items: 0, chars: 0, deep: 0, size: false });
  });
});
