#!/usr/bin/env node
// Writes the files generated from the shared protocol definitions (run after editing any source):
//   fixtures/protocol/constants.json, error-codes.json (codes and the retryable set), runtime-names.json,
//   worker-limits.json (wire names, defaults, settings), operation-facts.json (each operation's facts)
//       -> packages/protocol/src/constants.ts, python/ipython_mcp_worker/protocol/constants.py,
//          packages/mcp-server/src/settings/worker-limit-settings.ts (each limit's setting: env, help, README summary, bounds)
//   fixtures/schema-fingerprint/error-codes.json (canonical JSON's error codes)
//       -> packages/schema-fingerprint/src/error-codes.ts, python/ipython_mcp_worker/protocol/constants.py
//   packages/protocol/src/operations.ts (the zod catalogue; needs `pnpm exec turbo run build` first)
//       -> fixtures/protocol/operations.schema.json
// `--check` writes nothing and exits 1 when a generated file is stale; `--no-schema` leaves out the schema (the
// one output that needs a build), so the protocol package's lint can run the check before anything is built.
// Tests check the same (packages/protocol/src/operations.test.ts, python/tests/test_operations_contract.py).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path) => readFileSync(root + path, 'utf8');

const PYTHON_CONSTANTS = 'python/ipython_mcp_worker/protocol/constants.py';
const FINGERPRINT_CODES = 'packages/schema-fingerprint/src/error-codes.ts';
const LIMIT_SETTINGS = 'packages/mcp-server/src/settings/worker-limit-settings.ts';

/** `max_text_chars` -> `maxTextChars`: a wire name as TypeScript spells the field. */
const camelCase = (name) => name.replace(/_([a-z])/g, (_match, letter) => letter.toUpperCase());

/** A JSON scalar (string, number, boolean) as a Python literal. */
const pythonLiteral = (value) => (value === true ? 'True' : value === false ? 'False' : JSON.stringify(value));

/** A JSON list as a Python tuple literal. */
const pythonTuple = (items) => `(${items.map((item) => JSON.stringify(item)).join(', ')}${items.length === 1 ? ',' : ''})`;

/** The generated sources, by path, from the fixtures alone (no build needed). */
export function constantSources() {
  const { constants } = JSON.parse(read('fixtures/protocol/constants.json'));
  const errorCodes = JSON.parse(read('fixtures/protocol/error-codes.json'));
  const unknownRetryable = errorCodes.retryable.filter((code) => !errorCodes.codes.includes(code));
  if (unknownRetryable.length > 0) throw new Error(`error-codes.json: retryable codes not in codes: ${unknownRetryable.join(', ')}`);
  const runtimeNames = JSON.parse(read('fixtures/protocol/runtime-names.json')).names;
  const { limits } = JSON.parse(read('fixtures/protocol/worker-limits.json'));
  for (const [name, { default: value, env, description, summary, minimum, maximum = Number.MAX_SAFE_INTEGER }] of Object.entries(limits)) {
    if (!/^[a-z][a-z0-9_]*$/.test(name) || !Number.isSafeInteger(value) || value <= 0) {
      throw new Error(`worker-limits.json: ${name} needs a snake_case name and a positive integer default`);
    }
    if (env !== `IPYTHON_MCP_${name.toUpperCase()}` || typeof description !== 'string' || typeof summary !== 'string') {
      throw new Error(`worker-limits.json: ${name} needs env IPYTHON_MCP_${name.toUpperCase()}, a description and a summary`);
    }
    if (![minimum, maximum].every((bound) => Number.isSafeInteger(bound) && bound > 0) || !(minimum <= value && value <= maximum)) {
      throw new Error(`worker-limits.json: ${name} needs positive integer bounds around its default`);
    }
  }
  const { facts, operations } = readOperationFacts();
  const canonicalJsonCodes = readCanonicalJsonErrorCodes();
  const all = {
    ...constants,
    ERROR_CODE_LIST: { value: errorCodes.codes, doc: 'Every stable error code the parent and the worker use (error-codes.json).' },
    RETRYABLE_ERROR_CODE_LIST: { value: errorCodes.retryable, doc: 'Codes whose operation never ran, so the caller may simply try again (error-codes.json).' },
    RUNTIME_NAME_LIST: { value: runtimeNames, doc: "IPython's own bindings in the user namespace (runtime-names.json)." },
    CANONICAL_JSON_ERROR_CODE_LIST: {
      value: canonicalJsonCodes,
      doc: 'Why a value has no canonical JSON form, one code per reason (fixtures/schema-fingerprint/error-codes.json).',
    },
  };
  const banner = 'Generated from fixtures/protocol/*.json by tooling/scripts/gen-protocol.mjs: do not edit.';
  const ts = [`// ${banner}`, ''];
  const py = [`"""${banner}"""`, '', 'from __future__ import annotations', '', 'from collections.abc import Mapping', 'from dataclasses import dataclass', 'from types import MappingProxyType', 'from typing import Literal', ''];
  for (const [name, { value, doc }] of Object.entries(all)) {
    const literal = JSON.stringify(value);
    ts.push(`/** ${doc} */`, `export const ${name} = ${literal}${Array.isArray(value) ? ' as const' : ''};`);
    py.push(`# ${doc}`, `${name} = ${Array.isArray(value) ? pythonTuple(value) : literal}`);
  }
  const entries = Object.entries(limits);
  ts.push(
    '',
    '/** The limits the worker enforces, as the parent chooses them; sent in the `configure` message (worker-limits.json). */',
    'export interface WorkerLimits {',
    ...entries.flatMap(([name, { doc }]) => [`  /** ${doc} */`, `  ${camelCase(name)}: number;`]),
    '}',
    '/** The default worker limits (the server\'s settings default to these too). */',
    'export const DEFAULT_WORKER_LIMITS: Readonly<WorkerLimits> = Object.freeze({',
    ...entries.map(([name, { default: value }]) => `  ${camelCase(name)}: ${value},`),
    '});',
    '/** Each worker limit\'s name in the `configure` message. */',
    'export const WORKER_LIMIT_WIRE_NAMES: Readonly<Record<keyof WorkerLimits, string>> = Object.freeze({',
    ...entries.map(([name]) => `  ${camelCase(name)}: ${JSON.stringify(name)},`),
    '});',
  );
  py.push(
    '',
    '',
    '@dataclass(frozen=True)',
    'class WorkerLimitDefaults:',
    '    """The limits the worker enforces, by wire name, at their defaults (worker-limits.json)."""',
    '',
    ...entries.flatMap(([name, { default: value, doc }]) => [`    # ${doc}`, `    ${name}: int = ${value}`]),
    '',
    '',
    '# Each limit\'s smallest and largest value (None: no bound but the int itself), by wire name (worker-limits.json).',
    'WORKER_LIMIT_BOUNDS: Mapping[str, tuple[int, int | None]] = MappingProxyType({',
    ...entries.map(([name, { minimum, maximum }]) => `    ${JSON.stringify(name)}: (${minimum}, ${maximum ?? 'None'}),`),
    '})',
  );
  const limitSettings = [
    '// Generated from fixtures/protocol/worker-limits.json by tooling/scripts/gen-protocol.mjs: do not edit.',
    "import type { WorkerLimits } from '@ipython-mcp/protocol';",
    '',
    '/** One worker limit as a server setting (worker-limits.json); settings.ts makes each a `count` setting. */',
    'export interface WorkerLimitSetting {',
    '  readonly key: keyof WorkerLimits;',
    '  /** The environment variable; the flag is its suffix in lower-case kebab form. */',
    '  readonly env: string;',
    '  /** The sentence `--help` prints. */',
    '  readonly description: string;',
    '  /** The README table\'s "meaning" cell. */',
    '  readonly summary: string;',
    '  /** The smallest value the setting (and the worker) accepts. */',
    '  readonly minimum: number;',
    '  /** The largest value the setting (and the worker) accepts. */',
    '  readonly maximum: number;',
    '}',
    '',
    '/** Every worker limit\'s setting, in worker-limits.json order. */',
    'export const WORKER_LIMIT_SETTINGS: readonly WorkerLimitSetting[] = [',
    ...entries.flatMap(([name, { env, description, summary, minimum, maximum = Number.MAX_SAFE_INTEGER }]) => [
      '  {',
      `    key: ${JSON.stringify(camelCase(name))},`,
      `    env: ${JSON.stringify(env)},`,
      `    description: ${JSON.stringify(description)},`,
      `    summary: ${JSON.stringify(summary)},`,
      `    minimum: ${minimum},`,
      `    maximum: ${maximum === Number.MAX_SAFE_INTEGER ? 'Number.MAX_SAFE_INTEGER' : maximum},`,
      '  },',
    ]),
    '];',
  ];
  const factEntries = Object.entries(facts);
  const isFlag = ({ values }) => values.every((value) => typeof value === 'boolean');
  ts.push(
    '',
    '/** What one worker operation does beyond its params and result (operation-facts.json). */',
    'export interface OperationFacts {',
    ...factEntries.flatMap(([name, fact]) => [
      `  /** ${fact.doc} */`,
      `  readonly ${camelCase(name)}: ${isFlag(fact) ? 'boolean' : fact.values.map((value) => JSON.stringify(value)).join(' | ')};`,
    ]),
    '}',
    "/** Every operation's facts, by operation name (operations.ts holds its keys equal to the catalogue's). */",
    'export const OPERATION_FACT_TABLE = {',
    ...Object.entries(operations).map(
      ([op, values]) => `  ${op}: { ${factEntries.map(([name]) => `${camelCase(name)}: ${JSON.stringify(values[name])}`).join(', ')} },`,
    ),
    '} as const satisfies Record<string, OperationFacts>;',
  );
  py.push(
    '',
    '',
    '@dataclass(frozen=True)',
    'class OperationFacts:',
    '    """What one worker operation does beyond its params and result (operation-facts.json)."""',
    '',
    ...factEntries.flatMap(([name, fact]) => [
      `    # ${fact.doc}`,
      `    ${name}: ${isFlag(fact) ? 'bool' : `Literal[${fact.values.map((value) => JSON.stringify(value)).join(', ')}]`}`,
    ]),
    '',
    '',
    "# Every operation's facts, by operation name; the worker's handler table serves exactly these operations.",
    'OPERATION_FACTS: Mapping[str, OperationFacts] = MappingProxyType({',
    ...Object.entries(operations).map(
      ([op, values]) =>
        `    ${JSON.stringify(op)}: OperationFacts(${factEntries.map(([name]) => `${name}=${pythonLiteral(values[name])}`).join(', ')}),`,
    ),
    '})',
  );
  const fingerprintTs = [
    '// Generated from fixtures/schema-fingerprint/error-codes.json by tooling/scripts/gen-protocol.mjs: do not edit.',
    '',
    '/** Every {@link CanonicalJsonError.code}, in a stable order; the Python worker reads the same list. */',
    `export const CANONICAL_JSON_ERROR_CODES = ${JSON.stringify(canonicalJsonCodes)} as const;`,
  ];
  return {
    'packages/protocol/src/constants.ts': `${ts.join('\n')}\n`,
    [PYTHON_CONSTANTS]: `${py.join('\n')}\n`,
    [FINGERPRINT_CODES]: `${fingerprintTs.join('\n')}\n`,
    [LIMIT_SETTINGS]: `${limitSettings.join('\n')}\n`,
  };
}

/** operation-facts.json, checked: every operation states every fact, each with a value the fact allows. */
function readOperationFacts() {
  const { facts, operations } = JSON.parse(read('fixtures/protocol/operation-facts.json'));
  for (const [op, values] of Object.entries(operations)) {
    if (!/^[a-z][a-z0-9_]*$/.test(op)) throw new Error(`operation-facts.json: ${op} is not an operation name`);
    const unknown = Object.keys(values).filter((name) => !Object.hasOwn(facts, name));
    if (unknown.length > 0) throw new Error(`operation-facts.json: ${op} has unknown facts: ${unknown.join(', ')}`);
    for (const [name, { values: allowed }] of Object.entries(facts)) {
      if (!allowed.includes(values[name])) throw new Error(`operation-facts.json: ${op}.${name} must be one of ${JSON.stringify(allowed)}`);
    }
    // The parent reconciles by the worker's revision, which only a reconciling worker keeps current.
    if (values.catalog_effect !== 'none' && values.worker_reconciles !== true) {
      throw new Error(`operation-facts.json: ${op} may change the catalog, so the worker must reconcile after it`);
    }
  }
  return { facts, operations };
}

/** fixtures/schema-fingerprint/error-codes.json's codes, checked. */
function readCanonicalJsonErrorCodes() {
  const { codes } = JSON.parse(read('fixtures/schema-fingerprint/error-codes.json'));
  const valid = Array.isArray(codes) && codes.length > 0 && codes.every((code) => /^[a-z][a-z_]*$/.test(code));
  if (!valid || new Set(codes).size !== codes.length) {
    throw new Error('fixtures/schema-fingerprint/error-codes.json: codes must be distinct snake_case strings');
  }
  return codes;
}

/** fixtures/protocol/operations.schema.json's text, from the built protocol package. */
export async function operationsSchemaSource() {
  const protocol = await import(pathToFileURL(root + 'packages/protocol/dist/index.js').href);
  return `${JSON.stringify(protocol.operationsJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const check = process.argv.includes('--check');
  let stale = 0;
  const update = (sources) => {
    for (const [path, text] of Object.entries(sources)) {
      let current = '';
      try {
        current = read(path);
      } catch {}
      if (current === text) continue;
      stale += 1;
      if (check) process.stderr.write(`stale: ${path}\n`);
      else {
        writeFileSync(root + path, text);
        process.stderr.write(`wrote ${path}\n`);
      }
    }
  };
  // Constants first: the protocol package is built from them, and the schema from the built package.
  update(constantSources());
  if (!process.argv.includes('--no-schema')) update({ 'fixtures/protocol/operations.schema.json': await operationsSchemaSource() });
  if (check && stale > 0) {
    process.stderr.write('run: node tooling/scripts/gen-protocol.mjs (after pnpm exec turbo run build)\n');
    process.exit(1);
  }
}
