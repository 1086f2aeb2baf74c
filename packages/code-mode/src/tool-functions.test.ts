import { describe, expect, it } from 'vitest';
import { renderRunCodeDescription } from './description.js';
import { InvalidCodeModeOptionsError } from './errors.js';
import { validateJsonSchema } from './json-schema.js';
import { pythonLiteral } from '@ipython-mcp/session-journal';
import { assignPythonNames, toPythonIdentifier } from './python-names.js';
import { buildToolFunctions, renderFunctionStub, toolFunctionSpec, type ToolDefinition } from './tool-functions.js';

const execute = (): null => null;

function define(name: string, inputSchema: ToolDefinition['inputSchema'], description?: string): ToolDefinition {
  return { name, description, inputSchema, execute };
}

describe('Python names', () => {
  it('sanitises tool names into identifiers', () => {
    expect(toPythonIdentifier('get-weather')).toBe('get_weather');
    expect(toPythonIdentifier('weather.alerts/v2')).toBe('weather_alerts_v2');
    expect(toPythonIdentifier('3d-render')).toBe('tool_3d_render');
    expect(toPythonIdentifier('class')).toBe('class_');
    expect(toPythonIdentifier('print')).toBe('print_');
    expect(toPythonIdentifier('ToolCallError')).toBe('ToolCallError_');
    expect(toPythonIdentifier('--')).toBe('tool');
    expect(toPythonIdentifier('café')).toBe('caf_');
    expect(toPythonIdentifier('print', 'parameter')).toBe('print');
    expect(toPythonIdentifier('from', 'parameter')).toBe('from_');
  });

  it('resolves collisions deterministically, whatever the order', () => {
    const names = ['get-weather', 'get_weather', 'get.weather', 'print'];
    const expected = new Map([
      ['get-weather', 'get_weather_2'],
      ['get_weather', 'get_weather'],
      ['get.weather', 'get_weather_3'],
      ['print', 'print_'],
    ]);
    expect(assignPythonNames(names)).toEqual(expected);
    expect(assignPythonNames([...names].reverse())).toEqual(expected);
  });

  it('writes JSON values as Python literals', () => {
    expect(pythonLiteral({ a: [null, true, false, 1.5, "it's"] })).toBe(`{'a': [None, True, False, 1.5, "it's"]}`);
    expect(pythonLiteral('tab\there\\')).toBe("'tab\\there\\\\'");
  });
});

describe('tool functions', () => {
  it('renders keyword-only signatures with annotations and defaults from JSON Schema', () => {
    const [weather] = buildToolFunctions([
      define(
        'get-weather',
        {
          type: 'object',
          properties: {
            days: { type: 'integer', default: 3, description: 'How many days.' },
            city: { type: 'string', description: 'The city.' },
            units: { enum: ['metric', 'imperial'] },
            tags: { type: 'array', items: { type: 'string' } },
            where: { type: 'object', properties: { lat: { type: 'number' } } },
            note: { type: ['string', 'null'] },
            any: {},
            'from': { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          },
          required: ['city', 'from'],
        },
        'Get the weather.',
      ),
    ]);
    expect(weather!.pythonName).toBe('get_weather');
    expect(weather!.signature).toBe(
      "(*, city: str, from_: str | int, days: int = 3, units: Literal['metric', 'imperial'] | None = None, " +
        'tags: list[str] | None = None, where: dict[str, Any] | None = None, note: str | None = None, any: Any = None) -> Any',
    );
    const byName = new Map(weather!.parameters!.map((parameter) => [parameter.name, parameter]));
    expect(byName.get('from_')).toMatchObject({ key: 'from', required: true });
    expect(byName.get('units')?.omitNone).toBe(true);
    expect(byName.get('note')?.omitNone).toBe(false);
    expect(byName.get('days')).toMatchObject({ default: 3, omitNone: false });
    expect(weather!.doc).toBe(
      [
        'Get the weather.',
        '',
        '(The tool "get-weather", renamed for Python.)',
        '',
        'Args:',
        '    city: The city.',
        '    from_: Sent as "from".',
        '    days: How many days.',
        '    where: Schema: {"type":"object","properties":{"lat":{"type":"number"}}}',
      ].join('\n'),
    );
    expect(toolFunctionSpec(weather!)).toMatchObject({ python_name: 'get_weather', tool_name: 'get-weather' });
  });

  it('takes free-form keyword arguments when the schema has no properties', () => {
    const [free, none] = buildToolFunctions([
      define('free', { type: 'object' }),
      define('none', { type: 'object', properties: {}, additionalProperties: false }),
    ]);
    expect(free!.signature).toBe('(**arguments: Any) -> Any');
    expect(toolFunctionSpec(free!).parameters).toBeNull();
    expect(none!.signature).toBe('() -> Any');
  });

  it('refuses duplicate tool names', () => {
    expect(() => buildToolFunctions([define('a', {}), define('a', {})])).toThrow(InvalidCodeModeOptionsError);
  });

  it('lists the functions, return rules and IPython features in the description', () => {
    const functions = buildToolFunctions([define('get-weather', { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, 'Get """quoted""" weather.')]);
    const description = renderRunCodeDescription(functions, { maxToolCalls: 7, timeoutMs: 1500 });
    // The description shows the summary line; the whole docstring is the function's own (help() shows it).
    expect(description).toContain('def get_weather(*, city: str) -> Any:\n    """Get \\"\\"\\"quoted\\"\\"\\" weather."""');
    expect(description).not.toContain('renamed for Python');
    expect(renderFunctionStub(functions[0]!)).toContain('def get_weather(*, city: str) -> Any:\n    """Get \\"\\"\\"quoted\\"\\"\\" weather.');
    for (const text of ['%timeit', '!ls', 'top-level await', 'at most 7', '1.5 seconds', 'ToolCallError', '{"output": ..., "result": ...}', '10 MiB', 'restart: true', 'input()']) {
      expect(description).toContain(text);
    }
    expect(renderRunCodeDescription([], { maxToolCalls: 1, timeoutMs: null })).toContain('There is no time limit.');
  });
});

describe('JSON Schema check', () => {
  it('reports the problems of the common keywords and passes valid input', () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 }, s: { type: 'string', enum: ['a', 'b'] }, list: { type: 'array', items: { type: 'number' } } },
      required: ['n'],
      additionalProperties: false,
    };
    expect(validateJsonSchema(schema, { n: 2, s: 'a', list: [1, 2.5] })).toEqual([]);
    expect(validateJsonSchema(schema, { n: 0, s: 'c', list: [1, 'x'], extra: 1 })).toEqual([
      'n must be >= 1',
      's must be one of "a", "b"',
      'list[1] must be number, got a string',
      'the input has unknown property "extra"',
    ]);
    expect(validateJsonSchema(schema, {})).toEqual(['the input is missing required property "n"']);
    expect(validateJsonSchema({ anyOf: [{ type: 'string' }, { type: 'null' }] }, 3)).toEqual(['the input does not match any of the allowed shapes']);
  });
});
