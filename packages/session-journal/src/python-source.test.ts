import { describe, expect, it } from 'vitest';
import { pythonCall, pythonLiteral, pythonString } from './python-source.js';

describe('JSON as Python source', () => {
  it('quotes strings the way repr does', () => {
    expect(pythonString('plain')).toBe("'plain'");
    expect(pythonString("it's")).toBe('"it\'s"');
    expect(pythonString('both \' and "')).toBe("'both \\' and \"'");
    expect(pythonString('tab\tnew\nline\\ \u0001')).toBe("'tab\\tnew\\nline\\\\ \\x01'");
    expect(pythonString('lone \ud800 surrogate')).toBe("'lone \\ud800 surrogate'");
    expect(pythonString('ünïcödé ✓')).toBe("'ünïcödé ✓'");
    // Text the value contract escaped already keeps its backslashes as they are.
    expect(pythonString('caf\\udce9 a\\\\b', true)).toBe("'caf\\udce9 a\\\\b'");
  });

  it('renders JSON values as Python literals', () => {
    expect(pythonLiteral({ a: [1, 2.5, null, true, false], 'b c': { d: 'e' } })).toBe("{'a': [1, 2.5, None, True, False], 'b c': {'d': 'e'}}");
    expect(pythonLiteral([])).toBe('[]');
    expect(pythonLiteral(Number.NaN)).toBe("float('nan')");
    expect(pythonLiteral(-Infinity)).toBe("-float('inf')");
  });

  it('renders calls, with keys that are not identifiers passed as **{...}', () => {
    expect(pythonCall('f', { x: 1, y: 'a' })).toBe("f(x=1, y='a')");
    expect(pythonCall('lib.tool', {})).toBe('lib.tool()');
    expect(pythonCall('g', { ok: null, 'not-valid': 2, '1st': 3 })).toBe("g(ok=None, **{'not-valid': 2, '1st': 3})");
  });
});
