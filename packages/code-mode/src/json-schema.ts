/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A JSON Schema object, as tools declare their input. Only the keywords Code Mode reads are typed; any other
 * keyword is allowed and ignored.
 */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  title?: string;
  properties?: Record<string, JsonSchema | boolean>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema | boolean | (JsonSchema | boolean)[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  anyOf?: (JsonSchema | boolean)[];
  oneOf?: (JsonSchema | boolean)[];
  allOf?: (JsonSchema | boolean)[];
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  $ref?: string;
  [keyword: string]: unknown;
}

/** Problems reported at most per validation. */
export const MAX_PROBLEMS = 5;

/**
 * Checks `value` against the common subset of JSON Schema: `type`, `enum`, `const`, `required`, `properties`,
 * `additionalProperties`, `items`, `anyOf`/`oneOf`/`allOf`, numeric and length bounds, and `pattern`. Keywords
 * outside it (`$ref`, `format`, ...) pass. Returns at most five problems, each with the path it is about; an
 * empty list means valid. Tools that need full JSON Schema bring their own `validate`.
 */
export function validateJsonSchema(schema: JsonSchema | boolean, value: unknown): string[] {
  const problems: string[] = [];
  check(schema, value, '', problems);
  return problems.slice(0, MAX_PROBLEMS);
}

/** The interpreter: checks `value` against `schema`, appending problems (the compiled form's fallback). */
export function check(schema: JsonSchema | boolean, value: unknown, path: string, problems: string[]): void {
  if (problems.length >= MAX_PROBLEMS) return;
  if (schema === true) return;
  if (schema === false) {
    problems.push(`${where(path)} is not allowed`);
    return;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const allowed = schema.nullable === true ? [...types, 'null'] : types;
    if (!allowed.some((type) => hasType(value, type))) {
      problems.push(`${where(path)} must be ${allowed.join(' or ')}, got ${describe(value)}`);
      return;
    }
  }
  if (schema.enum !== undefined && !schema.enum.some((option) => sameJson(option, value))) {
    problems.push(`${where(path)} must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ').slice(0, 200)}`);
  }
  if ('const' in schema && !sameJson(schema.const, value)) {
    problems.push(`${where(path)} must be ${JSON.stringify(schema.const)?.slice(0, 100) ?? 'undefined'}`);
  }
  if (typeof value === 'number') checkNumber(schema, value, path, problems);
  if (typeof value === 'string') checkString(schema, value, path, problems);
  if (Array.isArray(value)) checkArray(schema, value, path, problems);
  else if (isObject(value)) checkObject(schema, value, path, problems);
  for (const member of schema.allOf ?? []) check(member, value, path, problems);
  for (const [keyword, members] of [['anyOf', schema.anyOf], ['oneOf', schema.oneOf]] as const) {
    if (members === undefined || members.length === 0) continue;
    const matches = members.filter((member) => validateJsonSchema(member, value).length === 0).length;
    if (keyword === 'anyOf' ? matches === 0 : matches !== 1) {
      problems.push(`${where(path)} does not match ${keyword === 'anyOf' ? 'any' : 'exactly one'} of the allowed shapes`);
    }
  }
}

function checkNumber(schema: JsonSchema, value: number, path: string, problems: string[]): void {
  if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${where(path)} must be >= ${schema.minimum}`);
  if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${where(path)} must be <= ${schema.maximum}`);
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) problems.push(`${where(path)} must be > ${schema.exclusiveMinimum}`);
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) problems.push(`${where(path)} must be < ${schema.exclusiveMaximum}`);
}

function checkString(schema: JsonSchema, value: string, path: string, problems: string[]): void {
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength) problems.push(`${where(path)} must have at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined && length > schema.maxLength) problems.push(`${where(path)} must have at most ${schema.maxLength} characters`);
  if (schema.pattern !== undefined) {
    let pattern: RegExp | undefined;
    try {
      pattern = new RegExp(schema.pattern, 'u');
    } catch {
      pattern = undefined; // a pattern JavaScript cannot compile is not ours to enforce
    }
    if (pattern !== undefined && !pattern.test(value)) problems.push(`${where(path)} must match ${schema.pattern.slice(0, 100)}`);
  }
}

function checkArray(schema: JsonSchema, value: unknown[], path: string, problems: string[]): void {
  if (schema.minItems !== undefined && value.length < schema.minItems) problems.push(`${where(path)} must have at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined && value.length > schema.maxItems) problems.push(`${where(path)} must have at most ${schema.maxItems} items`);
  const items = schema.items;
  if (items === undefined) return;
  value.forEach((item, index) => {
    const itemSchema = Array.isArray(items) ? items[index] : items;
    if (itemSchema !== undefined) check(itemSchema, item, `${path}[${index}]`, problems);
  });
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, path: string, problems: string[]): void {
  for (const key of schema.required ?? []) {
    if (!(key in value)) problems.push(`${where(path)} is missing required property ${JSON.stringify(key)}`);
  }
  const properties = schema.properties ?? {};
  for (const [key, item] of Object.entries(value)) {
    // Own properties only: "constructor" or "__proto__" must not find Object.prototype's and pass as declared.
    const propertySchema = Object.hasOwn(properties, key) ? properties[key] : undefined;
    const child = `${path}/${key}`;
    if (propertySchema !== undefined) check(propertySchema, item, child, problems);
    else if (schema.additionalProperties === false) problems.push(`${where(path)} has unknown property ${JSON.stringify(key)}`);
    else if (isObject(schema.additionalProperties)) check(schema.additionalProperties as JsonSchema, item, child, problems);
  }
}

/** Shared with the compiled form (json-schema-compile.ts). */
export function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true;
  }
}

/** Shared with the compiled form (json-schema-compile.ts). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Shared with the compiled form (json-schema-compile.ts). */
export function sameJson(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  return JSON.stringify(left) === JSON.stringify(right);
}

/** Shared with the compiled form (json-schema-compile.ts). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number' && Number.isInteger(value)) return 'an integer';
  return `a ${typeof value}`;
}

/** Shared with the compiled form (json-schema-compile.ts). */
export function where(path: string): string {
  return path === '' ? 'the input' : path.replace(/^\//, '');
}
