import { OPERATION_FACTS, type CatalogEffect, type OperationName } from '@ipython-mcp/protocol';
import type { z } from 'zod';
import type { JournalPolicy } from '../resources/index.js';
import type { ResultRules } from '../results/index.js';

type Json = Record<string, unknown>;

export type { CatalogEffect };

/**
 * What a tool does to the dynamic tool catalog: its operation's fact in the protocol catalogue (`OPERATION_FACTS`),
 * which the worker acts on too. `changes` (registry operations: reconcile after every call), `may-change` (namespace
 * mutations can make registrations stale: reconcile when there are registrations and the worker's
 * `catalog_revision` moved, or when it sent none), `none` (never reconcile; runtime_status, which runs no operation).
 */
export function catalogEffectOf(tool: { readonly op: OperationName | null }): CatalogEffect {
  return tool.op === null ? 'none' : OPERATION_FACTS[tool.op].catalogEffect;
}


/**
 * One stable tool, whole: what tools/list publishes (name, title, annotations, description, input and output
 * schema), how its arguments are checked, what runs it, how its results are written (compaction, text, failure
 * fields) and what the journal records. What it does to the dynamic catalog is its operation's fact
 * ({@link catalogEffectOf}). The server, the result writer and the journal read this object; none of them switches
 * on a tool's name.
 */
export interface StableToolDefinition<Name extends string = string> extends ResultRules {
  readonly name: Name;
  readonly title: string;
  readonly description: string;
  /** MCP annotations: `readOnlyHint` (and `destructiveHint`, its opposite) and `openWorldHint`. */
  readonly annotations: { readonly readOnly: boolean; readonly openWorld?: true | undefined };
  readonly input: z.ZodObject;
  /**
   * The arguments as `input` returns them, for a well-formed call, checked by hand because it runs on every call;
   * `undefined` hands the arguments to `input`, which then accepts them or words the error. It accepts only what
   * `input` accepts and returns what `input` returns (stable-tools.test.ts holds them equal).
   */
  readonly plainInput?: ((args: Record<string, unknown>) => Record<string, unknown> | undefined) | undefined;
  /** Derived from the operations catalogue for a worker-backed tool (output-schemas.ts). */
  readonly outputSchema: Json;
  /** The handler: the worker operation the tool runs; `null` for runtime_status, which the server answers itself. */
  readonly op: OperationName | null;
  /** Takes the optional per-call deadline `timeout_seconds` (call-deadline.ts), bounded by the server's setting. */
  readonly takesDeadline?: true | undefined;
  /**
   * Takes the optional `detach_after_seconds` (detached-cells.ts): a call still running then answers with a handle
   * and goes on. Only a tool whose output schema has the running shape (`status: "running"`, `job`) may.
   */
  readonly detachable?: true | undefined;
  /** For a tool without an operation: what the server answers from (its runtime status, or its detached cells). */
  readonly answeredFrom?: 'status' | 'detached' | undefined;
  /** Dynamic tool names a successful result withdrew: the catalog forgets them (plain unknown tools, not stale). */
  readonly withdrawnTools?: ((result: Json) => string[]) | undefined;
  readonly journal: JournalPolicy;
}

/**
 * The stable tools, keyed by name, each key its definition's `name`. Checked at compile time: a definition without
 * a compaction, text rule, output schema or journal policy does not compile.
 */
export function defineStableTools<const Tools extends { readonly [Name in keyof Tools]: StableToolDefinition<Name & string> }>(tools: Tools): Tools {
  return tools;
}
