// The compiled validator must be the interpreter: the same problems, in the same order, for any schema and value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileJsonSchema } from './json-schema-compile.js';
import { validateJsonSchema, type JsonSchema } from './json-schema.js';

const SEED = { seed: 20261201, numRuns: 1500 };

const key = fc.constantFrom('a', 'b', 'x', 'constructor', '__proto__', 'toString');
const typeName = fc.constantFrom('null', 'boolean', 'integer', 'number', 'string', 'array', 'object', 'date');
const bound = fc.oneof(fc.integer({ min: -3, max: 5 }), fc.double({ min: -3, max: 5, noNaN: true }));
const small = fc.oneof(fc.integer({ min: -3, max: 5 }), fc.string({ maxLength: 3 }), fc.boolean(), fc.constant(null), fc.constant(1.5));
/** Values near what the schemas below speak of, so that both verdicts come up. */
const values = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, small, fc.constantFrom('😀', '\ud800', 'ab😀', 'aaaa'), tie('array'), tie('object')),
  array: fc.oneof(fc.array(tie('value'), { maxLength: 4 }), fc.sparseArray(tie('value'), { maxLength: 4 })),
  object: fc.dictionary(key, tie('value'), { maxKeys: 3 }),
})).value;

const schemas = fc.letrec((tie) => ({
  schema: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.boolean(), tie('node'), tie('node')),
  node: fc.record(
    {
      type: fc.oneof(typeName, fc.array(typeName, { maxLength: 3 })),
      nullable: fc.boolean(),
      enum: fc.array(small, { maxLength: 3 }),
      const: small,
      minimum: bound,
      maximum: bound,
      exclusiveMinimum: bound,
      exclusiveMaximum: bound,
      minLength: fc.integer({ min: 0, max: 4 }),
      maxLength: fc.integer({ min: 0, max: 4 }),
      pattern: fc.constantFrom('^a', 'b$', '(', '\\p{L}+'),
      minItems: fc.integer({ min: 0, max: 3 }),
      maxItems: fc.integer({ min: 0, max: 3 }),
      items: fc.oneof(tie('schema'), fc.array(tie('schema'), { maxLength: 2 })),
      required: fc.array(key, { maxLength: 2 }),
      properties: fc.dictionary(key, tie('schema'), { maxKeys: 3 }),
      additionalProperties: tie('schema'),
      allOf: fc.array(tie('schema'), { maxLength: 2 }),
      anyOf: fc.array(tie('schema'), { maxLength: 2 }),
      oneOf: fc.array(tie('schema'), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  ),
})).schema as fc.Arbitrary<JsonSchema | boolean>;

/** Keywords of the wrong type: the compiled form must leave them to the interpreter, whatever it does with them. */
const malformed = fc.record(
  {
    type: fc.constantFrom(1, [1], 'integer'),
    required: fc.constantFrom('ab', ['a'], [1]),
    properties: fc.constantFrom({ a: 1 }, { a: null }, [], { a: { type: 'string' } }),
    items: fc.constantFrom(1, [1], null),
    minimum: fc.constantFrom('2', 2, null),
    pattern: fc.constantFrom(1, '^a'),
    enum: fc.constantFrom('a', [1]),
    allOf: fc.constantFrom([1], {}, [true]),
  },
  { requiredKeys: [] },
) as unknown as fc.Arbitrary<JsonSchema>;

function verdict(run: () => string[]): { problems: string[] } | { threw: string } {
  try {
    return { problems: run() };
  } catch (error) {
    return { threw: (error as Error).constructor.name };
  }
}

describe('compileJsonSchema', () => {
  it('gives what validateJsonSchema gives, for any schema of the subset and any value', () => {
    fc.assert(
      fc.property(schemas, values, (schema, value) => {
        expect(compileJsonSchema(schema)(value)).toEqual(validateJsonSchema(schema, value));
      }),
      SEED,
    );
  });

  it('behaves as the interpreter on malformed schemas, and compiling them never throws', () => {
    fc.assert(
      fc.property(malformed, values, (schema, value) => {
        const compiled = compileJsonSchema(schema);
        expect(verdict(() => compiled(value))).toEqual(verdict(() => validateJsonSchema(schema, value)));
      }),
      SEED,
    );
  });

  it('does not take Object.prototype members for declared properties', () => {
    const schema: JsonSchema = { type: 'object', properties: { x: { type: 'integer' } }, additionalProperties: false };
    for (const check of [compileJsonSchema(schema), (value: unknown) => validateJsonSchema(schema, value)]) {
      expect(check({ constructor: 1 })).toEqual(['the input has unknown property "constructor"']);
      expect(check(JSON.parse('{"__proto__": 1}'))).toEqual(['the input has unknown property "__proto__"']);
      expect(check({ x: 1 })).toEqual([]);
    }
  });

  it('compiles a schema that contains itself, checking values as deep as they go', () => {
    const node: JsonSchema = { type: 'object', properties: {} };
    (node.properties as Record<string, JsonSchema>).child = node;
    const check = compileJsonSchema(node);
    let value: Record<string, unknown> = {};
    for (let level = 0; level < 50; level += 1) value = { child: value };
    expect(check(value)).toEqual([]);
    expect(check({ child: { child: 3 } })).toEqual(['child/child must be object, got an integer']);
  });

  it('counts characters as code points, as the interpreter does', () => {
    const check = compileJsonSchema({ type: 'string', minLength: 2, maxLength: 2 });
    expect(check('😀😀')).toEqual([]);
    expect(check('\ud800\ud800')).toEqual([]);
    expect(check('😀')).toEqual(['the input must have at least 2 characters']);
  });
});
