import { Ajv, type ValidateFunction } from 'ajv';
import type { ResultRules } from './result-rules.js';

type Json = Record<string, unknown>;

/**
 * Whether results are checked against their tool's output schema when the caller does not say: only when
 * `NODE_ENV` is `development` or `test` (vitest sets `test`, and the e2e harness passes its environment to the
 * server it starts). Not `NODE_ENV !== 'production'`: MCP clients launch the published binary with no `NODE_ENV`
 * at all, so that test would make every user's every call pay for a check the contract tests already hold.
 */
export function checksResultsByDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODE_ENV === 'development' || env.NODE_ENV === 'test';
}

/** A server bug: a result that does not match the output schema its tool publishes. */
export class ResultSchemaError extends Error {
  override readonly name = 'ResultSchemaError';
}

/**
 * Checks each result against its tool's published output schema, compiling each schema once (on the tool's first
 * result). Draft-07 with the SDK client's leniency (`strict: false`), as an MCP client checks `structuredContent`.
 */
export class ResultCheck {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new WeakMap<Json, ValidateFunction>();

  /** Throws {@link ResultSchemaError} when `structured` does not match `rules.outputSchema` (when it has one). */
  check(rules: ResultRules, structured: Json): void {
    const schema = rules.outputSchema;
    if (schema === undefined) return;
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    if (validate(structured)) return;
    const problems = (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '(result)'} ${error.message ?? 'is invalid'}`);
    throw new ResultSchemaError(`${rules.name} wrote a result its output schema refuses: ${problems.join('; ')}`);
  }
}
