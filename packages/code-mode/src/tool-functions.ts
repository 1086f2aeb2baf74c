import type { OperationParams } from '@ipython-mcp/protocol';
import { pythonLiteral } from '@ipython-mcp/session-journal';
import type { ToolAnnotations } from './consent.js';
import { InvalidCodeModeOptionsError } from './errors.js';
import type { JsonSchema, JsonValue } from './json-schema.js';
import { assignPythonNames } from './python-names.js';

/** What a tool's `execute` learns about the nested call it serves. */
export interface NestedCallContext {
  /** Unique per nested call: the run_code call's id, a colon, and the call's sequence number. */
  toolCallId: string;
  /** The Python function the code called. */
  functionName: string;
  /** Aborts when the run_code call is cancelled. */
  signal: AbortSignal | undefined;
  /** Whatever the caller passed to `runCode` as `context` (the framework's own call options). */
  context: unknown;
}

/** The outcome of a tool's own input validation. */
export type ToolInputValidation = { success: true; value: unknown } | { success: false; message: string };

/**
 * A tool as Code Mode sees it: a name, a description, a JSON Schema for its input and an `execute`. Frameworks
 * adapt their tools to this shape; plain tools can be written in it directly.
 */
export interface ToolDefinition {
  /** The tool's name; renamed for Python when it is not a usable identifier. */
  name: string;
  /** The docstring; its first sentence is the summary run_code's description shows (help() shows all of it). */
  description?: string | undefined;
  /**
   * The group the function is listed under in run_code's description (an MCP server's name, say); see
   * `CodeModeOptions.groups`. Unset: listed before any group.
   */
  group?: string | undefined;
  /** JSON Schema of the input object: its properties become keyword-only parameters. */
  inputSchema: JsonSchema;
  /** JSON Schema of the result, when known: shown as the return annotation. */
  outputSchema?: JsonSchema | undefined;
  /**
   * What the tool declares about its effects (an MCP tool's `annotations`): the consent gate's default policy
   * reads them (see `CodeModeOptions.consent`).
   */
  annotations?: ToolAnnotations | undefined;
  /**
   * The tool's own name where the function was renamed for its group (an MCP tool `get-weather` of server `a` as
   * `a_get_weather`): consent settings and questions use it. Default: `name`.
   */
  originalName?: string | undefined;
  /** Runs the tool. A throw becomes ToolCallError in the kernel, with the error's message. */
  execute: (input: never, context: NestedCallContext) => unknown;
  /**
   * Validates (and may transform) the input before `execute`. Unset, the input is checked against `inputSchema`
   * with {@link validateJsonSchema}'s subset, compiled once when the Code Mode is made (the schema is read then,
   * like the Python signature it also gives).
   */
  validate?: ((input: unknown) => ToolInputValidation | PromiseLike<ToolInputValidation>) | undefined;
}

/** One keyword-only parameter of a tool function. */
export interface ToolParameter {
  /** The Python name. */
  name: string;
  /** The input property it fills. */
  key: string;
  /** The Python annotation, as text. */
  annotation: string;
  required: boolean;
  /** The schema's default, shown in the signature (the tool applies it, not Code Mode). */
  default?: JsonValue;
  /** An optional parameter whose schema has no null: passing None leaves the property out. */
  omitNone: boolean;
  description?: string;
}

/** A tool as a Python function: its name, signature and docstring. */
export interface ToolFunction {
  definition: ToolDefinition;
  toolName: string;
  pythonName: string;
  /** Keyword-only parameters, or null for a free-form input (`**arguments`). */
  parameters: ToolParameter[] | null;
  /** `(*, city: str, days: int = 3) -> Any`. */
  signature: string;
  /** The docstring: description plus an Args section. */
  doc: string;
}

const MAX_ANNOTATION_DEPTH = 3;
const MAX_SCHEMA_NOTE_CHARS = 600;

/**
 * Turns tool definitions into Python functions: names made into identifiers with deterministic collision
 * handling ({@link assignPythonNames}), input properties into keyword-only parameters with annotations and
 * defaults, descriptions into docstrings. Throws {@link InvalidCodeModeOptionsError} on duplicate tool names.
 */
export function buildToolFunctions(definitions: readonly ToolDefinition[]): ToolFunction[] {
  const names = definitions.map((definition) => definition.name);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate !== undefined) {
    throw new InvalidCodeModeOptionsError(`two tools are named ${JSON.stringify(duplicate)}`, { option: 'tools' });
  }
  const pythonNames = assignPythonNames(names);
  return definitions.map((definition) => {
    const pythonName = pythonNames.get(definition.name) ?? definition.name;
    const parameters = toParameters(definition.inputSchema);
    const returns = definition.outputSchema === undefined ? 'Any' : annotationOf(definition.outputSchema, 0);
    return {
      definition,
      toolName: definition.name,
      pythonName,
      parameters,
      signature: renderSignature(parameters, returns),
      doc: renderDoc(definition, parameters, pythonName),
    };
  });
}

/** One tool as `define_tools` sends it (the operations catalogue's shape). */
type ToolSpec = OperationParams<'define_tools'>['tools'][number];

/** The `define_tools` wire spec of a function (docs/protocol.md). */
export function toolFunctionSpec(tool: ToolFunction): ToolSpec {
  return {
    python_name: tool.pythonName,
    tool_name: tool.toolName,
    doc: tool.doc,
    parameters:
      tool.parameters === null
        ? null
        : tool.parameters.map((parameter) => ({
            name: parameter.name,
            key: parameter.key,
            annotation: parameter.annotation,
            required: parameter.required,
            ...(parameter.required ? {} : { default: parameter.default ?? null }),
            omit_none: parameter.omitNone,
          })),
  };
}

/** The function as a Python stub with its docstring, for run_code's description. */
export function renderFunctionStub(tool: ToolFunction): string {
  const doc = tool.doc.replaceAll('\\', '\\\\').replaceAll('"""', '\\"\\"\\"');
  const body = doc.trim() === '' ? '    ...' : `    """${indent(doc, '    ').trimStart()}\n    """`;
  return `def ${tool.pythonName}${tool.signature}:\n${body}`;
}

function toParameters(schema: JsonSchema): ToolParameter[] | null {
  const properties = schema.properties;
  if (properties === undefined || typeof properties !== 'object') {
    return schema.additionalProperties === false ? [] : null;
  }
  const keys = Object.keys(properties);
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const pythonNames = assignPythonNames(keys, 'parameter');
  const parameters = keys.map((key): ToolParameter => {
    const property = properties[key] ?? true;
    const propertySchema: JsonSchema = typeof property === 'object' ? property : {};
    const isRequired = required.has(key);
    let annotation = annotationOf(propertySchema, 0);
    const parameter: ToolParameter = {
      name: pythonNames.get(key) ?? key,
      key,
      annotation,
      required: isRequired,
      omitNone: false,
    };
    if (typeof propertySchema.description === 'string') parameter.description = propertySchema.description;
    if (!isRequired) {
      if ('default' in propertySchema && isJson(propertySchema.default)) {
        parameter.default = propertySchema.default;
      } else {
        parameter.omitNone = !allowsNull(propertySchema);
        if (!/(^|\| )None$/.test(annotation) && annotation !== 'Any') annotation = `${annotation} | None`;
        parameter.annotation = annotation;
      }
    }
    return parameter;
  });
  // Required parameters first, each group in schema order: a person reads the must-haves first.
  return [...parameters.filter((parameter) => parameter.required), ...parameters.filter((parameter) => !parameter.required)];
}

function renderSignature(parameters: ToolParameter[] | null, returns: string): string {
  if (parameters === null) return `(**arguments: Any) -> ${returns}`;
  if (parameters.length === 0) return `() -> ${returns}`;
  const rendered = parameters.map((parameter) => {
    const head = `${parameter.name}: ${parameter.annotation}`;
    return parameter.required ? head : `${head} = ${pythonLiteral(parameter.default ?? null)}`;
  });
  return `(*, ${rendered.join(', ')}) -> ${returns}`;
}

function renderDoc(definition: ToolDefinition, parameters: ToolParameter[] | null, pythonName: string): string {
  const parts: string[] = [];
  const description = (definition.description ?? '').trim();
  if (description !== '') parts.push(description);
  if (pythonName !== definition.name) parts.push(`(The tool ${JSON.stringify(definition.name)}, renamed for Python.)`);
  const lines: string[] = [];
  for (const parameter of parameters ?? []) {
    const notes: string[] = [];
    if (parameter.description) notes.push(parameter.description.trim());
    if (parameter.name !== parameter.key) notes.push(`Sent as ${JSON.stringify(parameter.key)}.`);
    const schema = definition.inputSchema.properties?.[parameter.key];
    if (typeof schema === 'object' && isStructured(schema)) notes.push(`Schema: ${compactSchema(schema)}`);
    if (notes.length > 0) lines.push(`    ${parameter.name}: ${indent(notes.join(' '), '        ').trimStart()}`);
  }
  if (parameters === null && definition.inputSchema !== undefined && Object.keys(definition.inputSchema).length > 0) {
    lines.push(`    arguments: keyword arguments matching ${compactSchema(definition.inputSchema)}`);
  }
  if (lines.length > 0) parts.push(`Args:\n${lines.join('\n')}`);
  return parts.join('\n\n');
}

/** A Python annotation for a JSON Schema, at most {@link MAX_ANNOTATION_DEPTH} levels deep. */
export function annotationOf(schema: JsonSchema | boolean | undefined, depth: number): string {
  if (schema === undefined || typeof schema !== 'object' || depth > MAX_ANNOTATION_DEPTH) return 'Any';
  if ('const' in schema && isJson(schema.const)) return `Literal[${pythonLiteral(schema.const)}]`;
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(isJson)) {
    const literals = schema.enum.filter((value) => value !== null).map(pythonLiteral);
    const base = literals.length > 0 ? `Literal[${literals.join(', ')}]` : 'None';
    return schema.enum.includes(null) && literals.length > 0 ? `${base} | None` : base;
  }
  const members = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(members) && members.length > 0) {
    return union([...members.map((member) => annotationOf(member, depth + 1)), ...(schema.nullable === true ? ['None'] : [])]);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return annotationOf(schema.allOf[0], depth);
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length === 0) return schema.properties !== undefined ? 'dict[str, Any]' : 'Any';
  const rendered = types.map((type) => annotationOfType(schema, type, depth));
  if (schema.nullable === true) rendered.push('None');
  return union(rendered);
}

function annotationOfType(schema: JsonSchema, type: string, depth: number): string {
  switch (type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'null':
      return 'None';
    case 'array': {
      const items = schema.items;
      if (Array.isArray(items) || items === undefined || items === true) return 'list[Any]';
      return `list[${annotationOf(items, depth + 1)}]`;
    }
    case 'object': {
      const extra = schema.additionalProperties;
      if (typeof extra === 'object' && schema.properties === undefined) return `dict[str, ${annotationOf(extra, depth + 1)}]`;
      return 'dict[str, Any]';
    }
    default:
      return 'Any';
  }
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes('Any')) return 'Any';
  const withoutNone = unique.filter((part) => part !== 'None');
  return withoutNone.length < unique.length ? [...withoutNone, 'None'].join(' | ') : unique.join(' | ');
}

function allowsNull(schema: JsonSchema): boolean {
  if (schema.nullable === true || schema.type === 'null') return true;
  if (Array.isArray(schema.type) && schema.type.includes('null')) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  const members = schema.anyOf ?? schema.oneOf;
  return Array.isArray(members) && members.some((member) => typeof member === 'object' && allowsNull(member));
}

function isStructured(schema: JsonSchema): boolean {
  if (schema.properties !== undefined) return true;
  const items = schema.items;
  return typeof items === 'object' && !Array.isArray(items) && items.properties !== undefined;
}

function compactSchema(schema: JsonSchema): string {
  const text = JSON.stringify(schema, (key, value: unknown) => (key === 'description' || key === 'title' || key === '$schema' ? undefined : value));
  return text.length > MAX_SCHEMA_NOTE_CHARS ? `${text.slice(0, MAX_SCHEMA_NOTE_CHARS)}…` : text;
}

function isJson(value: unknown): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === 'object') return Object.values(value as object).every(isJson);
  return false;
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line, index) => (index === 0 || line === '' ? line : prefix + line))
    .join('\n');
}
