import { MAX_PROBLEMS, check, describe, hasType, isObject, sameJson, where, type JsonSchema } from './json-schema.js';

/** Checks one value at `path`, appending problems. */
type Checker = (value: unknown, path: string, problems: string[]) => void;

/** A compiled validator: the problems of `value` (at most five), an empty list when it is valid. */
export type CompiledSchema = (value: unknown) => string[];

/**
 * Compiles `schema` once into the validator {@link validateJsonSchema} would be: the same problems, in the same
 * order, with the same wording, for every value. Code Mode compiles each tool's input schema when the tool is
 * defined, so a nested call does not walk the schema's keywords (nor build their arrays and patterns) again.
 * A schema node whose keywords are not of the types JSON Schema gives them is left to the interpreter as it is,
 * so even a malformed schema behaves as the interpreter says (and never fails to compile).
 */
export function compileJsonSchema(schema: JsonSchema | boolean): CompiledSchema {
  return compileAt(schema, 0);
}

/** Schema levels compiled at most; deeper (or a schema that contains itself) is left to the interpreter. */
const MAX_COMPILE_DEPTH = 32;

function compileAt(schema: JsonSchema | boolean, depth: number): CompiledSchema {
  const checker = compileNode(schema, depth);
  return (value) => {
    const problems: string[] = [];
    checker(value, '', problems);
    return problems.length > MAX_PROBLEMS ? problems.slice(0, MAX_PROBLEMS) : problems;
  };
}

const pass: Checker = () => undefined;

function compileNode(schema: JsonSchema | boolean, depth: number): Checker {
  if (schema === true) return pass;
  if (schema === false) {
    return (_value, path, problems) => {
      if (problems.length < MAX_PROBLEMS) problems.push(`${where(path)} is not allowed`);
    };
  }
  if (depth >= MAX_COMPILE_DEPTH || !wellFormed(schema)) return (value, path, problems) => check(schema, value, path, problems);
  const typeCheck = compileType(schema);
  const steps: Checker[] = [];
  const options = schema.enum;
  if (options !== undefined) {
    steps.push((value, path, problems) => {
      if (!options.some((option) => sameJson(option, value))) {
        problems.push(`${where(path)} must be one of ${options.map((option) => JSON.stringify(option)).join(', ').slice(0, 200)}`);
      }
    });
  }
  if ('const' in schema) {
    const constant = schema.const;
    steps.push((value, path, problems) => {
      if (!sameJson(constant, value)) problems.push(`${where(path)} must be ${JSON.stringify(constant)?.slice(0, 100) ?? 'undefined'}`);
    });
  }
  const number = compileNumber(schema);
  if (number !== undefined) steps.push(number);
  const string = compileString(schema);
  if (string !== undefined) steps.push(string);
  const array = compileArray(schema, depth);
  if (array !== undefined) steps.push(array);
  const object = compileObject(schema, depth);
  if (object !== undefined) steps.push(object);
  for (const member of schema.allOf ?? []) steps.push(compileNode(member, depth + 1));
  for (const [keyword, members] of [['anyOf', schema.anyOf], ['oneOf', schema.oneOf]] as const) {
    if (members === undefined || members.length === 0) continue;
    const compiled = members.map((member) => compileAt(member, depth + 1));
    const any = keyword === 'anyOf';
    steps.push((value, path, problems) => {
      let matches = 0;
      for (const member of compiled) if (member(value).length === 0) matches += 1;
      if (any ? matches === 0 : matches !== 1) {
        problems.push(`${where(path)} does not match ${any ? 'any' : 'exactly one'} of the allowed shapes`);
      }
    });
  }
  return (value, path, problems) => {
    if (problems.length >= MAX_PROBLEMS) return;
    if (typeCheck !== undefined && !typeCheck(value, path, problems)) return;
    for (const step of steps) step(value, path, problems);
  };
}

/** Whether every keyword the checker reads has the type JSON Schema gives it. */
function wellFormed(schema: JsonSchema): boolean {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return false;
  const { type, enum: options, required, properties, items, pattern } = schema;
  if (type !== undefined && typeof type !== 'string' && !(Array.isArray(type) && type.every((item) => typeof item === 'string'))) return false;
  if (options !== undefined && !Array.isArray(options)) return false;
  if (required !== undefined && !(Array.isArray(required) && required.every((item) => typeof item === 'string'))) return false;
  if (properties !== undefined && !(isObject(properties) && Object.values(properties).every(isSchema))) return false;
  if (items !== undefined && !isSchema(items) && !(Array.isArray(items) && items.every(isSchema))) return false;
  if (pattern !== undefined && typeof pattern !== 'string') return false;
  for (const keyword of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems'] as const) {
    if (schema[keyword] !== undefined && typeof schema[keyword] !== 'number') return false;
  }
  for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
    const members = schema[keyword];
    if (members !== undefined && !(Array.isArray(members) && members.every(isSchema))) return false;
  }
  return true;
}

function isSchema(value: unknown): value is JsonSchema | boolean {
  return typeof value === 'boolean' || isObject(value);
}

/** The `type` (and `nullable`) check: false when it failed, after recording the problem. */
function compileType(schema: JsonSchema): ((value: unknown, path: string, problems: string[]) => boolean) | undefined {
  if (schema.type === undefined) return undefined;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const allowed = schema.nullable === true ? [...types, 'null'] : types;
  // hasType passes any value for a type name it does not know.
  if (allowed.some((type) => !KNOWN_TYPES.has(type))) return undefined;
  const label = allowed.join(' or ');
  const single = allowed.length === 1 ? allowed[0] : undefined;
  return (value, path, problems) => {
    if (single !== undefined ? hasType(value, single) : allowed.some((type) => hasType(value, type))) return true;
    problems.push(`${where(path)} must be ${label}, got ${describe(value)}`);
    return false;
  };
}

const KNOWN_TYPES = new Set(['null', 'boolean', 'integer', 'number', 'string', 'array', 'object']);

function compileNumber(schema: JsonSchema): Checker | undefined {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  if (minimum === undefined && maximum === undefined && exclusiveMinimum === undefined && exclusiveMaximum === undefined) return undefined;
  return (value, path, problems) => {
    if (typeof value !== 'number') return;
    if (minimum !== undefined && value < minimum) problems.push(`${where(path)} must be >= ${minimum}`);
    if (maximum !== undefined && value > maximum) problems.push(`${where(path)} must be <= ${maximum}`);
    if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) problems.push(`${where(path)} must be > ${exclusiveMinimum}`);
    if (exclusiveMaximum !== undefined && value >= exclusiveMaximum) problems.push(`${where(path)} must be < ${exclusiveMaximum}`);
  };
}

function compileString(schema: JsonSchema): Checker | undefined {
  const { minLength, maxLength, pattern: source } = schema;
  if (minLength === undefined && maxLength === undefined && source === undefined) return undefined;
  let pattern: RegExp | undefined;
  if (source !== undefined) {
    try {
      pattern = new RegExp(source, 'u');
    } catch {
      pattern = undefined; // a pattern JavaScript cannot compile is not ours to enforce
    }
  }
  return (value, path, problems) => {
    if (typeof value !== 'string') return;
    if (minLength !== undefined || maxLength !== undefined) {
      const length = codePoints(value);
      if (minLength !== undefined && length < minLength) problems.push(`${where(path)} must have at least ${minLength} characters`);
      if (maxLength !== undefined && length > maxLength) problems.push(`${where(path)} must have at most ${maxLength} characters`);
    }
    if (source !== undefined && pattern !== undefined && !pattern.test(value)) problems.push(`${where(path)} must match ${source.slice(0, 100)}`);
  };
}

/** Characters as JSON Schema counts them (code points: a lone surrogate is one), without building an array. */
function codePoints(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count -= 1;
        index += 1;
      }
    }
  }
  return count;
}

function compileArray(schema: JsonSchema, depth: number): Checker | undefined {
  const { minItems, maxItems, items } = schema;
  if (minItems === undefined && maxItems === undefined && items === undefined) return undefined;
  const tuple = Array.isArray(items) ? items.map((item) => compileNode(item, depth + 1)) : undefined;
  const every = items !== undefined && !Array.isArray(items) ? compileNode(items, depth + 1) : undefined;
  return (value, path, problems) => {
    if (!Array.isArray(value)) return;
    if (minItems !== undefined && value.length < minItems) problems.push(`${where(path)} must have at least ${minItems} items`);
    if (maxItems !== undefined && value.length > maxItems) problems.push(`${where(path)} must have at most ${maxItems} items`);
    const count = tuple !== undefined ? Math.min(tuple.length, value.length) : every !== undefined ? value.length : 0;
    for (let index = 0; index < count; index += 1) {
      if (!(index in value)) continue; // a hole, as forEach skips it
      const checker = tuple !== undefined ? tuple[index] : every;
      checker?.(value[index], `${path}[${index}]`, problems);
    }
  };
}

function compileObject(schema: JsonSchema, depth: number): Checker | undefined {
  const { required, properties, additionalProperties: extra } = schema;
  const closed = extra === false;
  const extraChecker = isObject(extra) ? compileNode(extra as JsonSchema, depth + 1) : undefined;
  if (required === undefined && properties === undefined && !closed && extraChecker === undefined) return undefined;
  const declared = new Map(Object.entries(properties ?? {}).map(([key, member]) => [key, compileNode(member, depth + 1)]));
  const needed = required ?? [];
  return (value, path, problems) => {
    if (!isObject(value)) return;
    for (const key of needed) {
      if (!(key in value)) problems.push(`${where(path)} is missing required property ${JSON.stringify(key)}`);
    }
    for (const key of Object.keys(value)) {
      const checker = declared.get(key);
      if (checker !== undefined) checker(value[key], `${path}/${key}`, problems);
      else if (closed) problems.push(`${where(path)} has unknown property ${JSON.stringify(key)}`);
      else if (extraChecker !== undefined) extraChecker(value[key], `${path}/${key}`, problems);
    }
  };
}
