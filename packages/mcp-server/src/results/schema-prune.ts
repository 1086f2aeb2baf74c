/**
 * The one pruning of the JSON Schemas the server publishes (input schemas in server.ts, output schemas in
 * output-schemas.ts): every tools/list carries them, so what tells a reader nothing goes. Always dropped: `$schema`,
 * `propertyNames: {type: string}` (JSON keys are strings) and `additionalProperties: {}` (the default). Each caller
 * adds the keys only its kind of schema can lose, and may rewrite each node after its children were pruned.
 */

type Json = Record<string, unknown>;

/** What one caller prunes beyond the common keys. */
export interface PruneRules {
  /** True for a key (with its value) to leave out. */
  drop?: (key: string, value: unknown) => boolean;
  /** Rewrites a node once its children were pruned (e.g. a nullable `anyOf` as a type list). */
  rewrite?: (node: Json) => Json;
}

function alwaysDropped(key: string, value: unknown): boolean {
  if (key === '$schema') return true;
  if (key === 'propertyNames') return JSON.stringify(value) === '{"type":"string"}';
  if (key === 'additionalProperties') return JSON.stringify(value) === '{}';
  return false;
}

/** A pruned copy of `node` (a JSON Schema or any part of one). */
export function pruneSchema(node: unknown, rules: PruneRules = {}): unknown {
  if (Array.isArray(node)) return node.map((item) => pruneSchema(item, rules));
  if (node === null || typeof node !== 'object') return node;
  const copy: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (alwaysDropped(key, value) || rules.drop?.(key, value) === true) continue;
    copy[key] = pruneSchema(value, rules);
  }
  return rules.rewrite ? rules.rewrite(copy) : copy;
}
