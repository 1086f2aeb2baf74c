import { describe, expect, it } from 'vitest';
import { pythonString } from '@ipython-mcp/session-journal';
import { pythonFloat, pythonRepr } from './python-repr.js';

describe('pythonRepr', () => {
  it('writes JSON values as Python does', () => {
    expect(pythonRepr({ name: 'ada', langs: ['python', 'ts'], year: 1843, ok: true, none: null })).toBe(
      "{'name': 'ada', 'langs': ['python', 'ts'], 'year': 1843, 'ok': True, 'none': None}",
    );
    expect(pythonRepr("it's")).toBe(`"it's"`);
    expect(pythonRepr('both \' and "')).toBe(`'both \\' and "'`);
    expect(pythonRepr('a\\b\n\t\u0000')).toBe("'a\\\\b\\n\\t\\x00'");
    expect(pythonRepr('😀 é')).toBe("'😀 é'");
  });

  it('writes floats with Python’s digits and exponents', () => {
    expect(pythonFloat(1.5)).toBe('1.5');
    expect(pythonFloat(0.1)).toBe('0.1');
    expect(pythonFloat(1e-5)).toBe('1e-05');
    expect(pythonFloat(1.5e16)).toBe('1.5e+16');
    expect(pythonFloat(123456.789)).toBe('123456.789');
    expect(pythonFloat(0.0001)).toBe('0.0001');
    expect(pythonFloat(2.5e-7)).toBe('2.5e-07');
    expect(pythonFloat(1e300)).toBe('1e+300');
    expect(pythonRepr(-0)).toBe('-0.0');
    expect(pythonRepr(3)).toBe('3');
    // Beyond ±(2^53 − 1) an int would have come as an encoded string: an integral number there is a float.
    expect(pythonRepr([1e20, 2 ** 53])).toBe('[1e+20, 9007199254740992.0]');
  });

  it('restores the places the value contract wrote as strings', () => {
    const value = { n: '100000000000000000000', f: ['NaN', '-Infinity', '-0.0'], s: 'caf\\udce9', 'caf\\udce9': 1, 'é': '0x1f' };
    const encoded = {
      '$.n': 'int',
      '$.f[0]': 'float',
      '$.f[1]': 'float',
      '$.f[2]': 'float',
      '$.s': 'text',
      '$["caf\\\\udce9"]': 'key',
      '$["\\u00e9"]': 'int_hex',
    };
    expect(pythonRepr(value, encoded)).toBe("{'n': 100000000000000000000, 'f': [nan, -inf, -0.0], 's': 'caf\\udce9', 'caf\\udce9': 1, 'é': 0x1f}");
    expect(pythonString('a\\\\b', true)).toBe("'a\\\\b'");
  });
});
