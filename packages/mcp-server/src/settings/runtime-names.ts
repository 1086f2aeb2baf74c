import { RUNTIME_NAME_LIST } from '@ipython-mcp/protocol';

/**
 * IPython's own bindings in the user namespace, which no configured module alias may take. Generated into
 * `@ipython-mcp/protocol` from fixtures/protocol/runtime-names.json (tooling/scripts/gen-protocol.mjs), the one
 * definition the worker's `runtime_names.py` follows too; settings.test.ts holds this list equal to the file.
 */
export const IPYTHON_RUNTIME_NAMES: readonly string[] = Object.freeze([...RUNTIME_NAME_LIST]);
