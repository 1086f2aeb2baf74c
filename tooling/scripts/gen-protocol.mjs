#!/usr/bin/env node
// Writes the files generated from the shared protocol definitions (run after editing either source):
//   fixtures/protocol/constants.json (+ error-codes.json's retryable set, runtime-names.json's names)
//       -> packages/protocol/src/constants.ts, python/ipython_mcp_worker/constants.py
//   packages/protocol/src/operations.ts (the zod catalogue; needs `pnpm exec turbo run build` first)
//       -> fixtures/protocol/operations.schema.json
// `--check` writes nothing and exits 1 when a generated file is stale. Tests check the same
// (packages/protocol/src/operations.test.ts, python/tests/test_operations_contract.py).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path) => readFileSync(root + path, 'utf8');

/** The generated sources, by path, from the fixtures alone (no build needed). */
export function constantSources() {
  const { constants } = JSON.parse(read('fixtures/protocol/constants.json'));
  const retryable = JSON.parse(read('fixtures/protocol/error-codes.json')).retryable;
  const runtimeNames = JSON.parse(read('fixtures/protocol/runtime-names.json')).names;
  const all = {
    ...constants,
    RETRYABLE_ERROR_CODE_LIST: { value: retryable, doc: 'Codes whose operation never ran, so the caller may simply try again (error-codes.json).' },
    RUNTIME_NAME_LIST: { value: runtimeNames, doc: "IPython's own bindings in the user namespace (runtime-names.json)." },
  };
  const banner = 'Generated from fixtures/protocol/constants.json by tooling/scripts/gen-protocol.mjs: do not edit.';
  const ts = [`// ${banner}`, ''];
  const py = [`"""${banner}"""`, '', 'from __future__ import annotations', ''];
  for (const [name, { value, doc }] of Object.entries(all)) {
    const literal = JSON.stringify(value);
    ts.push(`/** ${doc} */`, `export const ${name} = ${literal}${Array.isArray(value) ? ' as const' : ''};`);
    py.push(`# ${doc}`, `${name} = ${Array.isArray(value) ? `(${value.map((item) => JSON.stringify(item)).join(', ')}${value.length === 1 ? ',' : ''})` : literal}`);
  }
  return {
    'packages/protocol/src/constants.ts': `${ts.join('\n')}\n`,
    'python/ipython_mcp_worker/constants.py': `${py.join('\n')}\n`,
  };
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
  update({ 'fixtures/protocol/operations.schema.json': await operationsSchemaSource() });
  if (check && stale > 0) {
    process.stderr.write('run: node tooling/scripts/gen-protocol.mjs (after pnpm exec turbo run build)\n');
    process.exit(1);
  }
}
