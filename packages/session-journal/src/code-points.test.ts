import { describe, expect, it } from 'vitest';
import { codePointIndex } from './code-points.js';

describe('codePointIndex', () => {
  it('counts a surrogate pair as one code point, a lone surrogate as one, and stops at the end', () => {
    expect(codePointIndex('abc', 2)).toBe(2);
    expect(codePointIndex('😀x', 1)).toBe(2);
    expect(codePointIndex('\ud800x', 1)).toBe(1);
    expect(codePointIndex('ab', 9)).toBe(2);
    expect(codePointIndex('', 0)).toBe(0);
  });
});
