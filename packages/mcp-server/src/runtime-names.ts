/**
 * IPython's own bindings in the user namespace, which no configured module alias may take. A copy of
 * fixtures/protocol/runtime-names.json, the one definition the worker's `runtime_names.py` follows too; the
 * package ships without the repository's fixtures, so settings.test.ts holds this copy equal to the file.
 */
export const IPYTHON_RUNTIME_NAMES: readonly string[] = Object.freeze(['In', 'Out', 'get_ipython', 'exit', 'quit', 'open']);
